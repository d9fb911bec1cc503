package adminapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/front/adminapi"
	"github.com/erpgate/erpgate/platform/infra/netguard"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// newProductionHarness serves the API as production does: the ERP address
// policy, exempting hosts, at registration and in a real outbound
// transport. A host "upstream" stands for the fake ERP's host and port.
func newProductionHarness(t *testing.T, hosts ...string) *harness {
	t.Helper()
	return newHarnessWith(t, func(d *adminapi.Deps, up *fakeUpstream) {
		listed := slices.Clone(hosts)
		for i, h := range listed {
			if h == "upstream" {
				listed[i] = strings.TrimPrefix(up.URL, "http://")
			}
		}
		policy := netguard.NewPolicy(listed)
		out := outbound.NewFactory(outbound.Options{AddressPolicy: policy})
		d.ERPAddresses = policy
		d.HTTPClient = out.Client
	})
}

// TestSiteAtANonPublicAddressIsRefused: in production the ERP's address
// must be public, or its host listed (issue 14, item 8: an operator could
// register http://127.0.0.1:5432 or https://169.254.169.254, and erpgate
// then contacted it to verify the credential).
func TestSiteAtANonPublicAddressIsRefused(t *testing.T) {
	h := newProductionHarness(t, "erp.internal.test")
	for _, tc := range []struct{ url, says string }{
		{"http://127.0.0.1:5432", "127.0.0.1 is a loopback address"},
		{"https://169.254.169.254", "169.254.169.254 is a link-local address"},
		{"https://[fd00::5]", "fd00::5 is a unique-local address"},
		{h.upstream.URL, "127.0.0.1 is a loopback address"},
		{"https://nothing-here.invalid", "does not resolve"},
	} {
		r := h.call(http.MethodPost, "/api/v1/sites", map[string]any{
			"slug": "probe", "kind": "fakeerp", "display_name": "Probe", "base_url": tc.url,
		})
		expect(t, r, http.StatusBadRequest, "invalid_request")
		if !strings.Contains(r.Body, tc.says) || !strings.Contains(r.Body, "ERPGATE_ERP_PRIVATE_HOSTS") {
			t.Errorf("%s: %s, want it to say %q and name ERPGATE_ERP_PRIVATE_HOSTS", tc.url, r.Body, tc.says)
		}
	}

	// A listed host and a public address are registered; moving a site to
	// a private address is refused like registering it there.
	for _, url := range []string{"https://erp.internal.test", "https://93.184.215.14"} {
		r := h.call(http.MethodPost, "/api/v1/sites", map[string]any{
			"slug": "ok-" + strings.NewReplacer(".", "-", ":", "-", "/", "").Replace(url[8:]), "kind": "fakeerp",
			"display_name": "OK", "base_url": url,
		})
		expect(t, r, http.StatusCreated, "")
	}
	r := h.call(http.MethodPatch, "/api/v1/sites/ok-erp-internal-test", map[string]any{"base_url": "https://10.1.1.1"})
	expect(t, r, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(r.Body, "10.1.1.1 is a private address") {
		t.Errorf("moving to 10.1.1.1: %s", r.Body)
	}
}

// TestCredentialCheckNeverDialsANonPublicAddress: a site stored with a
// loopback address (its name resolved publicly when it was registered,
// then rebound) is not contacted at all; listed, it is.
func TestCredentialCheckNeverDialsANonPublicAddress(t *testing.T) {
	h := newProductionHarness(t)
	if _, err := h.store.CreateSite(t.Context(), sites.NewSite{
		Slug: "rebound", Kind: "fakeerp", DisplayName: "Rebound", BaseURL: h.upstream.URL,
		Settings: []byte(`{"tenant":"rebound"}`),
	}); err != nil {
		t.Fatal(err)
	}
	r := h.call(http.MethodPut, "/api/v1/sites/rebound/connections/api_token",
		map[string]any{"credentials": map[string]string{"api_key": goodKey, "api_secret": goodSecret}})
	expect(t, r, http.StatusBadRequest, "invalid_request")
	if !strings.Contains(r.Body, "127.0.0.1 is a loopback address") || !strings.Contains(r.Body, "nothing was saved") {
		t.Errorf("credential check at a loopback address: %s", r.Body)
	}
	if n := h.upstream.calls.Load(); n != 0 {
		t.Errorf("the ERP at a loopback address got %d requests", n)
	}

	listed := newProductionHarness(t, "upstream")
	listed.createSite("internal")
	listed.connect("internal")
}
