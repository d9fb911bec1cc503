//go:build dev

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// `erpgate dev` also runs one simulator of each kind that no site uses, so
// a person can walk self-service registration locally: sign in to the
// simulator as its administrator, create the OAuth client there, and
// register it at /register (the demo sites' simulators are registered
// already, and an address is registered once). Their addresses move with
// ERPGATE_DEV_FRAPPE_REGISTER_ADDR and ERPGATE_DEV_ACUMATICA_REGISTER_ADDR.
// The OAuth clients created on them are kept in .data/ and put back at the
// next start, so a site registered against them keeps working.
const (
	devFrappeRegisterAddr      = "127.0.0.1:8103"
	devAcumaticaRegisterAddr   = "127.0.0.1:8104"
	devRegistrationClientsFile = "dev-registration-clients.json"
)

// registrationClients are the OAuth clients created on the registration
// simulators, as saved in .data/.
type registrationClients struct {
	mu        sync.Mutex
	path      string
	Frappe    []frappetest.OAuthClient `json:"frappe"`
	Acumatica []acumaticatest.Client   `json:"acumatica"`
}

func loadRegistrationClients(path string) (*registrationClients, error) {
	rc := &registrationClients{path: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return rc, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(b, rc); err != nil {
		return nil, fmt.Errorf("read %s: %w (delete it to forget the registration simulators' OAuth clients)", path, err)
	}
	return rc, nil
}

func (rc *registrationClients) addFrappe(c frappetest.OAuthClient) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.Frappe = upsert(rc.Frappe, c, func(a, b frappetest.OAuthClient) bool { return a.ID == b.ID })
	rc.saveLocked()
}

func (rc *registrationClients) addAcumatica(c acumaticatest.Client) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.Acumatica = upsert(rc.Acumatica, c, func(a, b acumaticatest.Client) bool { return a.ID == b.ID })
	rc.saveLocked()
}

// upsert replaces the element of list that same says is c, or appends c.
func upsert[T any](list []T, c T, same func(a, b T) bool) []T {
	for i := range list {
		if same(list[i], c) {
			list[i] = c
			return list
		}
	}
	return append(list, c)
}

// saveLocked writes the file; a failure loses only the convenience of
// keeping the clients, so it is reported and dev goes on.
func (rc *registrationClients) saveLocked() {
	if err := writeJSONFile(rc.path, rc, 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "erpgate dev: keep the registration simulators' OAuth clients: %v\n", err)
	}
}

// startRegistrationSimulators starts the two simulators no site uses, with
// the OAuth clients of earlier runs, and describes them for the summary.
func startRegistrationSimulators(dataDir string) ([]devRegistrationERP, []devPort, func(), error) {
	store, err := loadRegistrationClients(filepath.Join(dataDir, devRegistrationClientsFile))
	if err != nil {
		return nil, nil, nil, err
	}
	saved := struct {
		frappe    []frappetest.OAuthClient
		acumatica []acumaticatest.Client
	}{store.Frappe, store.Acumatica}
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}

	fsim := frappetest.NewHandler(frappetest.Options{ClientAdded: store.addFrappe})
	for _, c := range saved.frappe {
		fsim.PutClient(c)
	}
	frappeURL, stopFrappe, err := serveLocal(envOr("ERPGATE_DEV_FRAPPE_REGISTER_ADDR", devFrappeRegisterAddr), fsim)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("start the Frappe simulator for registration: %w", err)
	}
	stops = append(stops, stopFrappe)

	// Putting the saved applications back saves them again, unchanged.
	asim := acumaticatest.NewHandler(acumaticatest.Options{ClientAdded: store.addAcumatica})
	for _, c := range saved.acumatica {
		asim.AddClient(c)
	}
	stops = append(stops, asim.Close)
	acumaticaURL, stopAcumatica, err := serveLocal(envOr("ERPGATE_DEV_ACUMATICA_REGISTER_ADDR", devAcumaticaRegisterAddr), asim)
	if err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("start the Acumatica simulator for registration: %w", err)
	}
	stops = append(stops, stopAcumatica)

	fadmin, fnon := fsim.User(frappetest.RoleAdministrator), fsim.User(frappetest.RoleNonAdministrator)
	aadmin, anon := asim.User(acumaticatest.RoleFull), asim.User(acumaticatest.RoleNonAdmin)
	erps := []devRegistrationERP{
		{Kind: "frappe", ERPURL: frappeURL, SignInURL: frappeURL + "/login", OAuthClientURL: frappeURL + "/app/oauth-client/new",
			Users: []devUser{
				{Username: fadmin.Email, Password: fadmin.Password, Role: "System Manager", Admin: true},
				{Username: fnon.Email, Password: fnon.Password, Role: "Sales User only"},
			}},
		{Kind: "acumatica", ERPURL: acumaticaURL, Tenant: asim.Tenant(), SignInURL: acumaticaURL + acumaticatest.PathUILogin,
			OAuthClientURL: acumaticaURL + acumaticatest.PathMain + "?ScreenId=" + acumaticatest.ScreenConnectedApps,
			Users: []devUser{
				{Username: aadmin.Username, Password: aadmin.Password, Role: "Administrator role", Admin: true},
				{Username: anon.Username, Password: anon.Password, Role: "no Administrator role"},
			}},
	}
	ports := []devPort{
		{Name: "Frappe for registration", Addr: hostPort(frappeURL), Env: "ERPGATE_DEV_FRAPPE_REGISTER_ADDR"},
		{Name: "Acumatica for registration", Addr: hostPort(acumaticaURL), Env: "ERPGATE_DEV_ACUMATICA_REGISTER_ADDR"},
	}
	return erps, ports, stop, nil
}
