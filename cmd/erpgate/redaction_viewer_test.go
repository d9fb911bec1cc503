package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestChromiumRedactionsInTheUsageViewer: a call whose result had values
// redacted says so in its usage event, which fields and how many values,
// and the operator finds such calls in the viewer with the redaction
// filter, as MCP4Acumatica's log viewer found its field_redaction events.
// The calls go through a whole gateway against the Frappe simulator; the
// redacted field is the one the seeded bank transaction fills.
func TestChromiumRedactionsInTheUsageViewer(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})

	var doc *frappetest.Doc
	for _, d := range sim.Data().List("Bank Transaction") {
		if d.Str("bank_party_account_number") != "" {
			doc = d
			break
		}
	}
	if doc == nil {
		t.Fatal("the simulator has no bank transaction with a party account number")
	}
	mustSucceed(t, callTool(t, cs, "list_companies", map[string]any{}), "list_companies")
	r := callTool(t, cs, "get_document", map[string]any{"doctype": "Bank Transaction", "name": doc.Name})
	mustSucceed(t, r, "get_document")
	if strings.Contains(r.Text, doc.Str("bank_party_account_number")) {
		t.Fatalf("the account number reached the client: %s", r.Text)
	}

	type event struct {
		tool   string
		count  int
		fields string
	}
	var got []event
	deadline := time.Now().Add(10 * time.Second)
	for {
		rows, err := gw.App.pool.Query(t.Context(),
			`SELECT tool, redacted_count, redacted_fields FROM usage_events WHERE method = 'tools/call' ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for rows.Next() {
			var e event
			if err := rows.Scan(&e.tool, &e.count, &e.fields); err != nil {
				t.Fatal(err)
			}
			got = append(got, e)
		}
		rows.Close()
		if len(got) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(got) != 2 || got[0] != (event{tool: "list_companies"}) {
		t.Fatalf("stored events %+v, want list_companies without redactions, then get_document", got)
	}
	if e := got[1]; e.tool != "get_document" || e.count < 1 || !strings.Contains(e.fields, "bank_party_account_number") ||
		strings.ContainsAny(e.fields, "0123456789") || strings.Contains(e.fields, doc.Str("bank_party_account_number")) {
		t.Errorf("get_document's event %+v: want a count and the field's path, without array positions or the value", e)
	}

	ctx := newChromium(t)
	signInToConsole(t, ctx, gw, "/console/usage")
	submitAndWait(t, ctx, "open the viewer", "Usage", chromedp.Click(chromedp.CSS(`nav a[href$="/console/usage"]`)))
	// Without the filter: every reply, initialize included.
	all := browserResult(t, ctx, "read every row", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#events tbody tr")].map(r => r.children[4].firstChild.textContent.trim())`))
	if !slices.Contains(all, "list_companies") || !slices.Contains(all, "get_document") {
		t.Errorf("without the filter: rows %q, want both calls", all)
	}
	submitAndWait(t, ctx, "filter calls with redactions", "Usage",
		chromedp.SetValue(chromedp.CSS(`#f-redacted`), "yes"),
		chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)))
	rows := browserResult(t, ctx, "read the rows", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#events tbody tr")].map(r => r.children[4].querySelector("a").textContent.trim() + "|" + (r.querySelector(".redacted")?.textContent.trim() ?? ""))`))
	if len(rows) != 1 || !strings.HasPrefix(rows[0], "get_document|") || !strings.Contains(rows[0], "bank_party_account_number") {
		t.Errorf("with the filter: rows %q, want get_document's, naming bank_party_account_number", rows)
	}
	if u := browserResult(t, ctx, "read the address", chromedp.Evaluate[string](`location.search`)); !strings.Contains(u, "redacted=yes") {
		t.Errorf("the filter is not in the address: %s", u)
	}
	saveScreenshot(t, ctx, "viewer-redactions.png")
}
