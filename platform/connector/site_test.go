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
