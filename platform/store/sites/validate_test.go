package sites_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/store/sites"
)

func TestValidateSlug(t *testing.T) {
	valid := []string{"a", "acme", "acme-nz", "0", "a1-b2", "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv"}
	for _, s := range valid {
		if err := sites.ValidateSlug(s); err != nil {
			t.Errorf("ValidateSlug(%q) = %v, want nil", s, err)
		}
	}
	invalid := []string{
		"", "-acme", "acme-", "Acme", "ac_me", "ac me", "acme.nz", "ünï",
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvw", // 49
		"api", "admin", "service", "static", "mcp", "well-known",
		"6f1c1f9e-4b7a-4c43-9d1e-2a4f3f0b8c11", "6f1c1f9e4b7a4c439d1e2a4f3f0b8c11", // UUID-shaped
	}
	for _, s := range invalid {
		err := sites.ValidateSlug(s)
		if err == nil {
			t.Errorf("ValidateSlug(%q) = nil, want an error", s)
			continue
		}
		if !errors.Is(err, sites.ErrInvalid) {
			t.Errorf("ValidateSlug(%q) = %v, want ErrInvalid", s, err)
		}
	}
}

func TestNormalizeBaseURL(t *testing.T) {
	devHost := func(host string) bool { return host == "erp.dev.internal" }
	cases := []struct{ in, want string }{
		{"https://erp.example.com", "https://erp.example.com"},
		{"  HTTPS://ERP.Example.COM/  ", "https://erp.example.com"},
		{"https://erp.example.com:443", "https://erp.example.com"},
		{"https://erp.example.com:8443/", "https://erp.example.com:8443"},
		{"http://localhost:8000", "http://localhost:8000"},
		{"http://127.0.0.1:80", "http://127.0.0.1"},
		{"http://[::1]:8000/", "http://[::1]:8000"},
		{"http://bench.localhost", "http://bench.localhost"},
		{"http://erp.dev.internal:8080", "http://erp.dev.internal:8080"},
		{"https://[2001:db8::1]", "https://[2001:db8::1]"},
		{"https://xn--bcher-kva.example", "https://xn--bcher-kva.example"},
	}
	for _, c := range cases {
		got, err := sites.NormalizeBaseURL(c.in, devHost)
		if err != nil || got != c.want {
			t.Errorf("NormalizeBaseURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	invalid := []string{
		"", "erp.example.com", "ftp://erp.example.com", "https://", "https:erp.example.com",
		"http://erp.example.com",          // https required
		"http://erp.dev.internal.evil",    // not the dev host
		"https://user:pw@erp.example.com", // userinfo
		"https://erp.example.com/app",     // path
		"https://erp.example.com/?x=1", "https://erp.example.com?", "https://erp.example.com/#top",
		"https://erp.example.com:0", "https://erp.example.com:70000",
		"https://erp_1.example.com", "https://bücher.example", "https://[fe80::1%25eth0]",
	}
	for _, in := range invalid {
		got, err := sites.NormalizeBaseURL(in, devHost)
		if err == nil {
			t.Errorf("NormalizeBaseURL(%q) = %q, want an error", in, got)
			continue
		}
		if !errors.Is(err, sites.ErrInvalid) {
			t.Errorf("NormalizeBaseURL(%q) error %v is not ErrInvalid", in, err)
		}
	}
	if _, err := sites.NormalizeBaseURL("http://erp.dev.internal", nil); err == nil {
		t.Error("a nil isDevHost must not allow plain http for a non-loopback host")
	}
}

// An instance under a virtual directory keeps its path, in one spelling:
// no trailing slash, no empty or dot segments, no escapes.
func TestNormalizeBaseURLPath(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://erp.example.com/AcumaticaERP/", "https://erp.example.com/AcumaticaERP"},
		{"  HTTPS://ERP.Example.COM:443/AcumaticaERP//  ", "https://erp.example.com/AcumaticaERP"},
		{"https://erp.example.com/erp/Acumatica_2025-R2", "https://erp.example.com/erp/Acumatica_2025-R2"},
		{"https://erp.example.com/", "https://erp.example.com"},
		{"https://erp.example.com", "https://erp.example.com"},
		{"http://127.0.0.1:8080/AcumaticaERP", "http://127.0.0.1:8080/AcumaticaERP"},
	}
	for _, c := range cases {
		got, err := sites.NormalizeBaseURLPath(c.in, nil)
		if err != nil || got != c.want {
			t.Errorf("NormalizeBaseURLPath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{
		"https://erp.example.com/a//b", "https://erp.example.com/a/../b", "https://erp.example.com/./a",
		"https://erp.example.com/a%2Fb", "https://erp.example.com/My%20ERP", "https://erp.example.com/a;b",
		"https://erp.example.com/AcumaticaERP?x=1", "https://erp.example.com/AcumaticaERP#x",
		"http://erp.example.com/AcumaticaERP", "https://erp.example.com/" + strings.Repeat("a", 201),
	} {
		if got, err := sites.NormalizeBaseURLPath(in, nil); !errors.Is(err, sites.ErrInvalid) {
			t.Errorf("NormalizeBaseURLPath(%q) = %q, %v; want ErrInvalid", in, got, err)
		}
	}
	if _, err := sites.NormalizeBaseURL("https://erp.example.com/AcumaticaERP", nil); !errors.Is(err, sites.ErrInvalid) {
		t.Errorf("NormalizeBaseURL kept a path: %v", err)
	}
}

// FuzzNormalizeBaseURLPath holds the normal form to one spelling: its
// output normalises to itself, and is an origin with at most a clean path.
func FuzzNormalizeBaseURLPath(f *testing.F) {
	for _, s := range []string{"https://erp.example.com/AcumaticaERP/", "https://a.b/x/../y", "http://[::1]:80/a//", "https://a.b/%2e%2e", "https://A.B:443/c/d/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := sites.NormalizeBaseURLPath(raw, nil)
		if err != nil {
			if !errors.Is(err, sites.ErrInvalid) {
				t.Fatalf("%q: error %v is not ErrInvalid", raw, err)
			}
			return
		}
		again, err := sites.NormalizeBaseURLPath(got, nil)
		if err != nil || again != got {
			t.Fatalf("%q → %q → %q, %v", raw, got, again, err)
		}
		u, err := url.Parse(got)
		if err != nil || u.RawPath != "" || strings.HasSuffix(u.Path, "/") || strings.Contains(u.Path, "//") ||
			strings.Contains(u.Path, "/./") || strings.Contains(u.Path+"/", "/../") || strings.Contains(u.Path+"/", "/./") {
			t.Fatalf("%q → %q is not in normal form", raw, got)
		}
		if _, err := (sites.Site{Slug: "x", BaseURL: got}).Connector(); err != nil {
			t.Fatalf("%q → %q is refused by Site.Connector: %v", raw, got, err)
		}
	})
}

// TestNamesRefuseInvisibleReordering: a service token's name and a site's
// display name are shown next to others on the owner page and in the
// console (which token to revoke, which site is which), and written to
// audit lines. Bidirectional controls (U+202E and its kin) reorder what
// follows them invisibly, and a line or paragraph separator breaks a line
// as a newline does: either lets one name pass for another. Letters of
// every script, and emoji joined with U+200D, stay allowed.
func TestNamesRefuseInvisibleReordering(t *testing.T) {
	for _, name := range []string{"bot\u202enim-dorp", "\u2066prod\u2069", "a\u200fb", "payroll\u2028bot", "x\u2029y"} {
		if err := sites.ValidateTokenName(name); err == nil {
			t.Errorf("ValidateTokenName(%q) = nil, want an error", name)
		}
		if err := sites.ValidateDisplayName(name); err == nil {
			t.Errorf("ValidateDisplayName(%q) = nil, want an error", name)
		}
	}
	for _, name := range []string{"Nightly sync", "Überweisung", "مزامنة", "同期ボット", "family \U0001F468\u200d\U0001F469\u200d\U0001F467"} {
		if err := sites.ValidateTokenName(name); err != nil {
			t.Errorf("ValidateTokenName(%q) = %v, want nil", name, err)
		}
		if err := sites.ValidateDisplayName(name); err != nil {
			t.Errorf("ValidateDisplayName(%q) = %v, want nil", name, err)
		}
	}
}
