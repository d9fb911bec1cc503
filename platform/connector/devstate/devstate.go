// Package devstate is the format of .data/dev.json, which `erpgate dev`
// writes once every demo site is registered and which people, dev's tests
// and the end-to-end kit (platform/connector/connectortest/e2e) read.
package devstate

// State is .data/dev.json: everything needed to use the local gateway,
// and to register a second site by hand against the simulators.
type State struct {
	BaseURL     string `json:"base_url"`
	AdminToken  string `json:"admin_token"`
	DatabaseURL string `json:"database_url"`
	// MetricsURL is /metrics; on the main address it takes the admin
	// token, on ERPGATE_METRICS_ADDR nothing.
	MetricsURL string `json:"metrics_url"`
	Ports      []Port `json:"ports,omitempty"`
	Sites      []Site `json:"sites"`
	// RegisterURL is erpgate's self-service registration page, and
	// Registration the simulators that are not registered, to walk it.
	RegisterURL  string            `json:"register_url,omitempty"`
	Registration []RegistrationERP `json:"registration,omitempty"`
}

// RegistrationERP is an ERP simulator no site uses yet: where a person
// creates the OAuth client as the ERP's administrator, and who may sign in.
type RegistrationERP struct {
	Kind   string `json:"kind"`
	ERPURL string `json:"erp_url"`
	// Tenant is the tenant to name at sign-in, where the ERP has tenants
	// (Acumatica's login name).
	Tenant string `json:"tenant,omitempty"`
	// SignInURL is the ERP's own sign-in page; OAuthClientURL the page
	// that creates the OAuth client (Frappe's OAuth Client form,
	// Acumatica's Connected Applications).
	SignInURL      string `json:"sign_in_url"`
	OAuthClientURL string `json:"oauth_client_url"`
	Users          []User `json:"users"`
}

// Port is one address dev listens on and the variable that moves it.
type Port struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	Env  string `json:"env"`
}

// Site is one demo site.
type Site struct {
	ID            string `json:"id"`
	Slug          string `json:"slug"`
	Kind          string `json:"kind"`
	ERPURL        string `json:"erp_url"`
	MCPURL        string `json:"mcp_url"`
	ServiceMCPURL string `json:"service_mcp_url"`
	ServiceToken  string `json:"service_token"`
	// ERPCredentials are the simulator's service credentials, under the
	// names the admin API's connection takes, plus the site's settings
	// that are strings (Acumatica's tenant): what registering a second
	// site by hand takes.
	ERPCredentials map[string]string `json:"erp_credentials,omitempty"`
	Users          []User            `json:"users"`
	// WriteTools are the write tools the site enables (every one, in
	// dev) and ServiceWriteApprover the ERP user who approves the writes
	// its service token proposes (docs/writes.md).
	WriteTools           []string `json:"write_tools,omitempty"`
	ServiceWriteApprover string   `json:"service_write_approver,omitempty"`
}

// User is a demo user of a simulator.
type User struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Role     string `json:"role"`
	// Admin marks the ERP's administrator (Frappe: System Manager;
	// Acumatica: the Administrator role), who may register the site.
	Admin bool `json:"admin,omitempty"`
}
