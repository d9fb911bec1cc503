package frappetest

import (
	"net/http"
	"net/url"
	"testing"
)

// BenchmarkGenerateDefault measures generating the seeded documents (the
// ledgers are written on first use and measured separately).
func BenchmarkGenerateDefault(b *testing.B) {
	for i := 0; i < b.N; i++ {
		buildDataset(newRegistry(), defaultToday, genOptions{})
	}
}

// BenchmarkWriteLedgers measures writing the GL, Payment Ledger and Stock
// Ledger entries of the default data.
func BenchmarkWriteLedgers(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ds := buildDataset(newRegistry(), defaultToday, genOptions{})
		b.StartTimer()
		ds.List("GL Entry")
	}
}

// benchReport runs one report request per iteration against a simulator
// with ExtraSalesInvoices extra invoices and checks the row count once.
func benchReport(b *testing.B, extra int, report string, filters string, minRows int) {
	s := NewServer(Options{ExtraSalesInvoices: extra})
	defer s.Close()
	u := s.User("all-companies")
	q := url.Values{"report_name": {report}, "filters": {filters}}
	get := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/method/frappe.desk.query_report.run?"+q.Encode(), nil)
		req.Header.Set("Authorization", tokenAuth(u))
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("%s: %v %v", report, err, res)
		}
		return res
	}
	ctx := &reportCtx{ds: s.Data(), user: &u}
	if o, err := jsonLoads(filters); err == nil {
		ctx.f = &reportFilters{o: o.(*object), today: s.today}
		out, aerr := reportSpecs[report].execute(ctx)
		if aerr != nil || len(out.result) < minRows {
			b.Fatalf("%s: %d rows, want at least %d (%v)", report, len(out.result), minRows, aerr)
		}
	}
	get().Body.Close() // warm the ledgers
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := get()
		buf := make([]byte, 1<<16)
		for {
			if _, err := res.Body.Read(buf); err != nil {
				break
			}
		}
		res.Body.Close()
	}
}

// BenchmarkGeneralLedger50k: a General Ledger of more than 50,000 rows.
func BenchmarkGeneralLedger50k(b *testing.B) {
	benchReport(b, 30000, "General Ledger", `{"company":"Demo Holdings NZ Ltd","from_date":"2025-01-01","to_date":"2026-06-15"}`, 50000)
}

// BenchmarkAccountsReceivableLarge: an Accounts Receivable report of more
// than 12,000 open invoices.
func BenchmarkAccountsReceivableLarge(b *testing.B) {
	benchReport(b, 30000, "Accounts Receivable", `{"company":"Demo Holdings NZ Ltd","report_date":"2026-06-15"}`, 12000)
}
