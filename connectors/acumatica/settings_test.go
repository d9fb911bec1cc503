package acumatica

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

func TestNormalizeSettings(t *testing.T) {
	c := New(Options{})
	cases := []struct {
		in, want string
	}{
		{``, `{"endpoint_name":"Default","endpoint_version":"24.200.001"}`},
		{`null`, `{"endpoint_name":"Default","endpoint_version":"24.200.001"}`},
		{`{"tenant":" Demo ","endpoint_version":"25.200.001"}`, `{"endpoint_name":"Default","endpoint_version":"25.200.001","tenant":"Demo"}`},
		{`{"endpoint_name":"default","canary_gi":"AI Access","max_records":250}`, `{"endpoint_name":"Default","endpoint_version":"24.200.001","canary_gi":"AI Access","max_records":250}`},
		{`{"endpoint_name":"MyEndpoint","endpoint_version":"1.0"}`, `{"endpoint_name":"MyEndpoint","endpoint_version":"1.0"}`},
	}
	for _, tc := range cases {
		got, err := c.NormalizeSettings(json.RawMessage(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s → %s, %v; want %s", tc.in, got, err, tc.want)
		}
		// Normalising twice changes nothing.
		if again, _ := c.NormalizeSettings(got); string(again) != string(got) {
			t.Errorf("not idempotent: %s → %s", got, again)
		}
	}
	for _, bad := range []string{
		`{"endpoint_version":"23.200.001"}`, `{"endpoint_name":"../x"}`, `{"endpoint_version":"v1"}`,
		`{"tenant":"a/b"}`, `{"tenant":".."}`, `{"tenant":"."}`, `{"canary_gi":"<x>"}`, `{"max_records":-1}`, `{"max_records":100000}`, `{"tennant":"Demo"}`, `[]`,
	} {
		_, err := c.NormalizeSettings(json.RawMessage(bad))
		if codeOf(err) != toolerr.InvalidArgument || !strings.Contains(err.Error(), "invalid Acumatica settings") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}

func TestRecordCap(t *testing.T) {
	s := Settings{MaxRecords: 50}
	if got := s.recordCap(&connector.Call{MaxRecords: 1000}); got != 50 {
		t.Errorf("site cap = %d", got)
	}
	if got := (Settings{}).recordCap(&connector.Call{MaxRecords: 200}); got != 200 {
		t.Errorf("deployment cap = %d", got)
	}
	if got := (Settings{MaxRecords: 5000}).recordCap(&connector.Call{MaxRecords: 200}); got != 200 {
		t.Errorf("a site cannot raise the deployment cap: %d", got)
	}
}

func TestEnvelope(t *testing.T) {
	rows := []any{1, 2, 3, 4}
	if e := newEnvelope(rows[:3], 3, 10, "x"); e.Truncated || e.RecordsReturned != 3 || e.ActionRequired != "" {
		t.Errorf("exact fit = %+v", e)
	}
	if e := newEnvelope(rows, 3, 3, "x"); !e.Truncated || e.RecordsReturned != 3 || !strings.Contains(e.ActionRequired, "Do NOT call this tool again") {
		t.Errorf("at the cap = %+v", e)
	}
	if e := newEnvelope(rows, 3, 10, "x"); !e.Truncated || !strings.Contains(e.ActionRequired, "at most 10") {
		t.Errorf("below the cap = %+v", e)
	}
	if e := newEnvelope(nil, 3, 10, "x"); e.Results == nil || e.PaginationSupported {
		t.Errorf("empty = %+v", e)
	}
	if rowLimit(0, 1000) != 100 || rowLimit(5000, 1000) != 1000 {
		t.Error("rowLimit")
	}
}

// FuzzNormalizeSettings: any settings object the admin API or console is
// sent is either refused as invalid Acumatica settings, or normalised to
// settings that normalise to themselves and that the connector reads
// back as they were stored.
func FuzzNormalizeSettings(f *testing.F) {
	for _, seed := range []string{``, `null`, `{"tenant":" Demo ","endpoint_version":"25.200.001"}`,
		`{"endpoint_name":"default","canary_gi":"AI Access","max_records":250,"admin_gi":"erpgate-admins"}`,
		`{"endpoint_name":"MyEndpoint","endpoint_version":"1.0"}`, `{"tenant":"a/b"}`, `{"max_records":1e2}`, `[]`} {
		f.Add([]byte(seed))
	}
	c := New(Options{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := c.NormalizeSettings(json.RawMessage(raw))
		if err != nil {
			if codeOf(err) != toolerr.InvalidArgument || !strings.Contains(err.Error(), "invalid Acumatica settings") {
				t.Fatalf("%q: err = %v", raw, err)
			}
			return
		}
		if bytes.Contains(got, []byte(`\u0000`)) {
			t.Fatalf("%q → %s: a site's settings are stored as jsonb, which cannot hold \\u0000", raw, got)
		}
		again, err := c.NormalizeSettings(got)
		if err != nil || string(again) != string(got) {
			t.Fatalf("%q → %s → %s, %v", raw, got, again, err)
		}
		s, err := parseSettings(got)
		if err != nil || siteSettings(connector.Site{Settings: got}) != s {
			t.Fatalf("%q → %s is read back as %+v, %v", raw, got, siteSettings(connector.Site{Settings: got}), err)
		}
	})
}
