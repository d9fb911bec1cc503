package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/devstate"
)

// AdminError is an error answer of the admin API.
type AdminError struct {
	Status  int
	Code    string
	Message string
}

func (e *AdminError) Error() string {
	return fmt.Sprintf("admin API: HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// Admin calls the admin API (/api/v1 + path) with the dev admin token,
// sending in as JSON (nil: no body) and decoding the answer into out (nil:
// ignored). An error answer is returned as an *AdminError; a failure to
// reach the gateway fails the test.
func (g *Gateway) Admin(t testing.TB, method, path string, in, out any) error {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := callContext()
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, g.BaseURL+"/api/v1"+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+g.AdminToken)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		return &AdminError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: the answer is not the JSON expected: %v", method, path, err)
		}
	}
	return nil
}

// SiteRequest is a site to register through the admin API.
type SiteRequest struct {
	Slug, Kind, DisplayName string
	// BaseURL is the ERP's address.
	BaseURL string
	// Settings are the connector's settings of the site, if it has any.
	Settings map[string]any
	// Credentials are the service connection (the api_token connection);
	// none leaves the site without service access.
	Credentials map[string]string
	// OAuthClientID and OAuthClientSecret are the ERP's OAuth client for
	// people's sign-in (the oauth connection), if given.
	OAuthClientID, OAuthClientSecret string
}

// RegisterSite registers a site as an operator's script would: the site,
// its service connection and a service token (and its OAuth client, if
// given). The test fails if any step is refused; test refusals with Admin.
func (g *Gateway) RegisterSite(t testing.TB, in SiteRequest) *Site {
	t.Helper()
	body := map[string]any{"slug": in.Slug, "kind": in.Kind, "display_name": in.DisplayName, "base_url": in.BaseURL}
	if in.Settings != nil {
		body["settings"] = in.Settings
	}
	var site devstate.Site
	if err := g.Admin(t, http.MethodPost, "/sites", body, &site); err != nil {
		t.Fatalf("register site %s: %v", in.Slug, err)
	}
	id := url.PathEscape(site.ID)
	if in.OAuthClientID != "" {
		creds := map[string]string{"client_id": in.OAuthClientID, "client_secret": in.OAuthClientSecret}
		if err := g.Admin(t, http.MethodPut, "/sites/"+id+"/connections/oauth", map[string]any{"credentials": creds}, nil); err != nil {
			t.Fatalf("site %s: store the OAuth client: %v", in.Slug, err)
		}
	}
	s := &Site{Site: site, gw: g}
	s.ERPURL = in.BaseURL
	if in.Credentials == nil {
		return s
	}
	if err := g.Admin(t, http.MethodPut, "/sites/"+id+"/connections/api_token", map[string]any{"credentials": in.Credentials}, nil); err != nil {
		t.Fatalf("site %s: store the service connection: %v", in.Slug, err)
	}
	var token struct {
		Token string `json:"token"`
	}
	if err := g.Admin(t, http.MethodPost, "/sites/"+id+"/service-tokens", map[string]any{"name": "e2e"}, &token); err != nil {
		t.Fatalf("site %s: issue a service token: %v", in.Slug, err)
	}
	s.ServiceToken = token.Token
	s.ERPCredentials = in.Credentials
	return s
}
