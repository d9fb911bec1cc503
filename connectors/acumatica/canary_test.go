package acumatica

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
)

// TestCanaryInquiryIsTheSitesOrTheDeployments: the gate reads the site's
// own canary inquiry; a site that names none uses the deployment's live
// setting (Options.CanaryInquiry), read at each check, and MCPAccess when
// there is none.
func TestCanaryInquiryIsTheSitesOrTheDeployments(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"value":[]}`))
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	site := func(settings string) connector.Site {
		s, err := New(Options{}).NormalizeSettings(json.RawMessage(settings))
		if err != nil {
			t.Fatal(err)
		}
		return connector.Site{Kind: Kind, BaseURL: base, Settings: s}
	}
	live := "LiveGI"
	withLive := New(Options{CanaryInquiry: func() string { return live }})
	for _, c := range []struct {
		conn     *Connector
		settings string
		want     string
	}{
		{withLive, `{"tenant":"Demo"}`, "/t/Demo/api/odata/gi/LiveGI"},
		{withLive, `{"tenant":"Demo","canary_gi":"OwnGI"}`, "/t/Demo/api/odata/gi/OwnGI"},
		{New(Options{}), `{"tenant":"Demo"}`, "/t/Demo/api/odata/gi/MCPAccess"},
	} {
		asked = nil
		check, err := c.conn.CheckAccess(context.Background(), site(c.settings), srv.Client())
		if err != nil || check.Decision != connector.AccessAllowed || len(asked) != 1 || asked[0] != c.want {
			t.Errorf("%s: %+v, %v, asked %v; want %s", c.settings, check, err, asked, c.want)
		}
	}
	live = "ChangedGI"
	asked = nil
	_, _ = withLive.CheckAccess(context.Background(), site(`{"tenant":"Demo"}`), srv.Client())
	if len(asked) != 1 || asked[0] != "/t/Demo/api/odata/gi/ChangedGI" {
		t.Errorf("after the live setting changed, asked %v", asked)
	}
}

// When the licence has no API-user seat free, Acumatica answers a Bearer
// call with a 302 to its error page, which answers 200 to anyone
// (acumaticatest's Frames/Error.aspx). The gate must not read that as the
// canary being readable: a user without rights to the inquiry is never let
// in because the licence was full.
func TestAccessGateUnderTheLoginLimitLetsNobodyIn(t *testing.T) {
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{SeatLimit: 1}})
	ctx := context.Background()
	tok := h.userToken(acumaticatest.RoleNoCanary)
	asUser := h.out.Client(h.site, OAuth{}.TokenAuthorizer(tok))
	if check, err := (OAuth{}).CheckAccess(ctx, h.site, asUser); err != nil || check.Decision != connector.AccessDenied {
		t.Fatalf("before: CheckAccess = %+v, %v", check, err)
	}
	// The user's server session ends (sign-out here; idle expiry on a real
	// instance) and another user takes the only seat.
	req, err := http.NewRequest(http.MethodPost, h.site.URL("/entity/auth/logout", nil), strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.Reveal())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h.userToken(acumaticatest.RoleFull)
	if h.sim.SeatsInUse() != 1 {
		t.Fatalf("seats in use %d", h.sim.SeatsInUse())
	}
	check, err := (OAuth{}).CheckAccess(ctx, h.site, asUser)
	if err != nil || check.Decision != connector.AccessMisconfigured || !strings.Contains(check.Detail, "API Login Limit") {
		t.Errorf("under the login limit: CheckAccess = %+v, %v; want misconfigured, naming the API Login Limit", check, err)
	}
}
