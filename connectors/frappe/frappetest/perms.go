package frappetest

// Role permissions: which roles may read a DocType. Doctypes not listed are
// readable by every logged-in user ("All").
var (
	accountsRoles = []string{"Accounts User", "Accounts Manager"}
	sellingRoles  = []string{"Sales User", "Accounts User", "Accounts Manager"}
	buyingRoles   = []string{"Purchase User", "Accounts User", "Accounts Manager"}
	stockRoles    = []string{"Stock User", "Sales User", "Purchase User", "Accounts User", "Accounts Manager"}
	projectRoles  = []string{"Projects User", "Accounts User", "Accounts Manager"}
)

var readRoles = map[string][]string{
	"Sales Invoice": accountsRoles, "Purchase Invoice": accountsRoles, "Payment Entry": accountsRoles,
	"GL Entry": accountsRoles, "Payment Ledger Entry": accountsRoles, "Account": accountsRoles,
	"Cost Center": accountsRoles, "Bank Transaction": accountsRoles, "Bank Account": accountsRoles,
	"Customer": sellingRoles, "Customer Group": sellingRoles, "Territory": sellingRoles, "Sales Order": sellingRoles,
	"Supplier": buyingRoles, "Purchase Order": buyingRoles,
	"Item": stockRoles, "Item Group": stockRoles, "Warehouse": stockRoles, "Bin": stockRoles,
	"Stock Ledger Entry": {"Stock User", "Accounts Manager"},
	"Project":            projectRoles,
	"Supplier Group":     buyingRoles,
	"Journal Entry":      accountsRoles, "Bank": accountsRoles, "Mode of Payment": accountsRoles,
	"Stock Entry": {"Stock User", "Accounts Manager"},
}

// ignoresUserPermissions are the Company links ERPNext v15 marks
// "ignore_user_permissions": 1, which User Permissions never filter
// (DatabaseQuery.add_user_permissions, has_user_permission).
var ignoresUserPermissions = map[string]bool{
	"Fiscal Year Company.company": true,
}

// canRead reports whether user (nil = Guest) has role permission to read
// doctype.
func canRead(u *User, doctype string) bool {
	if u == nil {
		return false
	}
	roles, ok := readRoles[doctype]
	if !ok {
		return true
	}
	return u.hasRole(roles)
}

// companyAllowed reports whether a Company link value passes the user's
// User Permission (empty values pass: apply_strict_user_permissions off).
func companyAllowed(u *User, company string) bool {
	if u == nil || u.Companies == nil || company == "" {
		return true
	}
	for _, c := range u.Companies {
		if collateCompare(c, company) == 0 {
			return true
		}
	}
	return false
}

// rowAllowed applies User Permissions to one document row of meta m, as
// DatabaseQuery.add_user_permissions does for lists.
func rowAllowed(u *User, m *DocMeta, d *Doc) bool {
	if u == nil || u.Companies == nil {
		return true
	}
	if m.Name == "Company" && !companyAllowed(u, d.Name) {
		return false
	}
	for _, f := range m.CompanyLinks() {
		if !companyAllowed(u, d.Str(f.Name)) {
			return false
		}
	}
	return true
}

// docAllowed is has_user_permission for GET: the document and every child
// row must pass the Company user permission.
func docAllowed(u *User, reg *registry, d *Doc) bool {
	m := reg.get(d.DocType)
	if !rowAllowed(u, m, d) {
		return false
	}
	for _, rows := range d.Children {
		for _, c := range rows {
			if cm := reg.get(c.DocType); cm != nil && !rowAllowed(u, cm, c) {
				return false
			}
		}
	}
	return true
}
