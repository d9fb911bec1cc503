package frappetest

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
)

func newOrderBody(customer, company, item string) string {
	return fmt.Sprintf(`{"customer":%q,"company":%q,"delivery_date":"2026-07-01","items":[{"item_code":%q,"qty":2}]}`, customer, company, item)
}

// seedFor returns an enabled customer, its company and an enabled item.
func seedFor(t *testing.T, s *Server) (customer, company, item string) {
	t.Helper()
	for _, c := range s.Data().List("Company") {
		if c.Str("default_currency") == "NZD" {
			company = c.Name
		}
	}
	for _, c := range s.Data().List("Customer") {
		if c.Int("disabled") == 0 && c.Str("default_currency") == "NZD" {
			customer = c.Name
			break
		}
	}
	for _, it := range s.Data().List("Item") {
		if it.Int("disabled") == 0 {
			item = it.Name
			break
		}
	}
	return
}

func TestWritesStayInTheirSimulator(t *testing.T) {
	a, b := newServer(t, Options{}), newServer(t, Options{})
	customer, company, item := seedFor(t, a)
	before := len(a.Data().List("Sales Order"))
	r := postJSON(t, a, tokenAuth(a.User("all-companies")), "/api/resource/Sales%20Order", newOrderBody(customer, company, item))
	r.expectStatus(t, http.StatusOK)
	doc := r.body["data"].(map[string]any)
	name := doc["name"].(string)
	if !strings.HasPrefix(name, "SAL-ORD-2026-") || doc["docstatus"].(fmt.Stringer).String() != "0" || doc["status"] != "Draft" || doc["doctype"] != "Sales Order" {
		t.Fatalf("inserted %s", r.raw)
	}
	// The writer's simulator serves it to another user; the other
	// simulator and the shared seeded data do not have it.
	admin(t, a, "/api/resource/Sales%20Order/"+name, nil).expectStatus(t, http.StatusOK)
	call(t, a, tokenAuth(a.User("no-accounting")), "/api/resource/Sales%20Order/"+name, nil).expectStatus(t, http.StatusOK)
	admin(t, b, "/api/resource/Sales%20Order/"+name, nil).expectStatus(t, http.StatusNotFound)
	if len(a.Data().List("Sales Order")) != before || a.Data().Get("Sales Order", name) != nil {
		t.Fatal("the insert changed the shared seeded Dataset")
	}
	// Child rows are joined and listed with the new parent.
	rows := admin(t, a, "/api/resource/Sales%20Order", map[string]string{
		"fields": `["name","items.item_code"]`, "filters": `[["name","=","` + name + `"]]`}).rows(t)
	if len(rows) != 1 || rows[0]["item_code"] != item {
		t.Errorf("joined rows %v", rows)
	}
}

func TestConcurrentInsertsGetDistinctNames(t *testing.T) {
	s := newServer(t, Options{})
	customer, company, item := seedFor(t, s)
	auth := tokenAuth(s.User("all-companies"))
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := postJSON(t, s, auth, "/api/resource/Sales%20Order", newOrderBody(customer, company, item))
			if r.status != http.StatusOK {
				t.Errorf("insert: %d %s", r.status, r.raw)
				return
			}
			mu.Lock()
			got = append(got, r.body["data"].(map[string]any)["name"].(string))
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Strings(got)
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Fatalf("duplicate names %v", got)
		}
	}
	rows := admin(t, s, "/api/resource/Sales%20Order", map[string]string{"filters": `[["owner","=","accounts@demo.example"],["customer","=","` + customer + `"],["docstatus","=",0]]`, "limit_page_length": "500"}).rows(t)
	found := 0
	for _, r := range rows {
		for _, n := range got {
			if r["name"] == n {
				found++
			}
		}
	}
	if found != len(got) {
		t.Errorf("list shows %d of %d new orders", found, len(got))
	}
}

func TestInsertRefusals(t *testing.T) {
	s := newServer(t, Options{})
	customer, company, item := seedFor(t, s)
	auth := tokenAuth(s.User("all-companies"))

	r := postJSON(t, s, tokenAuth(s.User(RoleOrderViewer)), "/api/resource/Sales%20Order", newOrderBody(customer, company, item))
	r.expectStatus(t, http.StatusForbidden)
	if r.body["exc_type"] != "PermissionError" || r.body["_error_message"] != "You need the 'create' permission on <strong>Sales Order</strong>  to perform this action." ||
		!strings.Contains(r.raw, "does not have doctype access via role permission for document <strong>Sales Order</strong>") {
		t.Errorf("viewer insert: %s", r.raw)
	}

	r = postJSON(t, s, auth, "/api/resource/Sales%20Order", `{"company":"`+company+`","delivery_date":"2026-07-01","items":[{"qty":1}]}`)
	r.expectStatus(t, 417)
	if r.body["exc_type"] != "MandatoryError" || r.body["exception"] != "frappe.exceptions.MandatoryError: [Sales Order, new-sales-order-1]: customer, item_code" ||
		!strings.Contains(r.raw, "Error: Value missing for Sales Order: Customer") {
		t.Errorf("mandatory: %s", r.raw)
	}

	r = postJSON(t, s, auth, "/api/resource/Sales%20Order", `{"customer":"`+customer+`","company":"`+company+`","items":[{"item_code":"`+item+`","qty":1}]}`)
	if r.status != 417 || !strings.Contains(r.raw, "Please enter Delivery Date") {
		t.Errorf("no delivery date: %d %s", r.status, r.raw)
	}

	// add_comment takes POST or PUT only.
	r = admin(t, s, "/api/method/frappe.desk.form.utils.add_comment", map[string]string{"reference_doctype": "Customer", "reference_name": customer, "content": "x", "comment_email": "a", "comment_by": "a"})
	r.expectStatus(t, http.StatusForbidden)
	// DELETE stays refused.
	req, _ := http.NewRequest(http.MethodDelete, s.URL+"/api/resource/Customer/"+customer, nil)
	req.Header.Set("Authorization", auth)
	if r := doReq(t, req); r.status != http.StatusForbidden {
		t.Errorf("delete: %d", r.status)
	}
}

func TestUpdateCancelledAndStale(t *testing.T) {
	s := newServer(t, Options{})
	auth := tokenAuth(s.User("all-companies"))
	cancelled := filterDocs(s, "Sales Order", func(d *Doc) bool { return d.Int("docstatus") == 2 })[0]
	r := putJSON(t, s, auth, "/api/resource/Sales%20Order/"+cancelled.Name, `{"po_no":"X"}`)
	if r.status != 417 || !strings.Contains(r.raw, "Cannot edit cancelled document") {
		t.Errorf("cancelled: %d %s", r.status, r.raw)
	}
	draft := filterDocs(s, "Sales Order", func(d *Doc) bool { return d.Int("docstatus") == 0 })[0]
	r = putJSON(t, s, auth, "/api/resource/Sales%20Order/"+draft.Name, `{"po_no":"X","modified":"2020-01-01 00:00:00"}`)
	if r.status != 417 || r.body["exc_type"] != "TimestampMismatchError" || !strings.Contains(r.raw, "Document has been modified after you have opened it ("+draft.Str("modified")+", ") {
		t.Errorf("stale: %d %s", r.status, r.raw)
	}
	r = putJSON(t, s, auth, "/api/resource/Sales%20Order/"+draft.Name, `{"po_no":"X","modified":"`+draft.Str("modified")+`"}`)
	r.expectStatus(t, http.StatusOK)
	if d := r.body["data"].(map[string]any); d["po_no"] != "X" || d["modified"] == draft.Str("modified") {
		t.Errorf("saved %s", r.raw)
	}
}

func putJSON(t *testing.T, s *Server, auth, path, body string) resp {
	t.Helper()
	return sendJSON(t, s, http.MethodPut, auth, path, body)
}

// itemWithUOM returns an enabled item whose stock UOM has
// must_be_whole_number as whole says.
func itemWithUOM(t *testing.T, s *Server, whole bool) *Doc {
	t.Helper()
	for _, it := range s.Data().List("Item") {
		u := s.Data().Get("UOM", it.Str("stock_uom"))
		if it.Int("disabled") == 0 && u != nil && (u.Int("must_be_whole_number") == 1) == whole {
			return it
		}
	}
	t.Fatalf("no enabled item with a whole-number UOM %v", whole)
	return nil
}

// TestInsertRoundsToThePrecisions: ERPNext's calculate_taxes_and_totals
// rounds every Float and Currency field of a line (round_floats_in) to
// its precision before it computes the amount: qty to System Settings'
// float_precision (3 by default), rate and amount to the currency's (2
// for the seeded "#,###.##" currencies), half up (rounded(), "Banker's
// Rounding (legacy)", for precision > 0). validate_uom_is_integer then
// checks the rounded qty against a whole-number UOM and quotes it.
func TestInsertRoundsToThePrecisions(t *testing.T) {
	s := newServer(t, Options{})
	customer, company, _ := seedFor(t, s)
	auth := tokenAuth(s.User("all-companies"))
	kg, nos := itemWithUOM(t, s, false), itemWithUOM(t, s, true)
	order := func(lines string) resp {
		return postJSON(t, s, auth, "/api/resource/Sales%20Order",
			`{"customer":"`+customer+`","company":"`+company+`","delivery_date":"2026-07-01","items":[`+lines+`]}`)
	}
	r := order(`{"item_code":"` + kg.Name + `","qty":1.2345,"rate":10.005},` +
		`{"item_code":"` + kg.Name + `","qty":0.3334,"rate":19.999999999},` +
		`{"item_code":"` + nos.Name + `","qty":2.0004,"rate":1}`)
	r.expectStatus(t, http.StatusOK)
	items := r.body["data"].(map[string]any)["items"].([]any)
	for i, want := range [][3]string{{"1.235", "10.01", "12.36"}, {"0.333", "20.0", "6.66"}, {"2.0", "1.0", "2.0"}} {
		row := items[i].(map[string]any)
		got := [3]string{fmt.Sprint(row["qty"]), fmt.Sprint(row["rate"]), fmt.Sprint(row["amount"])}
		if got != want || fmt.Sprint(row["stock_qty"]) != want[0] {
			t.Errorf("line %d qty, rate, amount %v (stock_qty %v), want %v", i+1, got, row["stock_qty"], want)
		}
	}
	if d := r.body["data"].(map[string]any); fmt.Sprint(d["total_qty"]) != "3.568" || fmt.Sprint(d["total"]) != "21.02" {
		t.Errorf("total_qty %v total %v, want 3.568 and 21.02", d["total_qty"], d["total"])
	}

	// A tie rounds up at precision 2 (half to even only at precision 0,
	// the rounded total's): 0.5 × 0.05 = 0.025 is 0.03.
	r = order(`{"item_code":"` + kg.Name + `","qty":0.5,"rate":0.05}`)
	r.expectStatus(t, http.StatusOK)
	if row := r.body["data"].(map[string]any)["items"].([]any)[0].(map[string]any); fmt.Sprint(row["amount"]) != "0.03" {
		t.Errorf("0.5 x 0.05: amount %v, want 0.03", row["amount"])
	}

	// A fraction of a whole-number UOM is refused, quoting the qty as
	// rounded to the float precision.
	for _, tc := range []struct{ qty, says string }{{"2.5", "2.5"}, {"1.23456", "1.235"}} {
		r = order(`{"item_code":"` + nos.Name + `","qty":` + tc.qty + `}`)
		r.expectStatus(t, 417)
		want := "Row 1: Quantity (" + tc.says + ") cannot be a fraction. To allow this, disable '<strong>Must be Whole Number</strong>' in UOM <strong>" + nos.Str("stock_uom") + "</strong>."
		if r.body["exc_type"] != "UOMMustBeIntegerError" || !strings.Contains(r.raw, strings.ReplaceAll(want, "'", "'")) {
			t.Errorf("qty %s: %s", tc.qty, r.raw)
		}
	}
}

// TestInsertRoundsToTheSitesCurrencyPrecision: Frappe v15 rounds a
// Currency field to System Settings' currency_precision when set, else to
// its number_format's places, site-wide: a site set up for Kuwait
// ("#,###.###") keeps three places of any currency's rates and amounts,
// one with "#,###" none, and a tie at precision 0 goes to even under
// "Banker's Rounding (legacy)". Only a System Manager may read System
// Settings.
func TestInsertRoundsToTheSitesCurrencyPrecision(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		opts                 Options
		lines                string
		rates, amounts       [2]string
		total, settingsPlace string
	}{
		// 1.2345 × 3 is 3.7035: rate 1.235 (a tie, up), amount 3.705;
		// 0.333 × 1.0005 is 0.333 (1.001 × 0.333 = 0.333333).
		{"three places", Options{NumberFormat: "#,###.###"}, `"qty":3,"rate":1.2345},{"item_code":"%s","qty":0.333,"rate":1.0005`,
			[2]string{"1.235", "1.001"}, [2]string{"3.705", "0.333"}, "4.038", "#,###.###"},
		{"currency_precision 3", Options{CurrencyPrecision: "3"}, `"qty":3,"rate":1.2345},{"item_code":"%s","qty":0.333,"rate":1.0005`,
			[2]string{"1.235", "1.001"}, [2]string{"3.705", "0.333"}, "4.038", "#,###.##"},
		// 332.5 is a tie: 332 (even); 0.5 × 101 = 50.5 is 50 (even).
		{"no places", Options{NumberFormat: "#,###"}, `"qty":3,"rate":332.5},{"item_code":"%s","qty":0.5,"rate":101`,
			[2]string{"332.0", "101.0"}, [2]string{"996.0", "50.0"}, "1046.0", "#,###"},
		// "Banker's Rounding" takes a tie to even at any precision: 0.5 ×
		// 0.05 = 0.025 is 0.02, and the rate 0.125 is 0.12.
		{"banker's rounding", Options{RoundingMethod: "Banker's Rounding"}, `"qty":0.5,"rate":0.05},{"item_code":"%s","qty":1,"rate":0.125`,
			[2]string{"0.05", "0.12"}, [2]string{"0.02", "0.12"}, "0.14", "#,###.##"},
		{"commercial rounding", Options{RoundingMethod: "Commercial Rounding", NumberFormat: "#,###"}, `"qty":3,"rate":332.5},{"item_code":"%s","qty":0.5,"rate":101`,
			[2]string{"333.0", "101.0"}, [2]string{"999.0", "51.0"}, "1050.0", "#,###"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.opts)
			customer, company, _ := seedFor(t, s)
			kg := itemWithUOM(t, s, false)
			r := postJSON(t, s, tokenAuth(s.User("all-companies")), "/api/resource/Sales%20Order",
				`{"customer":"`+customer+`","company":"`+company+`","delivery_date":"2026-07-01","items":[{"item_code":"`+kg.Name+`",`+
					fmt.Sprintf(tc.lines, kg.Name)+`}]}`)
			r.expectStatus(t, http.StatusOK)
			d := r.body["data"].(map[string]any)
			for i, row := range d["items"].([]any) {
				row := row.(map[string]any)
				if got := [2]string{fmt.Sprint(row["rate"]), fmt.Sprint(row["amount"])}; got != [2]string{tc.rates[i], tc.amounts[i]} {
					t.Errorf("line %d rate, amount %v, want %s and %s", i+1, got, tc.rates[i], tc.amounts[i])
				}
			}
			if fmt.Sprint(d["total"]) != tc.total {
				t.Errorf("total %v, want %s", d["total"], tc.total)
			}

			settings := "/api/resource/System%20Settings/System%20Settings"
			got := call(t, s, tokenAuth(s.User(RoleAdministrator)), settings, nil)
			got.expectStatus(t, http.StatusOK)
			if sd := got.body["data"].(map[string]any); sd["number_format"] != tc.settingsPlace || sd["currency_precision"] != tc.opts.CurrencyPrecision {
				t.Errorf("System Settings number_format %v currency_precision %v", sd["number_format"], sd["currency_precision"])
			}
			call(t, s, tokenAuth(s.User("all-companies")), settings, nil).expectStatus(t, http.StatusForbidden)
		})
	}
}

// TestInsertRoundsQtyToTheSitesFloatPrecision: System Settings'
// float_precision (3 when unset) is the precision of a Float field such
// as a line's qty (get_field_precision): a site set to 2 keeps 2.346 as
// 2.35, and takes 2.004 of a whole-number unit as 2, which a site at 3
// refuses as a fraction.
func TestInsertRoundsQtyToTheSitesFloatPrecision(t *testing.T) {
	s := newServer(t, Options{FloatPrecision: "2"})
	customer, company, _ := seedFor(t, s)
	auth := tokenAuth(s.User("all-companies"))
	kg, nos := itemWithUOM(t, s, false), itemWithUOM(t, s, true)
	r := postJSON(t, s, auth, "/api/resource/Sales%20Order",
		`{"customer":"`+customer+`","company":"`+company+`","delivery_date":"2026-07-01","items":[`+
			`{"item_code":"`+kg.Name+`","qty":2.346,"rate":10},{"item_code":"`+nos.Name+`","qty":2.004,"rate":1}]}`)
	r.expectStatus(t, http.StatusOK)
	items := r.body["data"].(map[string]any)["items"].([]any)
	for i, want := range [][2]string{{"2.35", "23.5"}, {"2.0", "2.0"}} {
		row := items[i].(map[string]any)
		if got := [2]string{fmt.Sprint(row["qty"]), fmt.Sprint(row["amount"])}; got != want {
			t.Errorf("line %d qty, amount %v, want %v", i+1, got, want)
		}
	}
	settings := call(t, s, tokenAuth(s.User(RoleAdministrator)), "/api/resource/System%20Settings/System%20Settings", nil)
	if got := settings.body["data"].(map[string]any)["float_precision"]; got != "2" {
		t.Errorf("System Settings' float_precision %v, want 2", got)
	}
}

// TestInsertRoundsTheQtyByTheSitesRoundingMethod: round_floats_in rounds a
// line's qty with flt(qty, float_precision), which rounds a tie by System
// Settings' rounding_method (frappe.utils.data.rounded): "Banker's
// Rounding" to even (_bankers_rounding), so at three places 2.0025 is
// 2.002 and 2.0005 of a whole-number unit is 2.000, which
// validate_uom_is_integer takes; "Banker's Rounding (legacy)", the
// default, rounds a tie up above precision 0 (2.0025 is 2.003).
func TestInsertRoundsTheQtyByTheSitesRoundingMethod(t *testing.T) {
	for _, tc := range []struct {
		method            string
		qty, amount       string
		wholeQty, wholeOK string
	}{
		{"Banker's Rounding", "2.002", "200.2", "2.0", ""},
		{"Banker's Rounding (legacy)", "2.003", "200.3", "", "2.001"},
		{"Commercial Rounding", "2.003", "200.3", "", "2.001"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			s := newServer(t, Options{RoundingMethod: tc.method})
			customer, company, _ := seedFor(t, s)
			auth := tokenAuth(s.User("all-companies"))
			kg, nos := itemWithUOM(t, s, false), itemWithUOM(t, s, true)
			order := func(lines string) resp {
				return postJSON(t, s, auth, "/api/resource/Sales%20Order",
					`{"customer":"`+customer+`","company":"`+company+`","delivery_date":"2026-07-01","items":[`+lines+`]}`)
			}
			r := order(`{"item_code":"` + kg.Name + `","qty":2.0025,"rate":100}`)
			r.expectStatus(t, http.StatusOK)
			row := r.body["data"].(map[string]any)["items"].([]any)[0].(map[string]any)
			if fmt.Sprint(row["qty"]) != tc.qty || fmt.Sprint(row["amount"]) != tc.amount {
				t.Errorf("qty 2.0025 x 100: qty %v amount %v, want %s and %s", row["qty"], row["amount"], tc.qty, tc.amount)
			}
			r = order(`{"item_code":"` + nos.Name + `","qty":2.0005,"rate":1}`)
			if tc.wholeQty != "" {
				r.expectStatus(t, http.StatusOK)
				if row := r.body["data"].(map[string]any)["items"].([]any)[0].(map[string]any); fmt.Sprint(row["qty"]) != tc.wholeQty {
					t.Errorf("qty 2.0005 of a whole-number unit saved as %v, want %s", row["qty"], tc.wholeQty)
				}
				return
			}
			r.expectStatus(t, 417)
			if !strings.Contains(r.raw, "Quantity ("+tc.wholeOK+") cannot be a fraction") {
				t.Errorf("qty 2.0005 of a whole-number unit: %s", r.raw)
			}
		})
	}
}
