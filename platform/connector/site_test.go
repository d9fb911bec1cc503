package connector

import (
	"net/url"
	"testing"
)

func TestSiteURLKeepsEscapedSegments(t *testing.T) {
	base, _ := url.Parse("https://erp.example:8443")
	s := Site{BaseURL: base}
	got := s.URL("/api/resource/Sales%20Invoice/ACC%2FX%201", url.Values{"fields": {`["name"]`}})
	want := "https://erp.example:8443/api/resource/Sales%20Invoice/ACC%2FX%201?fields=%5B%22name%22%5D"
	if got != want {
		t.Errorf("URL = %s, want %s", got, want)
	}
}

// An instance under a virtual directory (https://host/AcumaticaERP) has
// every URL built under that directory, the escaped segments kept.
func TestSiteURLUnderBasePath(t *testing.T) {
	base, _ := url.Parse("https://erp.example/AcumaticaERP")
	s := Site{BaseURL: base}
	for path, want := range map[string]string{
		"/identity/connect/token":            "https://erp.example/AcumaticaERP/identity/connect/token",
		"/entity/Default/24.200.001/Account": "https://erp.example/AcumaticaERP/entity/Default/24.200.001/Account",
		"/t/My%20Co/api/odata/gi/MCPAccess":  "https://erp.example/AcumaticaERP/t/My%20Co/api/odata/gi/MCPAccess",
		"/entity/Default/1/Item/A%2FB":       "https://erp.example/AcumaticaERP/entity/Default/1/Item/A%2FB",
	} {
		if got := s.URL(path, nil); got != want {
			t.Errorf("URL(%s) = %s, want %s", path, got, want)
		}
	}
}
