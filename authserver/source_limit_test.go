package authserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/token/hmac"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
)

func TestRequestSourceGroupsIPv6By64(t *testing.T) {
	s := &Server{deps: Deps{ClientIP: directClientIP}}
	source := func(remote string) string {
		return s.requestSource(&http.Request{RemoteAddr: remote})
	}
	if a, b := source("[2001:db8:1:2::1]:5000"), source("[2001:db8:1:2:ffff::9]:6000"); a != b || a != "2001:db8:1:2::/64" {
		t.Errorf("one /64 gave %q and %q", a, b)
	}
	if a, b := source("[2001:db8:1:2::1]:5000"), source("[2001:db8:1:3::1]:5000"); a == b {
		t.Errorf("two /64s share %q", a)
	}
	if got := source("192.0.2.10:4000"); got != "192.0.2.10" {
		t.Errorf("IPv4 source %q", got)
	}
	if got := source("[::ffff:192.0.2.10]:4000"); got != "192.0.2.10" {
		t.Errorf("IPv4-mapped source %q", got)
	}
}

// TestTokenRequestsWithSignedTokensPassASpentSource: a token request is
// bounded with the MCP doors' made-up tokens, per source. A person's
// client refreshing at a shared address where someone else spent that
// bound got 429 until they stopped, and so lost its sign-in when its
// access token ran out. A refresh token or code erpgate signed passes a
// spent bound, uncharged; once it fails it is bounded again. A made-up
// one is refused as before. A revocation of a token erpgate signed passes
// too (a client signing out), once.
func TestTokenRequestsWithSignedTokensPassASpentSource(t *testing.T) {
	ctx := context.Background()
	s := &Server{
		log:     zap.NewNop(),
		lookups: sourcelimit.NewLookups(sourcelimit.Limit{Burst: 1, Every: time.Hour}, nil),
		signer:  &hmac.HMACStrategy{Config: &fosite.Config{GlobalSecret: []byte("0123456789abcdef0123456789abcdef")}},
	}
	request := func(form url.Values) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/oauth/token", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = "198.51.100.7:4000"
		return r
	}
	admit := func(form url.Values, signed func(*http.Request) ([32]byte, bool)) (func(), int) {
		w := httptest.NewRecorder()
		charge, ok := s.admitLookups(w, request(form), signed)
		if !ok {
			return nil, w.Code
		}
		return charge, http.StatusOK
	}
	// Someone else at the address spends its bound.
	charge, _ := admit(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"made-up"}}, s.signedGrantOf)
	charge()

	refresh, _, err := s.signer.Generate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	code, _, err := s.signer.Generate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	madeUp := refresh[:len(refresh)-4] + "AAAA"
	if refresh[len(refresh)-4:] == "AAAA" {
		madeUp = refresh[:len(refresh)-4] + "BBBB"
	}
	for name, form := range map[string]url.Values{
		"a made-up refresh token":            {"grant_type": {"refresh_token"}, "refresh_token": {madeUp}},
		"a signed token, another grant type": {"grant_type": {"client_credentials"}, "refresh_token": {refresh}},
		"a made-up token's revoking":         {"token": {madeUp}},
	} {
		signed := s.signedGrantOf
		if form.Has("token") {
			signed = s.signedRevocationOf
		}
		if _, status := admit(form, signed); status != http.StatusTooManyRequests {
			t.Errorf("%s from the spent source: HTTP %d, want 429", name, status)
		}
	}
	if _, status := admit(url.Values{"grant_type": {"authorization_code"}, "code": {code}}, s.signedGrantOf); status != http.StatusOK {
		t.Errorf("a signed code from the spent source: HTTP %d, want it let through", status)
	}
	// A client signing out: its revocation passes once, and the token,
	// revoked, is bounded from then on.
	access, _, err := s.signer.Generate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	revoked, status := admit(url.Values{"token": {access}}, s.signedRevocationOf)
	if status != http.StatusOK {
		t.Fatalf("a signed token's revoking from the spent source: HTTP %d, want it let through", status)
	}
	revoked()
	if _, status := admit(url.Values{"token": {access}}, s.signedRevocationOf); status != http.StatusTooManyRequests {
		t.Errorf("the revoked token's revoking again: HTTP %d, want 429", status)
	}
	charge, status = admit(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}, s.signedGrantOf)
	if status != http.StatusOK {
		t.Fatalf("a signed refresh token from the spent source: HTTP %d, want it let through", status)
	}
	charge() // it failed (say, revoked)
	if _, status := admit(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}, s.signedGrantOf); status != http.StatusTooManyRequests {
		t.Errorf("the signed refresh token again after it failed: HTTP %d, want 429", status)
	}
}
