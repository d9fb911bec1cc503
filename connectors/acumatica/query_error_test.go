package acumatica

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestERPRequestErrorNamesNoQuery: an ERP that takes an inquiry's request
// and drops the connection fails the call; the outbound client's error
// names the request's URL with its query, the call's $filter values
// included. The error goes to the operator's log: it names the URL by
// scheme, host and path only.
func TestERPRequestErrorNamesNoQuery(t *testing.T) {
	const marker = "Zq-Secret-Customer-Name"
	h := newHarness(t, harnessOptions{noRetry: true})
	h.erp = func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, "/api/odata/gi/AR-OpenInvoices") {
			return false
		}
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		}
		return true
	}
	_, err := h.run(kindFull, "acumatica_run_inquiry", map[string]any{"name": "AR-OpenInvoices", "filterExpression": "CustomerName eq '" + marker + "'"})
	if err == nil {
		t.Fatal("the call succeeded")
	}
	text := err.Error()
	if strings.Contains(text, marker) || strings.Contains(text, "filter") {
		t.Errorf("the error carries the request's query: %s", text)
	}
	if !strings.Contains(text, "/api/odata/gi/AR-OpenInvoices") {
		t.Errorf("the error does not name the inquiry's address: %s", text)
	}
}
