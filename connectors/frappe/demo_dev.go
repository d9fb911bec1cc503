//go:build dev

package frappe

import (
	"context"
	"fmt"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
)

// The demo's fixed ports, moved by ERPGATE_DEV_FRAPPE_ADDR and
// ERPGATE_DEV_FRAPPE_REGISTER_ADDR.
const (
	demoAddr             = "127.0.0.1:8101"
	demoRegistrationAddr = "127.0.0.1:8103"
)

// Demo starts the Frappe simulator of the demo site, with a fresh OAuth
// client (the simulator forgets clients between runs) so that people can
// sign in as the demo users and its service user's API key for bots; and
// a second simulator for walking registration, which keeps the OAuth
// clients created on it across runs.
func (c *Connector) Demo(_ context.Context, env connector.DemoEnv) (*connector.Demo, error) {
	saved, err := connector.NewDemoSaved(env, func(c frappetest.OAuthClient) string { return c.ID })
	if err != nil {
		return nil, err
	}
	sim := frappetest.NewHandler(frappetest.Options{})
	simURL, stopSim, err := connector.ServeDemo(env.Addr, demoAddr, sim)
	if err != nil {
		return nil, fmt.Errorf("start the Frappe simulator: %w", err)
	}
	reg := frappetest.NewHandler(frappetest.Options{ClientAdded: saved.Put})
	for _, c := range saved.Items() {
		reg.PutClient(c)
	}
	regURL, stopReg, err := connector.ServeDemo(env.RegistrationAddr, demoRegistrationAddr, reg)
	if err != nil {
		stopSim()
		return nil, fmt.Errorf("start the Frappe simulator for registration: %w", err)
	}

	bot := sim.User("service")
	const slug = "demo-frappe"
	client := sim.RegisterClient(env.CallbackURL(slug))
	site := connector.DemoSite{
		Slug: slug, DisplayName: "Demo ERPNext (simulator)",
		Credentials:   map[string]string{"api_key": bot.APIKey, "api_secret": bot.APISecret},
		OAuthClientID: client.ID, OAuthClientSecret: client.Secret,
		WriteApprover: sim.User(frappetest.RoleAdministrator).Email,
	}
	for _, u := range sim.Users() {
		site.Users = append(site.Users, connector.DemoUser{Username: u.Email, Password: u.Password, Role: u.Role, Admin: u.IsSystemManager()})
	}
	admin, non := reg.User(frappetest.RoleAdministrator), reg.User(frappetest.RoleNonAdministrator)
	return &connector.Demo{
		Name: "Frappe", URL: simURL, Site: site,
		Close: func() { stopReg(); stopSim() },
		Registration: &connector.DemoRegistration{
			URL: regURL, SignInURL: regURL + "/login", OAuthClientURL: regURL + "/app/oauth-client/new",
			Users: []connector.DemoUser{
				{Username: admin.Email, Password: admin.Password, Role: "System Manager", Admin: true},
				{Username: non.Email, Password: non.Password, Role: "Sales User only"},
			},
		},
	}, nil
}
