package connector

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

func TestStatusCode(t *testing.T) {
	for status, want := range map[int]toolerr.Code{
		400: toolerr.InvalidArgument, 401: toolerr.AuthExpired, 403: toolerr.PermissionDenied,
		404: toolerr.NotFound, 408: toolerr.UpstreamTimeout, 409: toolerr.InvalidArgument,
		417: toolerr.InvalidArgument, 422: toolerr.InvalidArgument, 429: toolerr.RateLimited,
		500: toolerr.UpstreamUnavailable, 502: toolerr.UpstreamUnavailable, 503: toolerr.UpstreamUnavailable,
		504: toolerr.UpstreamTimeout, 599: toolerr.UpstreamUnavailable,
		302: toolerr.UpstreamInvalidResponse, 405: toolerr.UpstreamInvalidResponse, 410: toolerr.UpstreamInvalidResponse,
		600: toolerr.UpstreamInvalidResponse, 0: toolerr.UpstreamInvalidResponse,
	} {
		if got := StatusCode(status); got != want {
			t.Errorf("StatusCode(%d) = %s, want %s", status, got, want)
		}
	}
}

func TestHTTPError(t *testing.T) {
	e := HTTPError(429, "the ERP is rate limiting requests (HTTP 429); wait and retry", 7*time.Second)
	if e.Code != toolerr.RateLimited || e.RetryAfter != 7*time.Second || !e.Retryable() ||
		e.Message != "the ERP is rate limiting requests (HTTP 429); wait and retry" || e.Err != nil {
		t.Errorf("429: %+v", e)
	}
	if e := HTTPError(403, "no", -time.Second); e.Code != toolerr.PermissionDenied || e.RetryAfter != 0 || e.Retryable() {
		t.Errorf("403: %+v", e)
	}
	var te *toolerr.Error
	if err := error(HTTPError(404, "gone", 0)); !errors.As(err, &te) || toolerr.Classify(err).Code != toolerr.NotFound {
		t.Errorf("404 does not classify as NOT_FOUND: %v", err)
	}
}

type testSettings struct {
	Company    string   `json:"default_company"`
	MaxRecords int      `json:"max_records,omitempty"`
	Strict     bool     `json:"strict"`
	Tags       []string `json:"tags"`
	Hidden     string   `json:"-"`
	unexported int
}

func TestDecodeSettings(t *testing.T) {
	for _, in := range []string{``, `null`, ` null `, `{}`, " \n{} "} {
		s, err := DecodeSettings[testSettings](json.RawMessage(in))
		if err != nil || s.Company != "" || s.MaxRecords != 0 || s.unexported != 0 {
			t.Errorf("%q: %+v, %v", in, s, err)
		}
	}
	s, err := DecodeSettings[testSettings](json.RawMessage(`{"default_company":"Acme","max_records":50,"strict":true,"tags":["a"]}`))
	if err != nil || s.Company != "Acme" || s.MaxRecords != 50 || !s.Strict || len(s.Tags) != 1 {
		t.Errorf("good settings: %+v, %v", s, err)
	}
	const known = " (known settings: default_company, max_records, strict, tags)"
	for in, want := range map[string]string{
		`{"colour":"red"}`:                        `there is no setting “colour”` + known,
		`{"` + strings.Repeat("x", 5000) + `":1}`: `there is no setting “` + strings.Repeat("x", 64) + `…”` + known,
		`{"max_records":"50"}`:                    `the setting max_records must be a whole number, not a JSON string` + known,
		`{"max_records":1.5}`:                     `the setting max_records must be a whole number, not a JSON number` + known,
		`{"strict":"yes"}`:                        `the setting strict must be true or false, not a JSON string` + known,
		`{"default_company":7}`:                   `the setting default_company must be a string, not a JSON number` + known,
		`{"tags":"a"}`:                            `the setting tags must be a list, not a JSON string` + known,
		`["default_company"]`:                     `the settings must be one JSON object` + known,
		`"Acme"`:                                  `the settings must be one JSON object` + known,
		`{"default_company":"Acme"`:               `the settings are not valid JSON` + known,
		`{"default_company":"Acme"} {"x":1}`:      `the settings must be one JSON object, with nothing after it` + known,
		`{"default_company":"Acme",}`:             `the settings are not valid JSON` + known,
	} {
		_, err := DecodeSettings[testSettings](json.RawMessage(in))
		var te *toolerr.Error
		if !errors.As(err, &te) || te.Code != toolerr.InvalidArgument || te.Message != want {
			t.Errorf("%s:\n got %v\nwant INVALID_ARGUMENT: %s", in, err, want)
		}
	}
}

func FuzzDecodeSettings(f *testing.F) {
	f.Add([]byte(`{"default_company":"Acme","max_records":5}`))
	f.Add([]byte(`{"colour":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := DecodeSettings[testSettings](raw)
		if err != nil {
			var te *toolerr.Error
			if !errors.As(err, &te) || te.Code != toolerr.InvalidArgument || !strings.Contains(te.Message, "known settings") {
				t.Fatalf("%q: %v", raw, err)
			}
			return
		}
		// What decodes strictly is one object of known settings: encoding
		// it again and decoding that gives the same settings.
		again, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := DecodeSettings[testSettings](again)
		if err != nil || s2.Company != s.Company || s2.MaxRecords != s.MaxRecords || s2.Strict != s.Strict {
			t.Fatalf("%q: again %s: %+v, %v", raw, again, s2, err)
		}
	})
}

func TestNewPageMeta(t *testing.T) {
	for _, c := range []struct {
		offset, limit, fetched int
		wantKept               int
		wantNext               int // -1: none
	}{
		{0, 20, 0, 0, -1},
		{0, 20, 5, 5, -1},
		{0, 20, 20, 20, -1},
		{0, 20, 21, 20, 20},
		{40, 20, 21, 20, 60},
		{40, 20, 3, 3, -1},
	} {
		m, kept := NewPageMeta(c.offset, c.limit, c.fetched, "name asc")
		next := -1
		if m.NextOffset != nil {
			next = *m.NextOffset
		}
		if kept != c.wantKept || m.Returned != c.wantKept || next != c.wantNext || m.Complete != (c.wantNext < 0) ||
			m.Offset != c.offset || m.Limit != c.limit || m.OrderBy != "name asc" {
			t.Errorf("NewPageMeta(%d, %d, %d) = %+v, %d", c.offset, c.limit, c.fetched, m, kept)
		}
	}
	m, _ := NewPageMeta(0, 2, 3, "modified desc, name desc")
	b, _ := json.Marshal(m)
	if want := `{"offset":0,"limit":2,"returned":2,"order_by":"modified desc, name desc","next_offset":2,"complete":false}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	m, _ = NewPageMeta(0, 2, 1, "name")
	if b, _ := json.Marshal(m); !strings.Contains(string(b), `"next_offset":null,"complete":true`) {
		t.Errorf("last page: %s", b)
	}
}

func TestPageArgs(t *testing.T) {
	n := func(v int) *int { return &v }
	for _, c := range []struct {
		args       PageArgs
		maxRecords int
		offset     int
		limit      int
	}{
		{PageArgs{}, 1000, 0, 20},
		{PageArgs{Offset: n(40), Limit: n(5)}, 1000, 40, 5},
		{PageArgs{Limit: n(500)}, 1000, 0, 100},
		{PageArgs{Limit: n(50)}, 30, 0, 30},
		{PageArgs{}, 0, 0, 1},
	} {
		if o, l := c.args.OffsetOrZero(), c.args.LimitOr(20, 100, c.maxRecords); o != c.offset || l != c.limit {
			t.Errorf("%+v (max records %d): offset %d, limit %d; want %d, %d", c.args, c.maxRecords, o, l, c.offset, c.limit)
		}
	}
}

// TestCallDecodeTellsInPlainWords: arguments that passed the input schema
// but do not fit the handler's struct (5.5 for a whole number) are
// refused naming the argument by its
// JSON name and saying what to send, not with Go's type names and struct
// paths ("pageArgs.PageArgs.limit" must be int).
func TestCallDecodeTellsInPlainWords(t *testing.T) {
	type page struct {
		Limit *int `json:"limit"`
	}
	var args struct {
		page
		Names []string `json:"names"`
		Flag  bool     `json:"flag"`
	}
	for in, want := range map[string]string{
		`{"limit":5.5}`:    `"limit" must be a whole number, such as 5`,
		`{"names":"a"}`:    `"names" must be a list`,
		`{"flag":"yes"}`:   `"flag" must be true or false`,
		`{"unknown":true}`: `the arguments do not fit this tool`,
	} {
		err := (&Call{Args: json.RawMessage(in)}).Decode(&args)
		var te *toolerr.Error
		if !errors.As(err, &te) || te.Code != toolerr.InvalidArgument || !strings.Contains(te.Message, want) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT saying %s", in, err, want)
		}
		for _, lib := range []string{"must be int", "[]string", "must be bool", "page.", "json:"} {
			if te != nil && strings.Contains(te.Message, lib) {
				t.Errorf("%s: message %q carries Go's text (%q)", in, te.Message, lib)
			}
		}
	}
}

// TestCallDecodeTakesWholeNumbersWithAFraction: JSON Schema counts 5.0,
// 5e0 and 1e2 as integers, so a tool's input schema lets them through;
// the handler takes them as the whole numbers they are, rather than
// refusing what the schema accepted. A number with a fraction is still
// refused.
func TestCallDecodeTakesWholeNumbersWithAFraction(t *testing.T) {
	type page struct {
		Limit *int `json:"limit"`
	}
	type args struct {
		page
		Qty  json.Number `json:"qty"`
		Days []uint8     `json:"days"`
	}
	for in, want := range map[string]int{
		`{"limit":5.0}`:                  5,
		`{"limit":5.000,"qty":2.5}`:      5,
		`{"limit":5e0}`:                  5,
		`{"limit":0.5E1}`:                5,
		`{"limit":1e2}`:                  100,
		`{"limit":-0.0}`:                 0,
		`{"limit":7,"days":[1.0,2e0,3]}`: 7,
	} {
		var a args
		if err := (&Call{Args: json.RawMessage(in)}).Decode(&a); err != nil {
			t.Errorf("%s: %v, want limit %d", in, err, want)
			continue
		}
		if a.Limit == nil || *a.Limit != want {
			t.Errorf("%s: limit %v, want %d", in, a.Limit, want)
		}
		if a.Qty != "" && a.Qty != "2.5" {
			t.Errorf("%s: qty %q, want 2.5", in, a.Qty)
		}
	}
	for _, in := range []string{`{"limit":5.5}`, `{"limit":1e-1}`, `{"limit":1e400}`, `{"days":[1.5]}`} {
		var a args
		err := (&Call{Args: json.RawMessage(in)}).Decode(&a)
		var te *toolerr.Error
		if !errors.As(err, &te) || te.Code != toolerr.InvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT", in, err)
		}
	}
}
