package frappetest

import (
	"encoding/json"
	"strings"
	"testing"
)

const (
	auCompany = "Demo Trading AU Pty Ltd"
	usCompany = "Demo Services US Inc"
)

// reportResp is a decoded query_report.run answer.
type reportResp struct {
	resp
	msg     map[string]any
	rows    []map[string]any // object rows (spacers included)
	tail    []any            // a trailing list row (the total row), if any
	columns []map[string]any
}

// runReport calls query_report.run as user with filters (JSON-encoded).
func runReport(t *testing.T, s *Server, user User, name string, filters map[string]any, extra map[string]string) reportResp {
	t.Helper()
	params := map[string]string{"report_name": name}
	if filters != nil {
		params["filters"] = js(filters)
	}
	for k, v := range extra {
		params[k] = v
	}
	r := reportResp{resp: call(t, s, tokenAuth(user), "/api/method/frappe.desk.query_report.run", params)}
	if r.status != 200 {
		return r
	}
	r.msg, _ = r.body["message"].(map[string]any)
	res, _ := r.msg["result"].([]any)
	for i, e := range res {
		switch x := e.(type) {
		case map[string]any:
			r.rows = append(r.rows, x)
		case []any:
			if i != len(res)-1 {
				t.Fatalf("list row before the end of %s", name)
			}
			r.tail = x
		}
	}
	cols, _ := r.msg["columns"].([]any)
	for _, c := range cols {
		r.columns = append(r.columns, c.(map[string]any))
	}
	return r
}

func mustReport(t *testing.T, s *Server, name string, filters map[string]any) reportResp {
	t.Helper()
	r := runReport(t, s, s.User("all-companies"), name, filters, map[string]string{"ignore_prepared_report": "1"})
	r.expectStatus(t, 200)
	return r
}

// cents reads a JSON number (or null / "") as cents.
func cents(t *testing.T, v any) int64 {
	t.Helper()
	switch x := v.(type) {
	case nil, string:
		return 0
	case json.Number:
		d, ok := parseDecimal(string(x))
		if !ok {
			t.Fatalf("bad number %v", x)
		}
		return d.Cents()
	}
	t.Fatalf("not a number: %#v", v)
	return 0
}

func fieldnames(cols []map[string]any) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i], _ = c["fieldname"].(string)
	}
	return out
}

// serverMessages decodes _server_messages into their "message" texts.
func serverMessages(t *testing.T, r resp) []string {
	t.Helper()
	raw, _ := r.body["_server_messages"].(string)
	if raw == "" {
		return nil
	}
	var list []string
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range list {
		var o map[string]any
		if err := json.Unmarshal([]byte(m), &o); err != nil {
			t.Fatal(err)
		}
		out = append(out, o["message"].(string))
	}
	return out
}

func expectError(t *testing.T, r resp, status int, excType, message string) {
	t.Helper()
	r.expectStatus(t, status)
	if r.body["exc_type"] != excType {
		t.Fatalf("exc_type %v, want %s: %s", r.body["exc_type"], excType, r.raw)
	}
	if message != "" && !strings.Contains(strings.Join(serverMessages(t, r), "\n")+"\n"+cstr(r.body["exception"]), message) {
		t.Fatalf("want message %q in %s", message, r.raw)
	}
}

// liveGL returns the non-cancelled GL entries of a company.
func liveGL(ds *Dataset, company string) []*Doc {
	var out []*Doc
	for _, e := range ds.List("GL Entry") {
		if e.Str("company") == company && e.Int("is_cancelled") == 0 {
			out = append(out, e)
		}
	}
	return out
}

func jsonNumber(s string) json.Number { return json.Number(s) }
