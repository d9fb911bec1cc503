package main

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
)

// This file holds what `erpgate dev` (dev.go, built with -tags dev) and the
// tests share. It imports no simulator, so the release binary links none.

// Where `erpgate dev` keeps its state, relative to the working directory.
const (
	devDataDir   = ".data"
	devStateFile = "dev.json"
)

// devState is .data/dev.json: everything needed to use the local gateway,
// and to register a second site by hand against the simulators.
type devState struct {
	BaseURL     string `json:"base_url"`
	AdminToken  string `json:"admin_token"`
	DatabaseURL string `json:"database_url"`
	// MetricsURL is /metrics; on the main address it takes the admin
	// token, on ERPGATE_METRICS_ADDR nothing.
	MetricsURL string    `json:"metrics_url"`
	Ports      []devPort `json:"ports,omitempty"`
	Sites      []devSite `json:"sites"`
	// RegisterURL is erpgate's self-service registration page, and
	// Registration the simulators that are not registered, to walk it.
	RegisterURL  string               `json:"register_url,omitempty"`
	Registration []devRegistrationERP `json:"registration,omitempty"`
}

// devRegistrationERP is an ERP simulator no site uses yet: where a person
// creates the OAuth client as the ERP's administrator, and who may sign in.
type devRegistrationERP struct {
	Kind   string `json:"kind"`
	ERPURL string `json:"erp_url"`
	// Tenant is the Acumatica tenant's login name.
	Tenant string `json:"tenant,omitempty"`
	// SignInURL is the ERP's own sign-in page; OAuthClientURL the page
	// that creates the OAuth client (Frappe's OAuth Client form,
	// Acumatica's Connected Applications).
	SignInURL      string    `json:"sign_in_url"`
	OAuthClientURL string    `json:"oauth_client_url"`
	Users          []devUser `json:"users"`
}

// devPort is one address dev listens on and the variable that moves it.
type devPort struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	Env  string `json:"env"`
}

type devSite struct {
	ID            string `json:"id"`
	Slug          string `json:"slug"`
	Kind          string `json:"kind"`
	ERPURL        string `json:"erp_url"`
	MCPURL        string `json:"mcp_url"`
	ServiceMCPURL string `json:"service_mcp_url"`
	ServiceToken  string `json:"service_token"`
	// ERPCredentials are the simulator's service credentials, under the
	// names the admin API's connection takes (plus tenant for Acumatica).
	ERPCredentials map[string]string `json:"erp_credentials,omitempty"`
	Users          []devUser         `json:"users"`
	// WriteTools are the write tools the site enables (every one, in
	// dev) and ServiceWriteApprover the ERP user who approves the writes
	// its service token proposes (docs/writes.md).
	WriteTools           []string `json:"write_tools,omitempty"`
	ServiceWriteApprover string   `json:"service_write_approver,omitempty"`
}

type devUser struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Role     string `json:"role"`
	// Admin marks the ERP's administrator (Frappe: System Manager;
	// Acumatica: the Administrator role), who may register the site.
	Admin bool `json:"admin,omitempty"`
}

func readDevState(path string) devState {
	var s devState
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s
}

// devAddrEnv is the variable that moves a kind's simulator:
// ERPGATE_DEV_FRAPPE_ADDR, or with infix REGISTER_
// ERPGATE_DEV_FRAPPE_REGISTER_ADDR for its registration simulator.
func devAddrEnv(kind, infix string) string {
	return "ERPGATE_DEV_" + strings.ToUpper(kind) + "_" + infix + "ADDR"
}

// writeToolNames lists the catalogue's tools of kind that change ERP data
// (Write and Destructive), which the demo sites enable.
func writeToolNames(reg *connector.Registry, kind string) []string {
	var names []string
	for _, t := range reg.Tools(kind) {
		if t.Effect != connector.Read {
			names = append(names, t.Name)
		}
	}
	return names
}
