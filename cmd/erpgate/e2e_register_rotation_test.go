package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestARegistrationGoesOnAfterTheOldKeyIsDropped: the key rotation's last
// step (docs/operations.md) may come right after `keys rotate`, with
// nothing under way lost. A registration begun before the rotation has an
// address whose check value was made with a key derived from the old key;
// once that key is gone the check value verifies under none, and the
// address must still open the registration in the browser that began it
// (looked up within the source's bound, as an address without a check
// value is), not answer that it is not open.
func TestARegistrationGoesOnAfterTheOldKeyIsDropped(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	gw := startGateway(t, "", nil)
	registrant := newRegistrationClient(t, gw.URL)
	path := registrant.startRegistration(sim.URL)
	if status, _, page := registrant.do(http.MethodGet, path, nil, nil); status != http.StatusOK || !strings.Contains(page, "Target Ltd") {
		t.Fatalf("GET %s before the rotation: %d %s", path, status, pageText(page))
	}

	k2 := keySpec(t, "k2")
	t.Setenv("DATABASE_URL", gw.DBURL)
	t.Setenv("ERPGATE_ENCRYPTION_KEYS", k2+","+gw.Keys)
	if out, err := captureStdout(t, func() error { return run(context.Background(), []string{"keys", "rotate"}) }); err != nil {
		t.Fatalf("rotate: %v\n%s", err, out)
	}
	// The old key dropped: a replica with k2 alone, the same browser.
	after := startGateway(t, gw.DBURL, map[string]string{"ERPGATE_ENCRYPTION_KEYS": k2})
	registrant.base = after.URL
	status, _, page := registrant.do(http.MethodGet, path, nil, nil)
	if status != http.StatusOK || !strings.Contains(page, "Target Ltd") {
		t.Fatalf("GET %s with the old key dropped: %d %s; want the registration begun before the rotation", path, status, pageText(page))
	}
	// Its page links to the registration under the new key's check value.
	ref := path[strings.LastIndexByte(path, '/')+1:]
	id, _, _ := strings.Cut(ref, ".")
	if !strings.Contains(page, "/register/"+id+".") || strings.Contains(page, ref) {
		t.Errorf("the page does not link to the registration with a check value made under k2:\n%s", page)
	}
}
