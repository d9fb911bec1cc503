package acumaticatest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestVersionDifferences(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	te := s.Data().Records("TimeEntry")[0]
	_, b24 := get(t, s.entityURL(Version24, "TimeEntry/"+te.ID, nil), tok)
	_, b25 := get(t, s.entityURL(Version25, "TimeEntry/"+te.ID, nil), tok)
	k24, k25 := topLevelKeys(t, b24), topLevelKeys(t, b25)
	if !slices.Contains(k24, "Time") || slices.Contains(k25, "Time") || !slices.Contains(k25, "TimeZone") || slices.Contains(k24, "TimeZone") {
		t.Errorf("TimeEntry.Time/TimeZone by version: 24 %v, 25 %v", k24, k25)
	}
	if !strings.Contains(string(b24), `"_links":{"self":"/entity/Default/24.200.001/TimeEntry/`) ||
		!strings.Contains(string(b25), `"_links":{"self":"/entity/Default/25.200.001/TimeEntry/`) {
		t.Error("_links must name the requested version")
	}
	so := s.Data().Records("SalesOrder")[0]
	_, b := get(t, s.entityURL(Version25, "SalesOrder/"+so.ID, url.Values{"$expand": {"ShipToAddress"}}), tok)
	if !strings.Contains(string(b), `"StreetName":{}`) {
		t.Errorf("25.200.001 Address must carry structured parts: %.300s", b)
	}
	_, b = get(t, s.entityURL(Version24, "SalesOrder/"+so.ID, url.Values{"$expand": {"ShipToAddress"}}), tok)
	if strings.Contains(string(b), `"StreetName"`) {
		t.Error("24.200.001 Address has no structured parts")
	}
}

func TestPatchOnlyOn25(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	c := s.Data().Records("Customer")[2]
	body := `{"CustomerID":{"value":"` + c.String("CustomerID") + `"},"CustomerName":{"value":"Renamed Ltd."}}`
	resp, b := call(t, http.MethodPatch, s.entityURL(Version24, "Customer", nil), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PATCH on 24.200.001: %d %s", resp.StatusCode, b)
	}
	resp, b = call(t, http.MethodPatch, s.entityURL(Version25, "Customer", nil), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"CustomerName":{"value":"Renamed Ltd."}`) {
		t.Fatalf("PATCH on 25.200.001: %d %.300s", resp.StatusCode, b)
	}
	if got := s.Data().Find("Customer", c.String("CustomerID")).String("CustomerName"); got != "Renamed Ltd." {
		t.Errorf("stored name %q", got)
	}
	resp, b = call(t, http.MethodPatch, s.entityURL(Version25, "Customer", nil), tok,
		strings.NewReader(`{"CustomerID":{"value":"NOSUCH"},"CustomerName":{"value":"x"}}`))
	if resp.StatusCode != http.StatusNotFound || string(b) != `{"message":"The specified record cannot be found in the system."}` {
		t.Errorf("PATCH missing: %d %s", resp.StatusCode, b)
	}
}

func TestSwaggerPerVersion(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	if status, _ := get(t, s.entityURL(Version24, "swagger.json", nil), ""); status != http.StatusUnauthorized {
		t.Errorf("swagger.json needs a token: %d", status)
	}
	for _, v := range []string{Version24, Version25} {
		status, b := get(t, s.entityURL(v, "swagger.json", nil), tok)
		if status != http.StatusOK {
			t.Fatalf("%s swagger: %d", v, status)
		}
		var doc struct {
			Info       struct{ Title string }
			Servers    []struct{ URL string }
			Paths      map[string]map[string]json.RawMessage
			Components struct {
				Schemas map[string]json.RawMessage
			}
		}
		mustUnmarshal(t, b, &doc)
		if doc.Info.Title != "Default/"+v || len(doc.Servers) != 1 || doc.Servers[0].URL != s.URL+"/entity/Default/"+v {
			t.Errorf("%s: title %q servers %v", v, doc.Info.Title, doc.Servers)
		}
		_, patch := doc.Paths["/Customer"]["patch"]
		_, retainage := doc.Components.Schemas["BillRetainageDocument"]
		if patch != (v == Version25) || retainage != (v == Version25) {
			t.Errorf("%s: patch %v, BillRetainageDocument %v", v, patch, retainage)
		}
		if len(doc.Paths) < 800 {
			t.Errorf("%s: only %d paths", v, len(doc.Paths))
		}
	}
}
