package acumaticatest

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// filterKeys runs a contract $filter and returns the first key of every
// returned record.
func filterKeys(t *testing.T, s *Server, tok, entity, filter string) (int, []string, string) {
	t.Helper()
	status, b := get(t, s.entityURL(Version24, entity, url.Values{"$filter": {filter}, "$select": {KeyFields(entity)[len(KeyFields(entity))-1]}}), tok)
	if status != http.StatusOK {
		return status, nil, string(b)
	}
	var out []string
	last := KeyFields(entity)[len(KeyFields(entity))-1]
	for _, row := range decodeList(t, b) {
		out = append(out, strings.Trim(value(t, row[last]), `"`))
	}
	return status, out, ""
}

func expectKeys(ds *Dataset, entity string, pred func(r *Record) bool) []string {
	last := KeyFields(entity)[len(KeyFields(entity))-1]
	var out []string
	for _, r := range ds.Records(entity) {
		if pred(r) {
			out = append(out, keyString(r.Fields[last]))
		}
	}
	return out
}

func TestContractFilterOperators(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	ds := s.Data()
	cutoff := date(2025, time.June, 1)
	so := ds.Records("SalesOrder")[7]
	cust := ds.Records("Customer")[4]
	thousand := DecimalFromInt(1000)
	cases := []struct {
		entity, filter string
		pred           func(r *Record) bool
	}{
		{"SalesOrder", "Status eq 'Open'", func(r *Record) bool { return r.String("Status") == "Open" }},
		{"SalesOrder", "Status ne 'Completed'", func(r *Record) bool { return r.String("Status") != "Completed" }},
		{"SalesOrder", "OrderTotal gt 1000", func(r *Record) bool { return r.Decimal("OrderTotal") > thousand }},
		{"SalesOrder", "OrderTotal ge 1000.0m and OrderType eq 'SO'", func(r *Record) bool {
			return r.Decimal("OrderTotal") >= thousand && r.String("OrderType") == "SO"
		}},
		{"SalesOrder", "OrderTotal lt 1000 or Status eq 'On Hold'", func(r *Record) bool {
			return r.Decimal("OrderTotal") < thousand || r.String("Status") == "On Hold"
		}},
		{"SalesOrder", "not (OrderTotal le 1000)", func(r *Record) bool { return !(r.Decimal("OrderTotal") <= thousand) }},
		{"SalesOrder", "Date ge datetimeoffset'2025-06-01T00:00:00+00:00'", func(r *Record) bool { return !r.Time("Date").Before(cutoff) }},
		{"SalesOrder", "Date lt datetimeoffset'2025-06-01'", func(r *Record) bool { return r.Time("Date").Before(cutoff) }},
		{"SalesOrder", "Date ge date'2025-06-01'", func(r *Record) bool { return !r.Time("Date").Before(cutoff) }},
		{"SalesOrder", "NoteID eq guid'" + strings.ToUpper(so.ID) + "'", func(r *Record) bool { return r.ID == so.ID }},
		{"SalesOrder", "Hold eq true", func(r *Record) bool { return r.Bool("Hold") }},
		{"Customer", "substringof('foods', CustomerName)", func(r *Record) bool {
			return strings.Contains(strings.ToLower(r.String("CustomerName")), "foods")
		}},
		{"Customer", "startswith(CustomerID, 'C00001')", func(r *Record) bool { return strings.HasPrefix(r.String("CustomerID"), "C00001") }},
		{"Customer", "endswith(CustomerName, 'LLC')", func(r *Record) bool { return strings.HasSuffix(r.String("CustomerName"), "LLC") }},
		{"Customer", "ParentRecord eq null", func(r *Record) bool { return r.String("ParentRecord") == "" }},
		{"Customer", "ParentRecord ne null", func(r *Record) bool { return r.String("ParentRecord") != "" }},
		{"Customer", "ParentRecord ne 'C000001'", func(r *Record) bool { // SQL: NULL <> x is not true
			return r.String("ParentRecord") != "" && r.String("ParentRecord") != "C000001"
		}},
		{"Customer", "customerid eq 'X'", nil},
		{"Customer", "MainContact/Email eq '" + cust.Link("MainContact").String("Email") + "'", func(r *Record) bool { return r == cust }},
		{"Contact", "ContactID eq 100005", func(r *Record) bool { return r.Int("ContactID") == 100005 }},
		{"Customer", "CustomerID eq 'c000005'", func(r *Record) bool { return r.String("CustomerID") == "C000005" }},
	}
	for _, c := range cases {
		status, got, body := filterKeys(t, s, tok, c.entity, c.filter)
		if c.pred == nil {
			if status != http.StatusInternalServerError {
				t.Errorf("%s: want error, got %d", c.filter, status)
			}
			continue
		}
		want := expectKeys(ds, c.entity, c.pred)
		if status != http.StatusOK || !slices.Equal(got, want) {
			t.Errorf("%s %q: status %d, %d keys, want %d %s", c.entity, c.filter, status, len(got), len(want), body)
		}
		if len(want) == 0 || len(want) == len(ds.Records(c.entity)) {
			t.Errorf("%q is not selective (%d of %d): the case proves nothing", c.filter, len(want), len(ds.Records(c.entity)))
		}
	}
}

// TestContractFilterStringFunctionEqTrue: the contract API answers a
// string function compared with true with no rows and no error, while the
// bare function (and the same comparison over OData v4) finds them.
func TestContractFilterStringFunctionEqTrue(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	want := expectKeys(s.Data(), "Customer", func(r *Record) bool {
		return strings.Contains(strings.ToLower(r.String("CustomerName")), "foods")
	})
	if len(want) == 0 {
		t.Fatal("no customer name contains foods: the case proves nothing")
	}
	status, got, body := filterKeys(t, s, tok, "Customer", "substringof('foods', CustomerName)")
	if status != http.StatusOK || !slices.Equal(got, want) {
		t.Fatalf("bare: status %d, %v, want %v %s", status, got, want, body)
	}
	for _, f := range []string{"substringof('foods', CustomerName) eq true", "startswith(CustomerID, 'C0') eq true", "true eq endswith(CustomerName, 'LLC')"} {
		status, got, body := filterKeys(t, s, tok, "Customer", f)
		if status != http.StatusOK || len(got) != 0 {
			t.Errorf("%q: status %d, %d keys %s, want 200 and none", f, status, len(got), body)
		}
	}
}

func TestContractFilterErrors(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	for _, c := range []struct{ filter, msg string }{
		{"contains(CustomerName,'Foods')", "Unknown function 'contains'."},
		{"NoSuchField eq 'x'", "Could not find a property named 'NoSuchField' on type 'Default.Customer'."},
		{"CreatedDateTime gt 'yesterday'", "A binary operator with incompatible types was detected. Found operand types 'Edm.DateTimeOffset' and 'Edm.String' for operator kind 'GreaterThan'."},
		{"CustomerID eq", "Syntax error at position 13 in 'CustomerID eq'."},
		{"CustomerName eq 'unterminated", "There is an unterminated string literal at position 16 in 'CustomerName eq 'unterminated'."},
		{"CustomerID", "The $filter expression must evaluate to a single boolean value."},
	} {
		status, _, body := filterKeys(t, s, tok, "Customer", c.filter)
		if status != http.StatusInternalServerError || !strings.Contains(body, `"exceptionMessage":`+jsonString(c.msg)) ||
			!strings.Contains(body, `"message":"An error has occurred."`) {
			t.Errorf("%q: %d %s", c.filter, status, body)
		}
	}
	// An unencoded '+' in a datetimeoffset literal arrives as a space and
	// breaks the literal, as on the real server.
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/entity/Default/24.200.001/SalesOrder?$filter=Date%20gt%20datetimeoffset'2025-01-01T00:00:00+02:00'", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(b), "Unrecognized 'Edm.DateTimeOffset' literal") {
		t.Errorf("unencoded '+': %d %s", resp.StatusCode, b)
	}
}
