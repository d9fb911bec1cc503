package frappe

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// bigReport is a General Ledger-shaped answer of n rows, with the columns
// after the result (Frappe does not promise an order) and the total row as
// a list at the end.
func bigReport(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"message":{"result":[{},`)
	for i := range n {
		fmt.Fprintf(&b, `{"posting_date":"2026-01-%02d","account":"Debtors - DC","party":"Customer %d","debit":%d.10,"credit":0.0,"balance":%d.10,"voucher_no":"ACC-SINV-2026-%05d"},`, i%28+1, i, i, i, i)
	}
	b.WriteString(`["","'Total'",123.4,0.0]],"columns":[{"fieldname":"posting_date","label":"Posting Date","fieldtype":"Date"},"Account::180",{"fieldname":"party","label":"Party"},{"fieldname":"debit","fieldtype":"Currency"},{"fieldname":"credit","fieldtype":"Currency"},{"fieldname":"balance","fieldtype":"Currency"},{"fieldname":"voucher_no"}],"message":null,"add_total_row":true},"_server_messages":"[]"}`)
	return []byte(b.String())
}

func TestParseReportStreamsRows(t *testing.T) {
	d, err := parseReport("General Ledger", bigReport(500))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.rows) != 500 || len(d.columns) != 7 {
		t.Fatalf("%d rows and %d columns, want 500 and 7", len(d.rows), len(d.columns))
	}
	if got := d.rows[499]["debit"]; fmt.Sprint(got) != "499.10" {
		t.Errorf("last row's debit = %v, want 499.10 exactly", got)
	}
	if d.columns[1].Fieldname != "account" {
		t.Errorf("the string column parsed as %+v", d.columns[1])
	}
}

// FuzzParseReport: whatever the ERP sends, parsing ends with rows or an
// UPSTREAM_INVALID_RESPONSE / UPSTREAM_UNAVAILABLE error, never a panic
// or another kind of error.
func FuzzParseReport(f *testing.F) {
	for _, s := range []string{
		string(bigReport(3)),
		`{"message":{"result":null,"columns":[]}}`,
		`{"message":null}`,
		`{"message":{"prepared_report":true}}`,
		`{"message":{"result":[["a",1],["Total",2]],"columns":["A::100","B:Float:80"]}}`,
		`{"_server_messages":"[\"{\\\"message\\\": \\\"clamped\\\"}\"]","message":{"columns":[],"result":[{"x":1}]}}`,
		`[]`, ``, `{"message":{"result":{}}}`, `{"message":{"columns":[{"fieldname":1}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := parseReport("General Ledger", body)
		if err != nil {
			var te *toolerr.Error
			if !errors.As(err, &te) || (te.Code != toolerr.UpstreamInvalidResponse && te.Code != toolerr.UpstreamUnavailable) {
				t.Fatalf("%q: %v", body, err)
			}
			return
		}
		for _, r := range d.rows {
			if r == nil {
				t.Fatalf("%q: a nil row", body)
			}
		}
	})
}

// BenchmarkParseReport reports the bytes allocated per byte of answer.
func BenchmarkParseReport(b *testing.B) {
	body := bigReport(20000)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := parseReport("General Ledger", body); err != nil {
			b.Fatal(err)
		}
	}
}
