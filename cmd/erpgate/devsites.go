package main

import (
	"context"
	"encoding/json"
	"os"
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
}

type devUser struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Role     string `json:"role"`
}

func readDevState(path string) devState {
	var s devState
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	return s
}

// acumaticaService is an Acumatica service connection: the tenant, the
// password-grant application and the dedicated API user. It has the
// fields of acumaticatest.ServiceLogin, so one converts to the other.
type acumaticaService struct {
	Tenant       string
	ClientID     string
	ClientSecret string
	Username     string
	Password     string
}

func (s acumaticaService) credentials() map[string]string {
	return map[string]string{
		"client_id": s.ClientID, "client_secret": s.ClientSecret,
		"username": s.Username, "password": s.Password,
	}
}

// registerAcumaticaService registers the Acumatica instance at erpURL as a
// site whose service connection is svc.
func registerAcumaticaService(ctx context.Context, admin *adminClient, previous devState, svc acumaticaService,
	slug, name, erpURL string) (devSite, error) {
	return admin.ensureSite(ctx, previous, siteRequest{
		Slug: slug, Kind: "acumatica", DisplayName: name, BaseURL: erpURL,
		Settings:    map[string]any{"tenant": svc.Tenant},
		Credentials: svc.credentials(),
	})
}
