package frappe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// decimalGrammar is a decimal literal as JSON and Python print numbers,
// with an optional sign and exponent: the reference parseDecimal agrees
// with.
var decimalGrammar = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// FuzzParseDecimal checks the amount parser on any text (an ERP's number,
// a caller's qty): it accepts exactly the decimal literals big.Rat reads,
// with the value big.Rat gives, within a size every computation handles
// quickly; and decimalNumber renders an accepted value so that it parses
// back to the same value.
func FuzzParseDecimal(f *testing.F) {
	for _, seed := range []string{"1180.0", "0.0", "-1787.8599999999933", "1e+16", "4316.700000000001",
		"5e-324", "1.7976931348623157e+308", "1/3", "NaN", "Infinity", " 12 ", "", "+.5", "1_000", "0x10", "1e"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, ok := parseDecimal(s)
		ref, refOK := new(big.Rat), false
		if trimmed := trimSpace(s); decimalGrammar.MatchString(trimmed) {
			ref, refOK = ref.SetString(trimmed)
		}
		if !ok {
			return
		}
		if r.Num().BitLen() > connector.MaxNumberBits || r.Denom().BitLen() > connector.MaxNumberBits {
			t.Fatalf("parseDecimal(%q) accepted a number of %d/%d bits", s, r.Num().BitLen(), r.Denom().BitLen())
		}
		if !refOK {
			t.Fatalf("parseDecimal(%q) accepted text that is not a decimal literal", s)
		}
		if r.Cmp(ref) != 0 {
			t.Fatalf("parseDecimal(%q) = %s, big.Rat reads %s", s, r.RatString(), ref.RatString())
		}
		if p := terminatingPlaces(r); p >= 0 && p <= 18 {
			back, ok := parseDecimal(decimalNumber(r).String())
			if !ok || back.Cmp(r) != 0 {
				t.Fatalf("decimalNumber(%q) = %s, which does not parse back", s, decimalNumber(r))
			}
		}
	})
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' || s[0] == '\v' || s[0] == '\f') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t' || s[len(s)-1] == '\n' || s[len(s)-1] == '\r' || s[len(s)-1] == '\v' || s[len(s)-1] == '\f') {
		s = s[:len(s)-1]
	}
	return s
}

// FuzzSplitRows checks the list-answer splitter against encoding/json:
// a body whose data member is an array of objects gives those objects,
// in order; anything else is an UPSTREAM_INVALID_RESPONSE.
func FuzzSplitRows(f *testing.F) {
	for _, seed := range []string{
		// /work/shared/erp-api/frappe/samples/01_list_sales_invoice.json
		"{\n \"data\": [\n  {\n   \"name\": \"ACC-SINV-2025-00002\",\n   \"customer\": \"CUST-0001\",\n   \"grand_total\": 1180.0,\n   \"outstanding_amount\": 1180.0,\n   \"status\": \"Unpaid\",\n   \"posting_date\": \"2025-03-02\",\n   \"docstatus\": 1\n  },\n  {\n   \"name\": \"ACC-SINV-2025-00001\",\n   \"customer\": \"CUST-0002\",\n   \"grand_total\": 500.0,\n   \"outstanding_amount\": 0.0,\n   \"status\": \"Paid\",\n   \"posting_date\": \"2025-03-01\",\n   \"docstatus\": 1\n  }\n ]\n}\n",
		`{"data":[]}`, `{"data":[1]}`, `{"message":[{"name":"CUST-0001"}]}`, `{"data":{}}`, `{"data":[{"a":"\u00e9"}],"data":[]}`, `[]`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rows, err := splitRows(body, "Sales Invoice")
		if err != nil {
			var te *toolerr.Error
			if !errors.As(err, &te) || te.Message == "" {
				t.Fatalf("splitRows(%q) failed without a plain message: %v", body, err)
			}
			return
		}
		for _, r := range rows {
			if _, err := decodeRow(r); err != nil {
				t.Fatalf("splitRows(%q) gave row %q, which does not decode: %v", body, r, err)
			}
		}
		var ref struct {
			Data []map[string]json.RawMessage `json:"data"`
		}
		if json.Unmarshal(body, &ref) == nil && ref.Data != nil && len(ref.Data) != len(rows) {
			t.Fatalf("splitRows(%q) gave %d rows, encoding/json %d", body, len(rows), len(ref.Data))
		}
	})
}

// FuzzParseRecordID: a search result id either names a DocType fetch can
// read and a name, or is refused as an invalid argument.
func FuzzParseRecordID(f *testing.F) {
	for _, seed := range []string{"Sales Invoice/ACC-SINV-2025-00001", "Customer/CUST-0001", "Customer/", "Note/x", "no-slash", "Item/a/b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		doctype, name, err := parseRecordID(id)
		if err != nil {
			var te *toolerr.Error
			if !errors.As(err, &te) || te.Code != toolerr.InvalidArgument {
				t.Fatalf("parseRecordID(%q): %v, want an invalid argument", id, err)
			}
			return
		}
		if _, ok := documentShapes[doctype]; !ok || name == "" || doctype+"/"+name != id {
			t.Fatalf("parseRecordID(%q) = %q, %q", id, doctype, name)
		}
	})
}

// FuzzUpstreamError classifies any failed answer: a code, and a message
// in valid UTF-8 that quotes at most 500 bytes of the ERP's own text and
// never its traceback.
func FuzzUpstreamError(f *testing.F) {
	// /work/shared/erp-api/frappe/samples/14_error_417_validation.json and
	// 11_error_403_list_no_permission.json
	f.Add(417, []byte(`{"exception": "frappe.exceptions.ValidationError: Operator must be one of =, !=, >, <","exc_type": "ValidationError","exc": "[\"Traceback (most recent call last):\\n  File \\\"apps/frappe/frappe/app.py\\\", line 114, in application\\n\"]","_server_messages": "[\"{\\\"message\\\": \\\"Operator must be one of =, !=, >, <, >=, <=, like, not like, in, not in, is, between, timespan, previous, next, ancestors of, descendants of, not ancestors of, not descendants of, descendants of (inclusive)\\\", \\\"title\\\": \\\"Message\\\", \\\"indicator\\\": \\\"red\\\", \\\"raise_exception\\\": 1}\"]"}`))
	f.Add(403, []byte(`{"exception": "frappe.exceptions.PermissionError","exc_type": "PermissionError","exc": "[\"Traceback (most recent call last):\\n\"]","_server_messages": "[\"{\\\"message\\\": \\\"User <strong>jane@example.com</strong> does not have doctype access via role permission for document <strong>Sales Invoice</strong>\\\", \\\"title\\\": \\\"Message\\\"}\"]","_error_message": "No permission for Sales Invoice"}`))
	f.Add(404, []byte(`{"_error_message":"Sales Invoice ACC-SINV-2025-99999 not found"}`))
	f.Add(429, []byte(`not json`))
	f.Add(502, []byte(``))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 599 || (status >= 200 && status < 300) {
			return
		}
		e := upstreamError(status, http.Header{}, body)
		if e == nil || e.Code == "" || e.Message == "" {
			t.Fatalf("upstreamError(%d, %q) = %v", status, body, e)
		}
		if !utf8.ValidString(e.Message) {
			t.Fatalf("upstreamError(%d, %q): message %q is not valid UTF-8", status, body, e.Message)
		}
		if strings.Contains(e.Message, "Traceback") && !bytes.Contains(body, []byte(`message`)) {
			t.Fatalf("upstreamError(%d, %q): message %q quotes a traceback", status, body, e.Message)
		}
	})
}

// FuzzNormalizeSettings: any settings object is either refused as
// invalid Frappe settings, or normalised to settings that normalise to
// themselves and that the connector reads back as stored.
func FuzzNormalizeSettings(f *testing.F) {
	for _, seed := range []string{``, `null`, `{"default_company":" Demo Holdings NZ Ltd "}`, `{"default_company":1}`, `{"company":"x"}`, `[]`} {
		f.Add([]byte(seed))
	}
	c := &Connector{}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := c.NormalizeSettings(json.RawMessage(raw))
		if err != nil {
			var te *toolerr.Error
			if !errors.As(err, &te) || te.Code != toolerr.InvalidArgument || !strings.HasPrefix(te.Message, "invalid Frappe settings: ") {
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
		var s Settings
		if json.Unmarshal(got, &s) != nil || siteSettings(connector.Site{Settings: got}) != s {
			t.Fatalf("%q → %s is not read back", raw, got)
		}
	})
}

// FuzzResolveRange: any date arguments either resolve to a range of two
// calendar dates, the first not after the last and within the tool's
// bound, or are refused as an invalid argument.
func FuzzResolveRange(f *testing.F) {
	for _, seed := range [][4]string{
		{"2025-01-01", "2025-03-31", "", ""}, {"", "", "last_month", "2025-03-15"}, {"", "", "last_90_days", "2024-03-01"},
		{"", "", "current_fiscal_year", "2025-03-15"}, {"2025-02-30", "2025-03-01", "", ""}, {"2025-03-01", "2025-01-01", "", ""},
		{"0001-01-01", "9999-12-31", "", ""}, {"", "", "last_90_days", "0001-01-05"}, {"2025-01-01", "", "last_month", ""},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], true, 366)
	}
	f.Fuzz(func(t *testing.T, from, to, period, asOf string, required bool, maxDays int) {
		if maxDays < 0 {
			maxDays = -maxDays
		}
		a := dateArgs{FromDate: from, ToDate: to, Period: period, AsOfDate: asOf}
		r, err := resolveRange(context.Background(), nil, a, rangeRules{required: required, maxDays: maxDays})
		if err != nil {
			var te *toolerr.Error
			if !errors.As(err, &te) || te.Code != toolerr.InvalidArgument || te.Message == "" {
				t.Fatalf("%+v: %v, want an invalid argument", a, err)
			}
			return
		}
		if r == nil {
			if required {
				t.Fatalf("%+v: no range, but one is required", a)
			}
			return
		}
		f, err1 := time.Parse(dateLayout, r.From)
		l, err2 := time.Parse(dateLayout, r.To)
		if err1 != nil || err2 != nil || f.After(l) {
			t.Fatalf("%+v resolved to %s .. %s", a, r.From, r.To)
		}
		if days := int(l.Sub(f).Hours()/24) + 1; maxDays > 0 && (days > maxDays || r.days() != days) {
			t.Fatalf("%+v resolved to %s .. %s, %d days (days() says %d), bound %d", a, r.From, r.To, days, r.days(), maxDays)
		}
	})
}
