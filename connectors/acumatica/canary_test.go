package acumatica

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

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
