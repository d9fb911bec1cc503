package frappe

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// These tests feed report envelopes in Frappe v15's exact shapes (quoted
// label rows, the total row as a list, string columns, a prepared-report
// answer) through a fake upstream keyed by report name, so the parsing is
// pinned down independently of the simulator.

// fakeReports serves a Company record and canned query_report.run bodies.
func fakeReports(t *testing.T, reports map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/resource/Company/Demo Co":
			_, _ = w.Write([]byte(`{"data":{"name":"Demo Co","default_currency":"USD"}}`))
		case "/api/method/frappe.desk.query_report.run":
			name := r.URL.Query().Get("report_name")
			body, ok := reports[name]
			if !ok {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"exc_type":"DoesNotExistError"}`))
				return
			}
			if name == reportStockBalance && r.URL.Query().Get("ignore_prepared_report") != "1" {
				_, _ = w.Write([]byte(`{"message":{"prepared_report":true,"doc":null,"add_total_row":true}}`))
				return
			}
			_, _ = w.Write([]byte(body))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"exc_type":"DoesNotExistError"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// callFake runs a tool handler against the fake upstream.
func callFake(t *testing.T, srv *httptest.Server, tool string, args map[string]any) (map[string]any, error) {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	st := connector.Site{Slug: "fake", Kind: Kind, BaseURL: u, Settings: json.RawMessage(`{}`)}
	raw, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := toolByName(t, tool).Handler(ctx, &connector.Call{Site: st, HTTP: factory.Client(st, nil), Args: raw, MaxRecords: 1000})
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(out)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

const arEnvelope = `{"message":{"result":[
 {"voucher_type":"Sales Invoice","voucher_no":"SINV-1","party":"Acme","posting_date":"2025-01-10","due_date":"2025-02-09","invoiced":1180.1,"paid":0.0,"credit_note":0.0,"outstanding":1180.1,"currency":"USD","age":20,"range1":1180.1,"range2":0.0,"range3":0.0,"range4":0.0,"range5":0.0},
 {"voucher_type":"Sales Invoice","voucher_no":"SINV-2","party":"Beta","posting_date":"2024-10-01","due_date":"2024-10-31","invoiced":0.2,"paid":0.1,"credit_note":0.0,"outstanding":0.1,"currency":"USD","age":121,"range1":0.0,"range2":0.0,"range3":0.0,"range4":0.0,"range5":0.1},
 {"voucher_type":"Payment Entry","voucher_no":"PAY-1","party":"Beta","posting_date":"2025-02-01","due_date":null,"invoiced":0.0,"paid":50.0,"credit_note":0.0,"outstanding":-50.0,"currency":"USD","age":0,"range1":-50.0,"range2":0.0,"range3":0.0,"range4":0.0,"range5":0.0},
 ["","","","",1180.3000000000002,50.1,"",1130.2,"","USD"]
],"columns":[
 {"label":"Posting Date","fieldname":"posting_date","fieldtype":"Date"},
 {"label":"Party","fieldname":"party","fieldtype":"Dynamic Link","options":"party_type"},
 {"label":"Voucher No","fieldname":"voucher_no","fieldtype":"Dynamic Link"},
 {"label":"Due Date","fieldname":"due_date","fieldtype":"Date"},
 {"label":"Invoiced Amount","fieldname":"invoiced","fieldtype":"Currency","options":"currency"},
 {"label":"Paid Amount","fieldname":"paid","fieldtype":"Currency","options":"currency"},
 {"label":"Credit Note","fieldname":"credit_note","fieldtype":"Currency","options":"currency"},
 {"label":"Outstanding Amount","fieldname":"outstanding","fieldtype":"Currency","options":"currency"},
 {"label":"0-30","fieldname":"range1","fieldtype":"Currency"},
 {"label":"31-60","fieldname":"range2","fieldtype":"Currency"},
 {"label":"61-90","fieldname":"range3","fieldtype":"Currency"},
 {"label":"91-120","fieldname":"range4","fieldtype":"Currency"},
 {"label":"121-Above","fieldname":"range5","fieldtype":"Currency"},
 {"label":"Currency","fieldname":"currency","fieldtype":"Link","options":"Currency","hidden":1}
],"message":null,"chart":null,"report_summary":null,"skip_total_row":0,"status":null,"execution_time":0.1,"add_total_row":true}}`

const arSummaryEnvelope = `{"message":{"result":[
 {"party_type":"Customer","party":"Acme","outstanding":1180.1,"currency":"USD"},
 {"party_type":"Customer","party":"Beta","outstanding":-49.9,"currency":"USD"},
 ["Total","",1130.2]
],"columns":["Party Type:Data:80",{"label":"Party","fieldname":"party","fieldtype":"Dynamic Link"},{"label":"Outstanding Amount","fieldname":"outstanding","fieldtype":"Currency"}]}}`

const glEnvelope = `{"message":{"result":[
 {"account":"'Opening'","debit":100.0,"credit":40.0,"balance":60.0},
 {"posting_date":"2025-03-01","account":"Debtors - DC","debit":1e+16,"credit":0.0,"balance":1e+16,"voucher_type":"Sales Invoice","voucher_no":"SINV-1","gl_entry":"GLE-1"},
 {"debit_in_transaction_currency":null,"credit_in_transaction_currency":null},
 {"account":"'Total'","debit":1e+16,"credit":0.0,"balance":1e+16},
 {"account":"'Closing (Opening + Total)'","debit":10000000000000100,"credit":40.0,"balance":10000000000000060}
],"columns":[{"label":"GL Entry","fieldname":"gl_entry","fieldtype":"Link","hidden":1},{"label":"Posting Date","fieldname":"posting_date","fieldtype":"Date"},{"label":"Account","fieldname":"account","fieldtype":"Link"},{"label":"Debit (USD)","fieldname":"debit","fieldtype":"Currency"},{"label":"Credit (USD)","fieldname":"credit","fieldtype":"Currency"},{"label":"Balance (USD)","fieldname":"balance","fieldtype":"Currency"},{"label":"Voucher No","fieldname":"voucher_no","fieldtype":"Dynamic Link"}]},
 "_server_messages":"[\"{\\\"message\\\": \\\"Reposting item valuation is in progress\\\", \\\"title\\\": \\\"Message\\\"}\"]"}`

func TestReportEnvelopeQuirks(t *testing.T) {
	srv := fakeReports(t, map[string]string{
		reportReceivable:        arEnvelope,
		reportReceivableSummary: arSummaryEnvelope,
		reportGeneralLedger:     glEnvelope,
		reportStockBalance:      `{"message":{"result":[{"item_code":"A","warehouse":"W","bal_val":1.1,"in_val":2.2,"out_val":1.1,"opening_val":0.0},["Total","",1.1]],"columns":[{"label":"Item","fieldname":"item_code","fieldtype":"Link"},{"label":"Balance Value","fieldname":"bal_val","fieldtype":"Currency"},{"label":"In Value","fieldname":"in_val","fieldtype":"Float"},{"label":"Out Value","fieldname":"out_val","fieldtype":"Float"},{"label":"Opening Value","fieldname":"opening_val","fieldtype":"Currency"}]}}`,
	})

	t.Run("the total row list is dropped and totals are exact", func(t *testing.T) {
		out, err := callFake(t, srv, "get_accounts_receivable", map[string]any{"company": "Demo Co", "report_date": "2025-03-01", "limit": 2})
		if err != nil {
			t.Fatal(err)
		}
		if mustInt(t, out["row_count"]) != 3 || mustInt(t, out["next_offset"]) != 2 || out["complete"] != false {
			t.Fatalf("paging %v %v %v", out["row_count"], out["next_offset"], out["complete"])
		}
		totals := out["totals"].(map[string]any)
		if totals["outstanding"] != json.Number("1130.2") || totals["invoiced"] != json.Number("1180.3") {
			t.Fatalf("totals %v", totals)
		}
		for _, c := range out["columns"].([]any) {
			if c.(map[string]any)["fieldname"] == "currency" {
				t.Fatalf("hidden column shown")
			}
		}
		if len(out["warnings"].([]any)) != 1 {
			t.Fatalf("warnings %v", out["warnings"])
		}
	})

	t.Run("overdue counts positive balances due before the report date", func(t *testing.T) {
		out, err := callFake(t, srv, "get_accounts_receivable_summary", map[string]any{"company": "Demo Co", "report_date": "2025-03-01"})
		if err != nil {
			t.Fatal(err)
		}
		// SINV-1 (due 2025-02-09) and SINV-2 (due 2024-10-31) are overdue;
		// the unallocated payment is not deducted.
		if out["overdue_complete"] != true || out["overdue"] != json.Number("1180.2") {
			t.Fatalf("overdue %v complete %v", out["overdue"], out["overdue_complete"])
		}
		tot := out["totals"].(map[string]any)
		if tot["outstanding"] != json.Number("1130.2") || tot["credits"] != json.Number("-50") || tot["positive_outstanding"] != json.Number("1180.2") {
			t.Fatalf("totals %v", tot)
		}
		top := out["top_parties"].([]any)
		if len(top) != 2 || top[0].(map[string]any)["party"] != "Acme" {
			t.Fatalf("top %v", top)
		}
	})

	t.Run("quoted label rows and exponent numbers", func(t *testing.T) {
		out, err := callFake(t, srv, "get_general_ledger", map[string]any{"company": "Demo Co", "from_date": "2025-03-01", "to_date": "2025-03-31"})
		if err != nil {
			t.Fatal(err)
		}
		if mustInt(t, out["row_count"]) != 1 {
			t.Fatalf("entries %v", out["rows"])
		}
		row := out["rows"].([]any)[0].(map[string]any)
		if row["debit"] != json.Number("10000000000000000") {
			t.Fatalf("debit %v", row["debit"])
		}
		if _, hidden := row["gl_entry"]; hidden {
			t.Fatalf("hidden column in row")
		}
		if out["opening"].(map[string]any)["balance"] != json.Number("60") || out["closing"].(map[string]any)["credit"] != json.Number("40") {
			t.Fatalf("opening %v closing %v", out["opening"], out["closing"])
		}
		if w := out["warnings"].([]any); len(w) != 1 || w[0] != "Reposting item valuation is in progress" {
			t.Fatalf("warnings %v", w)
		}
	})

	t.Run("stock balance asks Frappe not to prepare the report", func(t *testing.T) {
		out, err := callFake(t, srv, "get_stock_balance", map[string]any{"company": "Demo Co", "from_date": "2025-01-01", "to_date": "2025-01-31"})
		if err != nil {
			t.Fatal(err)
		}
		if out["totals"].(map[string]any)["bal_val"] != json.Number("1.1") {
			t.Fatalf("totals %v", out["totals"])
		}
	})

	t.Run("a report the ERP lacks is NOT_FOUND, never empty", func(t *testing.T) {
		_, err := callFake(t, srv, "get_trial_balance", map[string]any{"company": "Demo Co", "fiscal_year": "2025"})
		wantCode(t, err, toolerr.NotFound)
	})
}

func TestPreparedReportIsNeverEmpty(t *testing.T) {
	// A site can switch any report to prepared mode after one slow run; the
	// answer then has no rows, which must be an error, not zero rows.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"message":{"prepared_report":true,"doc":null}}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	st := connector.Site{Slug: "fake", Kind: Kind, BaseURL: u}
	_, err := newClient(st, factory.Client(st, nil)).runReport(context.Background(), reportGeneralLedger, map[string]any{"company": "Demo Co"})
	wantCode(t, err, toolerr.UpstreamUnavailable)
}

func TestOverdueIsOmittedWhenItCannotBeConfirmed(t *testing.T) {
	mismatch := strings.Replace(arSummaryEnvelope, `"outstanding":-49.9`, `"outstanding":-40.0`, 1)
	undated := strings.Replace(arEnvelope, `"posting_date":"2024-10-01","due_date":"2024-10-31"`, `"posting_date":null,"due_date":null`, 1)
	for name, reports := range map[string]map[string]string{
		"summary does not reconcile": {reportReceivable: arEnvelope, reportReceivableSummary: mismatch},
		"balance without a date":     {reportReceivable: undated, reportReceivableSummary: arSummaryEnvelope},
	} {
		t.Run(name, func(t *testing.T) {
			srv := fakeReports(t, reports)
			out, err := callFake(t, srv, "get_accounts_receivable_summary", map[string]any{"company": "Demo Co", "report_date": "2025-03-01"})
			if err != nil {
				t.Fatal(err)
			}
			if _, present := out["overdue"]; present || out["overdue_complete"] != false {
				t.Fatalf("overdue %v complete %v", out["overdue"], out["overdue_complete"])
			}
			if len(out["warnings"].([]any)) == 0 {
				t.Fatal("no warning says why overdue is missing")
			}
			// The other totals stay.
			if out["totals"].(map[string]any)["outstanding"] != json.Number("1130.2") {
				t.Fatalf("totals %v", out["totals"])
			}
		})
	}
}

// A Profit and Loss answer whose last account rows no total row closes
// (which ERPNext does not send) leaves those rows without a section and
// says so, rather than guessing one.
func TestProfitAndLossRowsWithoutTotalRowGetNoSection(t *testing.T) {
	srv := fakeReports(t, map[string]string{reportProfitAndLoss: `{"message":{"result":[
 {"account":"Income - DC","account_name":"Income","parent_account":"","indent":0.0,"is_group":1,"jul_2025":500.0},
 {"account":"'Total Income (Credit)'","account_name":"'Total Income (Credit)'","jul_2025":500.0},
 {},
 {"account":"Expenses - DC","account_name":"Expenses","parent_account":"","indent":0.0,"is_group":1,"jul_2025":200.0}
],"columns":[{"label":"Account","fieldname":"account","fieldtype":"Link"},{"label":"Currency","fieldname":"currency","fieldtype":"Link","hidden":1},{"label":"2025","fieldname":"jul_2025","fieldtype":"Currency"}]}}`})
	out, err := callFake(t, srv, "get_profit_and_loss", map[string]any{"company": "Demo Co", "from_date": "2025-07-01", "to_date": "2025-07-31"})
	if err != nil {
		t.Fatal(err)
	}
	rows := out["rows"].([]any)
	if len(rows) != 2 || rows[0].(map[string]any)["section"] != "Income" {
		t.Fatalf("rows %v", rows)
	}
	if s, present := rows[1].(map[string]any)["section"]; present {
		t.Fatalf("unclosed row got section %v", s)
	}
	if w := out["warnings"].([]any); len(w) != 2 || !contains(w[0].(string), "last 1 account row(s) came after") {
		t.Fatalf("warnings %v", w)
	}
}

// Frappe computes running balances, totals and outstanding amounts as
// Python floats, so its answers carry binary noise (0.3 - 0.1 is
// 0.19999999999999998). Rows, summary rows and erpgate's own sums all read
// the amounts without it.
func TestReportAmountsLoseFloatNoise(t *testing.T) {
	noisyAR := strings.Replace(arEnvelope,
		`"invoiced":0.2,"paid":0.1,"credit_note":0.0,"outstanding":0.1,`,
		`"invoiced":0.3,"paid":0.1,"credit_note":0.0,"outstanding":0.19999999999999998,`, 1)
	srv := fakeReports(t, map[string]string{
		reportReceivable: noisyAR,
		reportGeneralLedger: `{"message":{"result":[
 {"account":"'Opening'","debit":0.30000000000000004,"credit":0.0,"balance":0.30000000000000004},
 {"posting_date":"2025-03-01","account":"Debtors - DC","debit":4316.4,"credit":0.0,"balance":4316.700000000001,"voucher_no":"SINV-1","gl_entry":"GLE-1"},
 {"account":"'Total'","debit":4316.4,"credit":0.0,"balance":4316.4},
 {"account":"'Closing (Opening + Total)'","debit":4316.700000000001,"credit":0.0,"balance":4316.700000000001}
],"columns":[{"label":"Posting Date","fieldname":"posting_date","fieldtype":"Date"},{"label":"Account","fieldname":"account","fieldtype":"Link"},{"label":"Debit (USD)","fieldname":"debit","fieldtype":"Currency"},{"label":"Credit (USD)","fieldname":"credit","fieldtype":"Currency"},{"label":"Balance (USD)","fieldname":"balance","fieldtype":"Currency"},{"label":"Voucher No","fieldname":"voucher_no","fieldtype":"Dynamic Link"}]}}`,
	})
	gl, err := callFake(t, srv, "get_general_ledger", map[string]any{"company": "Demo Co", "from_date": "2025-03-01", "to_date": "2025-03-31"})
	if err != nil {
		t.Fatal(err)
	}
	if b := gl["rows"].([]any)[0].(map[string]any)["balance"]; b != json.Number("4316.7") {
		t.Errorf("row balance %v", b)
	}
	if o := gl["opening"].(map[string]any); o["debit"] != json.Number("0.3") || o["balance"] != json.Number("0.3") {
		t.Errorf("opening %v", o)
	}
	if c := gl["closing"].(map[string]any); c["debit"] != json.Number("4316.7") || c["balance"] != json.Number("4316.7") {
		t.Errorf("closing %v", c)
	}
	ar, err := callFake(t, srv, "get_accounts_receivable", map[string]any{"company": "Demo Co", "report_date": "2025-03-01"})
	if err != nil {
		t.Fatal(err)
	}
	if tot := ar["totals"].(map[string]any); tot["outstanding"] != json.Number("1130.3") || tot["invoiced"] != json.Number("1180.4") {
		t.Errorf("totals %v", tot)
	}
	if o := ar["rows"].([]any)[1].(map[string]any)["outstanding"]; o != json.Number("0.2") {
		t.Errorf("row outstanding %v", o)
	}
}
