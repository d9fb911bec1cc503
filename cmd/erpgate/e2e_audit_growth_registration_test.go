package main

import (
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// TestRegistrationClientStepsDoNotGrowTheAudit: whoever holds one
// registration may paste an OAuth client again and again, from many
// sources, each within its own limit, with a client id of their choosing.
// Nothing is proven yet (no one identified, no site), so the registration
// leaves one register_client row whatever the number of pastes: before,
// each paste was a row kept for ever.
func TestRegistrationClientStepsDoNotGrowTheAudit(t *testing.T) {
	d := newBoundedRegistrations(t, 200, 0)
	gw := d.replicas[0]
	b := newRegistrationClient(t, gw.URL)
	path := b.startRegistration(d.erp)
	csrf := b.csrf(path)
	for n := 1; n <= anonymousSources; n++ {
		source := map[string]string{"X-Forwarded-For": "203.0.113." + strconv.Itoa(n)}
		form := url.Values{"csrf": {csrf}, "client_id": {"made-up-client-" + strconv.Itoa(n)}, "client_secret": {"made-up-secret"}}
		if status, h, page := b.do(http.MethodPost, path+"/client", form, source); status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), d.erp) {
			t.Fatalf("source %d: client step: %d to %q %s", n, status, h.Get("Location"), pageText(page))
		}
	}
	if rows := countRows(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'register_client'`); rows != 1 {
		t.Errorf("%d client steps of one registration left %d register_client rows in admin_events; want 1", anonymousSources, rows)
	}
}

// TestRegistrationProofRefusalsOfAnUnprovenERPDoNotGrowTheAudit: during a
// registration the ERP is the registrant's own, not yet proven: it names
// whoever it likes as the person who signed in. A registrant whose ERP
// says "not an administrator" may go there and back from many sources;
// those refusals are counted a row a minute, as the ones where the ERP
// named no one. Before, each was a row of its own, kept for ever.
func TestRegistrationProofRefusalsOfAnUnprovenERPDoNotGrowTheAudit(t *testing.T) {
	gw := startGateway(t, "", map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"})
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	t.Cleanup(sim.Close)
	clerk := sim.User(acumaticatest.RoleNonAdmin)

	visitor := newRegistrationClient(t, gw.URL)
	form := url.Values{"csrf": {visitor.csrf("/register")}, "kind": {"acumatica"}, "display_name": {"Clerk Ltd"},
		"base_url": {sim.URL}, "tenant": {sim.Tenant()}, "endpoint_name": {"Default"}, "endpoint_version": {"24.200.001"}}
	status, h, page := visitor.do(http.MethodPost, "/register", form, nil)
	if status != http.StatusSeeOther {
		t.Fatalf("start: HTTP %d %s", status, pageText(page))
	}
	path := strings.TrimPrefix(h.Get("Location"), gw.URL)
	status, _, page = visitor.do(http.MethodGet, path, nil, nil)
	m := redirectURIField.FindStringSubmatch(page)
	if status != http.StatusOK || m == nil {
		t.Fatalf("client step: HTTP %d %s", status, pageText(page))
	}
	client := sim.RegisterClient(html.UnescapeString(m[1]))
	csrf := csrfField.FindStringSubmatch(page)[1]

	from := time.Now()
	for n := 1; n <= anonymousSources; n++ {
		source := map[string]string{"X-Forwarded-For": "203.0.113." + strconv.Itoa(n)}
		step, form := path+"/prove", url.Values{"csrf": {csrf}}
		if n == 1 {
			step, form = path+"/client", url.Values{"csrf": {csrf}, "client_id": {client.ID}, "client_secret": {client.Secret}}
		}
		status, h, page := visitor.do(http.MethodPost, step, form, source)
		if status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), sim.URL) {
			t.Fatalf("source %d: %s: HTTP %d to %q %s", n, step, status, h.Get("Location"), pageText(page))
		}
		back, err := acumaticatest.CompleteAuthorization(nil, h.Get("Location"), clerk.Username, clerk.Password)
		if err != nil || back == nil {
			t.Fatalf("source %d: sign in at the ERP: %v", n, err)
		}
		if status, _, page := visitor.do(http.MethodGet, strings.TrimPrefix(back.String(), gw.URL), nil, source); status != http.StatusForbidden ||
			!strings.Contains(pageText(page), "You are not an administrator of this ERP") {
			t.Fatalf("source %d: callback: HTTP %d %s", n, status, pageText(page))
		}
	}
	bound := minutesSpanned(from, time.Now())
	if rows := countRows(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'register_proof'`); rows > bound {
		t.Errorf("%d proofs refused by the registrant's own ERP left %d register_proof rows; want at most %d (one a minute)", anonymousSources, rows, bound)
	}
	if n := countRows(t, gw.DBURL, `SELECT coalesce(sum(repeats), 0)::int FROM admin_events WHERE action = 'register_proof' AND outcome = 'refused'`); n != anonymousSources {
		t.Errorf("the register_proof rows count %d refused proofs, want %d", n, anonymousSources)
	}
	if n := countRows(t, gw.DBURL, `SELECT count(*) FROM sites`); n != 0 {
		t.Errorf("%d sites registered by a non-administrator", n)
	}
}
