package register

import (
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/store/sites"
)

// Whatever a person names their site, its slug is one the registry
// accepts, and two registrations of one name get different slugs.
func FuzzNewSlugIsValid(f *testing.F) {
	for _, s := range []string{"Demo Frappe Ltd", "", "---", "Ünïcødé GmbH", strings.Repeat("long name ", 20), "admin", "00000000-0000-0000-0000-000000000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		a, b := newSlug(name), newSlug(name)
		if err := sites.ValidateSlug(a); err != nil {
			t.Fatalf("newSlug(%q) = %q: %v", name, a, err)
		}
		if a == b {
			t.Fatalf("newSlug(%q) gave %q twice", name, a)
		}
	})
}

func TestSettingsOfTheStartForm(t *testing.T) {
	for _, tc := range []struct {
		f    startForm
		want string
	}{
		{startForm{Kind: "frappe"}, `{}`},
		{startForm{Kind: "frappe", DefaultCompany: "Acme", Tenant: "ignored"}, `{"default_company":"Acme"}`},
		{startForm{Kind: "acumatica", Tenant: "U100", EndpointName: "Default", EndpointVersion: "24.200.001", DefaultCompany: "ignored"},
			`{"endpoint_name":"Default","endpoint_version":"24.200.001","tenant":"U100"}`},
	} {
		got, err := settingsOf(tc.f)
		if err != nil || string(got) != tc.want {
			t.Errorf("%+v: %s (%v), want %s", tc.f, got, err, tc.want)
		}
	}
}
