package frappetest

import "strings"

// User is a demo Frappe user with deterministic credentials.
type User struct {
	Email     string
	FullName  string
	APIKey    string // for "Authorization: token APIKey:APISecret" or Basic
	APISecret string
	Password  string // for POST /api/method/login
	// Role is the demo persona: "all-companies", "one-company",
	// "no-accounting" (only Sales User: the non-administrator of
	// registration tests), "field-limited" (an accounts user without the
	// Accounts Manager role, so fields at permlevel 1 are hidden),
	// "service", "order-viewer" (only Accounts User: reads sales orders and
	// customers, may not create or change them) or "administrator" (System
	// Manager: the ERP administrator who may register the site with
	// erpgate).
	Role string
	// Companies limits visible companies via a User Permission on Company;
	// nil means all companies.
	Companies []string
	// Accounting reports whether the user has accounting roles.
	Accounting bool
	// Roles are the Frappe roles granted to the user.
	Roles []string
}

var fullRoles = []string{"Accounts Manager", "Accounts User", "Sales User", "Sales Master Manager", "Purchase User", "Stock User", "Projects User"}

// SystemManager is the Frappe role of a site's administrators: it may
// create OAuth Clients and manage users and roles.
const SystemManager = "System Manager"

// Personas of the registration flow (see User.Role).
const (
	RoleAdministrator    = "administrator"
	RoleNonAdministrator = "no-accounting"
	// RoleOrderViewer reads sales orders, invoices and customers (Accounts
	// User) but may not create Sales Orders nor change Customers: writes
	// answer the ERP's 403.
	RoleOrderViewer = "order-viewer"
)

// demoUsers returns the fixed demo users (see the package documentation).
func demoUsers() []User {
	return []User{
		{Email: "accounts@demo.example", FullName: "Alex Accounts", APIKey: "demoacctkey01", APISecret: "demoacctsecret01",
			Password: "demo-accounts-pw", Role: "all-companies", Accounting: true, Roles: fullRoles},
		{Email: "nz.accounts@demo.example", FullName: "Ngaio Accounts", APIKey: "demonzkey0001", APISecret: "demonzsecret01",
			Password: "demo-nz-pw", Role: "one-company", Companies: []string{"Demo Holdings NZ Ltd"}, Accounting: true, Roles: fullRoles},
		{Email: "sales.viewer@demo.example", FullName: "Sam Sales", APIKey: "demosaleskey1", APISecret: "demosalessecret1",
			Password: "demo-sales-pw", Role: "no-accounting", Accounting: false, Roles: []string{"Sales User"}},
		{Email: "clerk@demo.example", FullName: "Casey Clerk", APIKey: "democlerkkey01", APISecret: "democlerksecret1",
			Password: "demo-clerk-pw", Role: "field-limited", Accounting: true, Roles: []string{"Accounts User", "Sales User", "Stock User"}},
		{Email: "mcp.bot@demo.example", FullName: "MCP Service Bot", APIKey: "demobotkey001", APISecret: "demobotsecret01",
			Password: "demo-bot-pw", Role: "service", Accounting: true, Roles: fullRoles},
		{Email: "orders.viewer@demo.example", FullName: "Olive Orders", APIKey: "demoviewkey01", APISecret: "demoviewsecret01",
			Password: "demo-viewer-pw", Role: RoleOrderViewer, Accounting: true, Roles: []string{"Accounts User"}},
		{Email: "it.admin@demo.example", FullName: "Ines Admin", APIKey: "demoadminkey1", APISecret: "demoadminsecret1",
			Password: "demo-admin-pw", Role: RoleAdministrator, Accounting: true, Roles: append([]string{SystemManager}, fullRoles...)},
	}
}

// hasRole reports whether u has any of roles.
func (u *User) hasRole(roles []string) bool {
	for _, want := range roles {
		if want == "All" {
			return true
		}
		for _, r := range u.Roles {
			if r == want {
				return true
			}
		}
	}
	return false
}

// IsSystemManager reports whether u has the System Manager role, the one
// that makes a Frappe user an administrator of the site.
func (u User) IsSystemManager() bool { return u.hasRole([]string{SystemManager}) }

// profileRoles is frappe.get_roles(user) as openid_profile reports it: the
// user's Has Role rows with the automatic roles All and Guest.
func (u *User) profileRoles() []string {
	return append([]string{"All", "Guest"}, u.Roles...)
}

// userList is the current users. The slice is replaced, never changed in
// place, so a caller may keep pointers into it.
func (s *Simulator) userList() []User {
	s.usersMu.RLock()
	defer s.usersMu.RUnlock()
	return s.users
}

// AddUser adds a user (or replaces the one with the same e-mail), as an
// administrator creating a User with roles and a password would. Roles
// decide what they may read, System Manager included.
func (s *Simulator) AddUser(u User) {
	u.Roles = append([]string(nil), u.Roles...)
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	next := make([]User, 0, len(s.users)+1)
	for _, old := range s.users {
		if !strings.EqualFold(old.Email, u.Email) {
			next = append(next, old)
		}
	}
	s.users = append(next, u)
}
