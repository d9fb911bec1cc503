package main

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestProductionRefusesNonPublicERPAddresses: a replica served over https
// (production) refuses to register a site whose ERP is at a loopback,
// private or link-local address, and refuses to connect to one at dial
// time (a name that resolved publicly when it was registered and later
// rebinds), unless the operator lists the host in
// ERPGATE_ERP_PRIVATE_HOSTS (issue 14, item 8).
func TestProductionRefusesNonPublicERPAddresses(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	user := userWithRole(t, sim, "service")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	prod := startGateway(t, "", map[string]string{"ERPGATE_PUBLIC_BASE_URL": "https://gw.example.com"})
	for i, tc := range []struct{ url, says string }{
		{"http://127.0.0.1:5432", "127.0.0.1 is a loopback address"},
		{"https://169.254.169.254", "169.254.169.254 is a link-local address"},
		{"https://10.0.0.8", "10.0.0.8 is a private address"},
		{"https://[64:ff9b::a9fe:a9fe]", "a form of 169.254.169.254"},
		{"https://localhost:8000", "localhost resolves to"},
		{sim.URL, "127.0.0.1 is a loopback address"},
	} {
		err := prod.admin.do(ctx, http.MethodPost, "/sites", map[string]any{
			"slug": "probe-" + strconv.Itoa(i), "kind": "frappe", "display_name": "Probe", "base_url": tc.url,
		}, nil)
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, tc.says) ||
			!strings.Contains(ae.Message, "ERPGATE_ERP_PRIVATE_HOSTS") {
			t.Errorf("register %s: %v, want 400 saying %q and naming ERPGATE_ERP_PRIVATE_HOSTS", tc.url, err, tc.says)
		}
	}

	// A site whose address was public when it was registered and is not
	// any more: the credential check must not reach it.
	conn, err := pgx.Connect(ctx, prod.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rebound := uuid.NewString()
	if _, err := conn.Exec(ctx, `INSERT INTO sites (id, slug, kind, base_url, display_name) VALUES ($1, 'rebound', 'frappe', $2, 'Rebound')`,
		rebound, sim.URL); err != nil {
		t.Fatal(err)
	}
	before := sim.RequestCount("/")
	err = prod.admin.do(ctx, http.MethodPut, "/sites/"+rebound+"/connections/api_token",
		map[string]any{"credentials": map[string]string{"api_key": user.APIKey, "api_secret": user.APISecret}}, nil)
	var ae *apiError
	if !errors.As(err, &ae) || !strings.Contains(ae.Message, "127.0.0.1 is a loopback address") {
		t.Errorf("credential check at a loopback address: %v, want a refusal naming the address", err)
	}
	if n := sim.RequestCount("/") - before; n != 0 {
		t.Errorf("the ERP at a loopback address got %d requests", n)
	}

	// Listed with its port, the same simulator is registered and its
	// credential checked.
	simURL, err := url.Parse(sim.URL)
	if err != nil {
		t.Fatal(err)
	}
	listed := startGateway(t, "", map[string]string{
		"ERPGATE_PUBLIC_BASE_URL":   "https://gw.example.com",
		"ERPGATE_ERP_PRIVATE_HOSTS": "127.0.0.1:" + simURL.Port(),
	})
	listed.registerFrappe(t, "internal", sim, user)

	// Listed without a port, the host is exempt on 443 only: the
	// simulator's port, as any other service of the host, stays refused.
	// Before, listing a host opened all its ports to anyone who may
	// register a site.
	bare := startGateway(t, "", map[string]string{
		"ERPGATE_PUBLIC_BASE_URL":   "https://gw.example.com",
		"ERPGATE_ERP_PRIVATE_HOSTS": "127.0.0.1",
	})
	_, err = bare.admin.ensureSite(ctx, devState{}, siteRequest{Slug: "elsewhere", Kind: "frappe", DisplayName: "Elsewhere", BaseURL: sim.URL,
		Credentials: map[string]string{"api_key": user.APIKey, "api_secret": user.APISecret}})
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Message, "list 127.0.0.1:"+simURL.Port()) {
		t.Errorf("another port of a host listed without one: %v, want 400 saying to list 127.0.0.1:%s", err, simURL.Port())
	}
}
