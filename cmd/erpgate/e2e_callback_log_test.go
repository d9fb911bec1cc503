package main

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
)

// TestASignInAnsweredAtALongPathIsLoggedBounded: a sign-in's answer that
// comes back at another redirect URI than its site's is ended and logged
// as a warning naming the path it came to. The path's site part is the
// sender's text, as long as the request line allows (64 KiB), and anyone
// can start a sign-in of their own to get a state that reaches the check:
// every such request put its whole path in a log line, enough to fill the
// log buffer and have other lines dropped. The line keeps the path's
// start, bounded, and says how long it was.
func TestASignInAnsweredAtALongPathIsLoggedBounded(t *testing.T) {
	_, gw, site := startFrappeOAuthGateway(t, nil)
	rig := &oauthRig{t: t, gw: gw, site: site}
	rig.clientID = rig.register(e2eRedirectURI)
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	// Follow erpgate's own redirects until the one to the ERP's sign-in.
	next := rig.authorizeURL(nil)
	var state string
	for range 5 {
		resp, err := hc.Get(next)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, err := resp.Location()
		if err != nil {
			t.Fatalf("sign-in: HTTP %d without a redirect", resp.StatusCode)
		}
		if !strings.HasPrefix(loc.String(), gw.URL) {
			state = loc.Query().Get("state")
			break
		}
		next = loc.String()
	}
	if state == "" {
		t.Fatal("no redirect to the ERP's sign-in with a state")
	}
	sender := strings.Repeat("x", 20000)
	resp, err := hc.Get(gw.URL + "/sites/" + sender + "/oauth/callback?" + url.Values{"state": {state}, "code": {"made-up-code"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("the answer at another redirect URI: HTTP %d, want 400", resp.StatusCode)
	}
	var warned []string
	for _, line := range strings.Split(gw.Logs.String(), "\n") {
		if strings.Contains(line, "another site's redirect URI") {
			warned = append(warned, line)
		}
	}
	if len(warned) != 1 {
		t.Fatalf("%d warnings of a sign-in answered at another redirect URI, want 1", len(warned))
	}
	if len(warned[0]) > 1024 || strings.Contains(warned[0], sender[:1000]) {
		t.Errorf("the warning is %d bytes long, with the sender's path: %.300s…", len(warned[0]), warned[0])
	}
	if !strings.Contains(warned[0], `"path_bytes":`) || !strings.Contains(warned[0], `"path":"/sites/xxx`) {
		t.Errorf("the warning does not name the path's start and length: %.600s", warned[0])
	}
}
