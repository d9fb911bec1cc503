package pagekit

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzUserSession: a session started for any ERP user id comes back, by
// the browser's Cookie header, as that user on its scope until it
// expires, and as nobody on another scope or afterwards; a Cookie header
// the browser made up (the fuzzer's bytes) never names anyone.
func FuzzUserSession(f *testing.F) {
	f.Add("ana@example.com", "__Host-erpgate_owner=abc.123.def")
	f.Add("", "__Host-erpgate_owner=")
	f.Add("a|b", "__Host-erpgate_owner=c2l0ZS0xfGFuYQ.1800001800.x; other=1")
	f.Add("é\x00\xff", `__Host-erpgate_owner="quoted"`)
	f.Add("bob", "__Host-erpgate_owner=c2l0ZS0xfGJvYg.9999999999.")
	kit, err := New("https://gw.example")
	if err != nil {
		f.Fatal(err)
	}
	s := UserSession{Kit: kit, Signer: NewSigner([]byte(strings.Repeat("k", 32))), Cookie: "erpgate_owner", Purpose: "owner", Lifetime: 30 * time.Minute, Ends: &memEnds{}}
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, user, header string) {
		rec := httptest.NewRecorder()
		if _, err := s.Start(rec, httptest.NewRequest(http.MethodGet, "https://gw.example/", nil), "site-1", user, now); err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, "https://gw.example/", nil)
		for _, c := range rec.Result().Cookies() {
			r.AddCookie(c)
		}
		got, ok, _ := s.User(r, "site-1", now.Add(29*time.Minute))
		if user == "" {
			if ok {
				t.Fatalf("a session without a user names %q", got)
			}
		} else if !ok || got != user {
			t.Fatalf("session of %q came back as %q, %v", user, got, ok)
		}
		if got, ok, _ := s.User(r, "site-2", now); ok {
			t.Fatalf("session of %q on site-1 names %q on site-2", user, got)
		}
		if got, ok, _ := s.User(r, "site-1", now.Add(30*time.Minute)); ok {
			t.Fatalf("expired session of %q names %q", user, got)
		}
		forged := httptest.NewRequest(http.MethodGet, "https://gw.example/", nil)
		forged.Header.Set("Cookie", header)
		if got, ok, _ := s.User(forged, "site-1", now); ok {
			t.Fatalf("Cookie header %q names %q", header, got)
		}
	})
}
