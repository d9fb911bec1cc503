package e2e

// State is .data/dev.json, which `erpgate dev` writes once everything is
// registered (the kit reads it; the fields are dev's).
type State struct {
	BaseURL     string      `json:"base_url"`
	AdminToken  string      `json:"admin_token"`
	DatabaseURL string      `json:"database_url"`
	MetricsURL  string      `json:"metrics_url"`
	Ports       []Port      `json:"ports"`
	Sites       []SiteState `json:"sites"`
	RegisterURL string      `json:"register_url"`
	// Registration lists the simulators no site uses yet, for walking
	// self-service registration.
	Registration []RegistrationERP `json:"registration"`
}

// Port is one address dev listens on and the variable that moves it.
type Port struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	Env  string `json:"env"`
}

// SiteState is one demo site in dev.json.
type SiteState struct {
	ID            string `json:"id"`
	Slug          string `json:"slug"`
	Kind          string `json:"kind"`
	ERPURL        string `json:"erp_url"`
	MCPURL        string `json:"mcp_url"`
	ServiceMCPURL string `json:"service_mcp_url"`
	ServiceToken  string `json:"service_token"`
	// ERPCredentials are the simulator's service credentials, under the
	// names the admin API's api_token connection takes.
	ERPCredentials map[string]string `json:"erp_credentials"`
	Users          []User            `json:"users"`
	// WriteTools are the write tools the demo site enables, and
	// ServiceWriteApprover the ERP user who approves its service token's
	// writes.
	WriteTools           []string `json:"write_tools"`
	ServiceWriteApprover string   `json:"service_write_approver"`
}

// User is a demo user of a simulator.
type User struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Role     string `json:"role"`
	// Admin marks the ERP's administrator.
	Admin bool `json:"admin"`
}

// RegistrationERP is a simulator that no site uses yet.
type RegistrationERP struct {
	Kind           string `json:"kind"`
	ERPURL         string `json:"erp_url"`
	Tenant         string `json:"tenant"`
	SignInURL      string `json:"sign_in_url"`
	OAuthClientURL string `json:"oauth_client_url"`
	Users          []User `json:"users"`
}
