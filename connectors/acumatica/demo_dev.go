//go:build dev

package acumatica

import (
	"context"
	"fmt"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
)

// The demo's fixed ports, moved by ERPGATE_DEV_ACUMATICA_ADDR and
// ERPGATE_DEV_ACUMATICA_REGISTER_ADDR.
const (
	demoAddr             = "127.0.0.1:8102"
	demoRegistrationAddr = "127.0.0.1:8104"
)

// Demo starts the Acumatica simulator of the demo site, whose
// password-grant application and dedicated API user serve bots, with a
// fresh authorization-code application so that people can sign in; and a
// second simulator for walking registration, which keeps the connected
// applications created on it across runs.
func (c *Connector) Demo(_ context.Context, env connector.DemoEnv) (*connector.Demo, error) {
	saved, err := connector.NewDemoSaved(env, func(c acumaticatest.Client) string { return c.ID })
	if err != nil {
		return nil, err
	}
	sim := acumaticatest.NewHandler(acumaticatest.Options{})
	simURL, stopSim, err := connector.ServeDemo(env.Addr, demoAddr, sim)
	if err != nil {
		sim.Close()
		return nil, fmt.Errorf("start the Acumatica simulator: %w", err)
	}
	// Putting the saved applications back saves them again, unchanged.
	reg := acumaticatest.NewHandler(acumaticatest.Options{ClientAdded: saved.Put})
	for _, c := range saved.Items() {
		reg.AddClient(c)
	}
	regURL, stopReg, err := connector.ServeDemo(env.RegistrationAddr, demoRegistrationAddr, reg)
	if err != nil {
		reg.Close()
		stopSim()
		sim.Close()
		return nil, fmt.Errorf("start the Acumatica simulator for registration: %w", err)
	}

	svc := sim.ServiceLogin()
	const slug = "demo-acumatica"
	client := sim.RegisterClient(env.CallbackURL(slug))
	site := connector.DemoSite{
		Slug: slug, DisplayName: "Demo Acumatica (simulator)",
		Settings: map[string]any{"tenant": svc.Tenant},
		Credentials: map[string]string{
			"client_id": svc.ClientID, "client_secret": svc.ClientSecret,
			"username": svc.Username, "password": svc.Password,
		},
		OAuthClientID: client.ID, OAuthClientSecret: client.Secret,
		// Acumatica names a person by the OIDC subject, user@tenant.
		WriteApprover: sim.User(acumaticatest.RoleFull).Username + "@" + svc.Tenant,
	}
	for _, u := range sim.Users() {
		site.Users = append(site.Users, connector.DemoUser{Username: u.Username, Password: u.Password, Role: u.Role, Admin: u.IsAdministrator()})
	}
	admin, non := reg.User(acumaticatest.RoleFull), reg.User(acumaticatest.RoleNonAdmin)
	return &connector.Demo{
		Name: "Acumatica", URL: simURL, Site: site,
		Close: func() { stopReg(); reg.Close(); stopSim(); sim.Close() },
		Registration: &connector.DemoRegistration{
			URL: regURL, Tenant: reg.Tenant(), SignInURL: regURL + acumaticatest.PathUILogin,
			OAuthClientURL: regURL + acumaticatest.PathMain + "?ScreenId=" + acumaticatest.ScreenConnectedApps,
			Users: []connector.DemoUser{
				{Username: admin.Username, Password: admin.Password, Role: "Administrator role", Admin: true},
				{Username: non.Username, Password: non.Password, Role: "no Administrator role"},
			},
		},
	}, nil
}
