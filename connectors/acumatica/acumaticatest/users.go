package acumaticatest

import (
	"fmt"
	"slices"
	"strings"
)

// Roles of the demo users.
const (
	RoleFull     = "full"      // every form and inquiry
	RoleNoAR     = "no-ar"     // no Accounts Receivable forms (AR*) and no inquiries built on them
	RoleNoCanary = "no-canary" // everything except the MCPAccess canary inquiry
	RoleService  = "service"   // the dedicated API user of service connections: every form
	RoleNoAPI    = "no-api"    // a user without the API licence: token requests fail
	// RoleNonAdmin reads every form and inquiry like RoleFull but lacks
	// the Administrator role: the non-administrator of registration tests.
	RoleNonAdmin = "non-admin"
	// RoleSalesViewer reads every form and inquiry but has only View Only
	// (Select) rights on Sales Orders (SO301000): it may read orders, not
	// enter or change them.
	RoleSalesViewer = "sales-viewer"
)

// screenSalesOrders is the Sales Orders form.
const screenSalesOrders = "SO301000"

// AdministratorRole is Acumatica's built-in role with full access to every
// system object; the access restrictions of other roles do not apply to it.
const AdministratorRole = "Administrator"

// User is a demo user with deterministic credentials.
type User struct {
	Username  string
	Password  string
	Role      string
	FirstName string
	LastName  string
	Email     string
	// Roles are the user's Acumatica roles (Users, SM201010), as rows of
	// PX.SM.UsersInRoles.
	Roles []string
}

// IsAdministrator reports whether the user has the Administrator role.
func (u User) IsAdministrator() bool {
	for _, r := range u.Roles {
		if strings.EqualFold(r, AdministratorRole) {
			return true
		}
	}
	return false
}

// DisplayName is "First Last".
func (u User) DisplayName() string { return u.FirstName + " " + u.LastName }

func demoUsers() []User {
	return []User{
		{Username: "admin", Password: "admin-P@ss1", Role: RoleFull, FirstName: "Kimberly", LastName: "Gibbs", Email: "admin@demo-company.com",
			Roles: []string{AdministratorRole}},
		{Username: "ar.clerk", Password: "clerk-P@ss1", Role: RoleNoAR, FirstName: "Sam", LastName: "Clerk", Email: "ar.clerk@demo-company.com",
			Roles: []string{"Sales Clerk", "MCP Access"}},
		{Username: "no.canary", Password: "canary-P@ss1", Role: RoleNoCanary, FirstName: "Nora", LastName: "Canary", Email: "no.canary@demo-company.com",
			Roles: []string{"Accountant"}},
		{Username: "api.service", Password: "service-P@ss1", Role: RoleService, FirstName: "API", LastName: "Service", Email: "api.service@demo-company.com",
			Roles: []string{"API Integration"}},
		{Username: "no.api", Password: "noapi-P@ss1", Role: RoleNoAPI, FirstName: "Ned", LastName: "Nolicense", Email: "no.api@demo-company.com",
			Roles: []string{"Employee"}},
		{Username: "office.manager", Password: "office-P@ss1", Role: RoleNonAdmin, FirstName: "Olga", LastName: "Office", Email: "office.manager@demo-company.com",
			Roles: []string{"Accountant", "Sales Manager", "MCP Access"}},
		{Username: "sales.viewer", Password: "viewer-P@ss1", Role: RoleSalesViewer, FirstName: "Vera", LastName: "Viewer", Email: "sales.viewer@demo-company.com",
			Roles: []string{"Sales Viewer", "MCP Access"}},
	}
}

// canReadScreen reports whether the user's role grants a form.
func (u *User) canReadScreen(screen string) bool {
	if u.Role == RoleNoAR && strings.HasPrefix(screen, "AR") {
		return false
	}
	return true
}

// canWriteScreen reports whether the user's role may insert, update or
// delete records of a form (and run its actions): Acumatica's access
// levels above View Only. Reading it is canReadScreen.
func (u *User) canWriteScreen(screen string) bool {
	if u.Role == RoleSalesViewer && screen == screenSalesOrders {
		return false
	}
	return u.canReadScreen(screen)
}

// canReadInquiry reports whether the user may read an inquiry's data.
func (u *User) canReadInquiry(q *Inquiry) bool {
	switch q.Name {
	case CanaryInquiry:
		return u.Role != RoleNoCanary
	case AdminInquiry:
		return u.IsAdministrator()
	}
	for _, s := range q.Requires {
		if !u.canReadScreen(s) {
			return false
		}
	}
	return true
}

// hasAPILicence: users without it cannot obtain tokens.
func (u *User) hasAPILicence() bool { return u.Role != RoleNoAPI }

func (s *Simulator) userByName(name string) *User {
	for _, u := range s.userList() {
		if strings.EqualFold(u.Username, name) {
			return u
		}
	}
	return nil
}

// checkPassword returns the user when the credentials match.
func (s *Simulator) checkPassword(name, password string) *User {
	u := s.userByName(name)
	if u == nil || u.Password != password {
		return nil
	}
	return u
}

// Users returns the demo users and their credentials.
func (s *Simulator) Users() []User {
	users := s.userList()
	out := make([]User, len(users))
	for i, u := range users {
		out[i] = *u
		out[i].Roles = slices.Clone(u.Roles)
	}
	return out
}

// User returns the first demo user with the given role, or the zero User.
func (s *Simulator) User(role string) User {
	for _, u := range s.userList() {
		if u.Role == role {
			return *u
		}
	}
	return User{}
}

// SetInquiryAccess gives or withdraws one user's right to read an inquiry
// (by its entity-set name, such as CanaryInquiry), whatever their role
// says, from the next request on: tokens already issued are not touched,
// as in Acumatica, where access rights are read per request.
func (s *Simulator) SetInquiryAccess(username, inquiry string, allowed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inquiryAccess == nil {
		s.inquiryAccess = map[string]map[string]bool{}
	}
	user := strings.ToLower(username)
	if s.inquiryAccess[user] == nil {
		s.inquiryAccess[user] = map[string]bool{}
	}
	s.inquiryAccess[user][inquiry] = allowed
}

// ResetInquiryAccess drops every SetInquiryAccess change: the roles decide
// again.
func (s *Simulator) ResetInquiryAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inquiryAccess = nil
}

// SetViewOnly lowers one user's rights on a form (screen id, such as
// "AR303000") to View Only from the next request on, as an administrator
// does on Access Rights by Role: the user still reads the form's entity,
// but a PUT updating a record saves nothing (contract.go).
func (s *Simulator) SetViewOnly(username, screen string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.viewOnly == nil {
		s.viewOnly = map[string]map[string]bool{}
	}
	user := strings.ToLower(username)
	if s.viewOnly[user] == nil {
		s.viewOnly[user] = map[string]bool{}
	}
	s.viewOnly[user][screen] = true
}

// SetNoAccess withdraws one user's right to a form (screen id, such as
// "CM202000") from the next request on, as an administrator revoking it
// on Access Rights by Role does: reading the form's entity is then
// refused with 403 "You have insufficient rights to access the object".
func (s *Simulator) SetNoAccess(username, screen string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noAccess == nil {
		s.noAccess = map[string]map[string]bool{}
	}
	user := strings.ToLower(username)
	if s.noAccess[user] == nil {
		s.noAccess[user] = map[string]bool{}
	}
	s.noAccess[user][screen] = true
}

// canReadScreen is the user's right to a form: none after a run-time
// change (SetNoAccess), else their role's.
func (s *Simulator) canReadScreen(u *User, screen string) bool {
	s.mu.Lock()
	denied := s.noAccess[strings.ToLower(u.Username)][screen]
	s.mu.Unlock()
	return !denied && u.canReadScreen(screen)
}

// canWriteScreen is the user's right to save on a form: View Only by a
// run-time change (SetViewOnly) or by their role.
func (s *Simulator) canWriteScreen(u *User, screen string) bool {
	s.mu.Lock()
	viewOnly := s.viewOnly[strings.ToLower(u.Username)][screen]
	s.mu.Unlock()
	return !viewOnly && s.canReadScreen(u, screen) && u.canWriteScreen(screen)
}

// canReadInquiry is the user's right to an inquiry: a run-time change if
// there is one, else their role's.
func (s *Simulator) canReadInquiry(u *User, q *Inquiry) bool {
	s.mu.Lock()
	allowed, changed := s.inquiryAccess[strings.ToLower(u.Username)][q.Name]
	s.mu.Unlock()
	if changed {
		return allowed
	}
	return u.canReadInquiry(q)
}

// userList is the current users; the slice is replaced, never changed in
// place (AddUser), and each *User is the user's identity for the life of
// the simulator.
func (s *Simulator) userList() []*User {
	s.usersMu.RLock()
	defer s.usersMu.RUnlock()
	return s.users
}

func userPointers(users []User) []*User {
	out := make([]*User, len(users))
	for i := range users {
		u := users[i]
		out[i] = &u
	}
	return out
}

// AddUser adds a user, as an administrator creating one on Users
// (SM201010) with a password, roles (Administrator included) and the API
// licence would. Role is the persona that decides form and inquiry rights
// (RoleFull when empty). A user with the same name is an error.
func (s *Simulator) AddUser(u User) error {
	if u.Role == "" {
		u.Role = RoleFull
	}
	u.Roles = slices.Clone(u.Roles)
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	for _, old := range s.users {
		if strings.EqualFold(old.Username, u.Username) {
			return fmt.Errorf("acumaticatest: a user named %s exists", u.Username)
		}
	}
	s.users = append(slices.Clip(s.users), &u)
	return nil
}
