package frappe

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/rawjson"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

func TestSplitRows(t *testing.T) {
	rows, err := splitRows([]byte(` {"data": [ {"name":"Caf\u00e9 \"Zé\"","amount":12500.500000}, {} ], "extra": 1} `), "Customer")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || string(rows[0]) != `{"name":"Caf\u00e9 \"Zé\"","amount":12500.500000}` || string(rows[1]) != `{}` {
		t.Errorf("rows = %q; want the ERP's text of each row, unchanged", rows)
	}
	if rows, err := splitRows([]byte(`{"data":[]}`), "Customer"); err != nil || rows == nil || len(rows) != 0 {
		t.Errorf("an empty page = %v, %v; want no rows and no error", rows, err)
	}
	// Bytes that are not UTF-8 are replaced, as decoding would, so the
	// rows stay valid JSON text.
	rows, err = splitRows([]byte("{\"data\":[{\"name\":\"a\xffb\"}]}"), "Customer")
	if err != nil || len(rows) != 1 || string(rows[0]) != `{"name":"a`+"\uFFFD"+`b"}` || !rawjson.Valid(rows[0]) {
		t.Errorf("invalid UTF-8: rows = %q, %v", rows, err)
	}
	for body, want := range map[string]string{
		``:                          "empty body",
		"  \n":                      "empty body",
		`{"data":[{"a":1}]`:         "could not be read as JSON",
		`{"data":[{"a":1}]} {}`:     "could not be read as JSON",
		`{"data":[{"a":01}]}`:       "could not be read as JSON",
		`<html>Bad Gateway</html>`:  "could not be read as JSON",
		`{"message":"ok"}`:          "no data array",
		`{"data":null}`:             "no data array",
		`{"data":{"name":"x"}}`:     "no data array",
		`[{"name":"x"}]`:            "could not be read as JSON",
		`{"data":[{"a":1},"x"]}`:    "not an object",
		`{"data":[null]}`:           "not an object",
		`{"data":[{"a":1},[1,2]]} `: "not an object",
	} {
		_, err := splitRows([]byte(body), "Customer")
		te := wantCode(t, err, toolerr.UpstreamInvalidResponse)
		if !strings.Contains(te.Message, want) || !strings.Contains(te.Message, "does not mean there are no records") {
			t.Errorf("splitRows(%q): %q, want it to say %q", body, te.Message, want)
		}
	}
}

// A list tool passes the ERP's rows on as they were written: exact
// decimals, escapes and member order, in a result that is one valid JSON
// object with its meta.
func TestListPassesRowsOnUnchanged(t *testing.T) {
	body := `{"data":[` +
		`{"name":"C-1","customer_name":"Caf\u00e9 <b>&</b>","customer_type":"Company","customer_group":null,"territory":"All","default_currency":"EUR","disabled":0,"credit":1.10},` +
		`{"name":"C-2","customer_name":"Zé","customer_type":"Individual","customer_group":"Retail","territory":"All","default_currency":null,"disabled":0,"credit":0.000000}]}`
	tool := toolByName(t, "list_customers")
	out, err := tool.Handler(context.Background(), &connector.Call{
		Site: site(t, ""), HTTP: &http.Client{Transport: cannedTransport{[]byte(body)}},
		Args: json.RawMessage(`{"limit":5}`), MaxRecords: 1000,
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := out.(connector.RawResult)
	if !ok {
		t.Fatalf("list_customers returned %T, want a connector.RawResult", out)
	}
	if err := rawjson.Check(raw); err != nil {
		t.Fatalf("result is not valid JSON: %v\n%s", err, raw)
	}
	data, _, _ := rawjson.Member(raw, "data")
	rows, _ := rawjson.Elements(data)
	erpRows, _ := splitRows([]byte(body), "Customer")
	if len(rows) != 2 || string(rows[0]) != string(erpRows[0]) || string(rows[1]) != string(erpRows[1]) {
		t.Errorf("rows = %s; want the ERP's rows byte for byte", data)
	}
	var res struct {
		Meta pageMeta `json:"meta"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Meta.Returned != 2 || !res.Meta.Complete || res.Meta.Limit != 5 {
		t.Errorf("meta = %+v (%v)", res.Meta, err)
	}
}

func TestListWithAnInvalidAnswerIsNotEmpty(t *testing.T) {
	tool := toolByName(t, "list_customers")
	_, err := tool.Handler(context.Background(), &connector.Call{
		Site: site(t, ""), HTTP: &http.Client{Transport: cannedTransport{[]byte(`{"data":[{"name":"C-1"},`)}},
		Args: json.RawMessage(`{}`), MaxRecords: 1000,
	})
	wantCode(t, err, toolerr.UpstreamInvalidResponse)
}
