package acumatica

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// keyArgs returns a getter's key arguments for a simulator record.
func keyArgs(g getterSpec, rec *acumaticatest.Record) map[string]any {
	args := map[string]any{}
	for _, k := range g.Keys {
		args[k.Name] = fmt.Sprint(rec.Value(k.Name))
	}
	return args
}

// deniedTo reports whether the simulator's no-AR role lacks the entity's
// form.
func deniedTo(kind userKind, entity string) bool {
	return kind == kindNoAR && strings.HasPrefix(defaultEntities[entity].Screen, "AR")
}

// Every getter, for every kind of user: the record comes back unwrapped
// with its keys, or PERMISSION_DENIED naming the form when the user's
// role lacks it.
func TestEveryGetterForEveryUserKind(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, g := range getterSpecs {
		rows := h.sim.Data().Records(g.Entity)
		if len(rows) == 0 {
			t.Errorf("%s: the simulator holds no records", g.Entity)
			continue
		}
		rec := rows[len(rows)/2]
		for _, kind := range userKinds {
			t.Run(g.Tool+"/"+kind.name, func(t *testing.T) {
				h.t = t
				out, err := h.run(kind, "acumatica_get_"+g.Tool, keyArgs(g, rec))
				if deniedTo(kind, g.Entity) {
					te := wantCode(t, err, toolerr.PermissionDenied, g.Entity)
					screen := defaultEntities[g.Entity].Screen
					if !strings.Contains(te.Message, screen) || !strings.Contains(te.Message, defaultEntities[g.Entity].Form) {
						t.Errorf("message does not name the form %s: %s", screen, te.Message)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				record := out["record"].(map[string]any)
				for _, k := range g.Keys {
					if got := fmt.Sprint(record[k.Name]); got != fmt.Sprint(rec.Value(k.Name)) {
						t.Errorf("%s = %q, want %q", k.Name, got, rec.Value(k.Name))
					}
				}
				if record["id"] != rec.ID {
					t.Errorf("id = %v, want %s", record["id"], rec.ID)
				}
				for name, v := range record {
					if m, ok := v.(map[string]any); ok {
						if _, wrapped := m["value"]; wrapped {
							t.Errorf("field %s is still wrapped: %v", name, m)
						}
					}
				}
				if _, ok := record["_links"]; ok {
					t.Error("_links survived unwrapping")
				}
				if out["endpoint"] != "Default/24.200.001" || out["entity"] != g.Entity {
					t.Errorf("entity/endpoint = %v %v", out["entity"], out["endpoint"])
				}
			})
		}
	}
}

func TestGetterKeepsDecimalsExactAndEmptyFieldsNull(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	inv := h.sim.Data().Records("Invoice")[3]
	out := h.mustRun(kindFull, "acumatica_get_invoice", map[string]any{"Type": inv.String("Type"), "ReferenceNbr": inv.String("ReferenceNbr")})
	rec := out["record"].(map[string]any)
	amount, ok := rec["Amount"].(json.Number)
	if !ok {
		t.Fatalf("Amount = %#v, want a json.Number", rec["Amount"])
	}
	if got := amount.String(); got != inv.Decimal("Amount").Format(4) {
		t.Errorf("Amount = %s, want %s (money keeps four decimals)", got, inv.Decimal("Amount").Format(4))
	}
	// Acumatica sends an empty field as {}; it arrives as null.
	cust := h.sim.Data().Records("Customer")[0]
	out = h.mustRun(kindFull, "acumatica_get_customer", map[string]any{"CustomerID": cust.String("CustomerID")})
	nulls := 0
	for _, v := range out["record"].(map[string]any) {
		if v == nil {
			nulls++
		}
	}
	if nulls == 0 {
		t.Error("no empty field came back as null")
	}
	// An empty boolean ({}) is null too, not false; a set one keeps its
	// value. The output schema accepts both.
	rec = out["record"].(map[string]any)
	for _, name := range []string{"ShippingAddressOverride", "BillingAddressOverride", "PrintDunningLetters"} {
		v, ok := rec[name]
		if want := cust.Fields[name]; !ok || v != want {
			t.Errorf("%s = %#v (present %v), seeded %#v", name, v, ok, want)
		}
	}
}

func TestGetterExpandAndSelect(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	so := h.sim.Data().Records("SalesOrder")[10]
	out := h.mustRun(kindFull, "acumatica_get_sales_order", map[string]any{
		"OrderType": so.String("OrderType"), "OrderNbr": so.String("OrderNbr"), "expand": []string{"Details"}})
	lines, ok := out["record"].(map[string]any)["Details"].([]any)
	if !ok || len(lines) != len(so.Detail("Details")) {
		t.Fatalf("Details = %v, want %d lines", out["record"].(map[string]any)["Details"], len(so.Detail("Details")))
	}
	line := lines[0].(map[string]any)
	if _, ok := line["OrderQty"].(json.Number); !ok {
		t.Errorf("a detail line is not unwrapped: %v", line)
	}

	out = h.mustRun(kindFull, "acumatica_get_sales_order", map[string]any{
		"OrderType": so.String("OrderType"), "OrderNbr": so.String("OrderNbr"), "select": []string{"OrderNbr", "Status"}})
	rec := out["record"].(map[string]any)
	if _, ok := rec["OrderTotal"]; ok {
		t.Errorf("select did not limit the fields: %v", rec)
	}
	if rec["Status"] != so.String("Status") {
		t.Errorf("Status = %v", rec["Status"])
	}

	// A nested select needs its linked entity expanded.
	_, err := h.run(kindFull, "acumatica_get_customer", map[string]any{"CustomerID": "C000000001", "select": []string{"MainContact/Email"}})
	wantCode(t, err, toolerr.InvalidArgument, "nested select without expand")

	// An unknown field in select is explained, and the query never ran.
	_, err = h.run(kindFull, "acumatica_get_sales_order", map[string]any{
		"OrderType": so.String("OrderType"), "OrderNbr": so.String("OrderNbr"), "select": []string{"OrderNumber"}})
	te := wantCode(t, err, toolerr.InvalidArgument, "unknown select field")
	if !strings.Contains(te.Message, "OrderNumber") || !strings.Contains(te.Message, "never ran") {
		t.Errorf("message = %s", te.Message)
	}
}

func TestGetterNotFoundNamesEntityKeysAndVersion(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: `{"tenant":"Demo","endpoint_version":"25.200.001"}`})
	_, err := h.run(kindFull, "acumatica_get_invoice", map[string]any{"Type": "Invoice", "ReferenceNbr": "NOPE01"})
	te := wantCode(t, err, toolerr.NotFound, "missing invoice")
	for _, want := range []string{"Invoice", "Type 'Invoice'", "ReferenceNbr 'NOPE01'", "Default/25.200.001"} {
		if !strings.Contains(te.Message, want) {
			t.Errorf("message lacks %q: %s", want, te.Message)
		}
	}
}

// A key value with a slash cannot travel in the URL; the getter finds the
// record with a filter on the key fields instead.
func TestGetterKeyWithSlashUsesFilter(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	before := h.sim.RequestCount("/entity/Default/24.200.001/Customer")
	_, err := h.run(kindFull, "acumatica_get_customer", map[string]any{"CustomerID": "A/B"})
	te := wantCode(t, err, toolerr.NotFound, "slash key")
	if !strings.Contains(te.Message, "CustomerID 'A/B'") {
		t.Errorf("message = %s", te.Message)
	}
	if h.sim.RequestCount("/entity/Default/24.200.001/Customer") != before+1 {
		t.Error("the lookup did not go to the entity's list URL")
	}
	if h.sim.RequestCount("/entity/Default/24.200.001/Customer/A") != 0 {
		t.Error("a key with a slash was put in the URL path")
	}
}

// A key value that Acumatica routes to something other than a key lookup
// is looked up with a filter: /Customer/$adHocSchema is the entity's
// empty template, and /Customer/<GUID> is the record whose internal id is
// that GUID, whatever its CustomerID. Neither is the customer asked for.
func TestGetterKeyThatAcumaticaRoutesElsewhereUsesFilter(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	other := h.sim.Data().Records("Customer")[0]
	for _, key := range []string{"$adHocSchema", other.ID} {
		out, err := h.run(kindFull, "acumatica_get_customer", map[string]any{"CustomerID": key})
		if err == nil {
			t.Errorf("CustomerID %q read a record: %v", key, out["record"])
			continue
		}
		te := wantCode(t, err, toolerr.NotFound, key)
		if !strings.Contains(te.Message, "CustomerID '"+key+"'") {
			t.Errorf("message = %s", te.Message)
		}
	}
	// The record itself is still read by its CustomerID.
	out := h.mustRun(kindFull, "acumatica_get_customer", map[string]any{"CustomerID": other.String("CustomerID")})
	if got := out["record"].(map[string]any)["CustomerID"]; got != other.String("CustomerID") {
		t.Errorf("CustomerID %s read %v", other.String("CustomerID"), got)
	}
}

// The getter table follows the Default endpoint's catalogue: key fields in
// URL order and collections the entity really has; at least 38 entities
// across the ten modules.
func TestGetterTableMatchesCatalogue(t *testing.T) {
	if len(getterSpecs) < 38 {
		t.Errorf("%d getters, want at least 38", len(getterSpecs))
	}
	modules := map[string]bool{}
	seen := map[string]bool{}
	for _, g := range getterSpecs {
		if seen[g.Entity] {
			t.Errorf("%s: two getters", g.Entity)
		}
		seen[g.Entity] = true
		modules[g.Module] = true
		info, ok := defaultEntities[g.Entity]
		if !ok {
			t.Errorf("%s: not a Default-endpoint entity", g.Entity)
			continue
		}
		var keys []string
		for _, k := range g.Keys {
			keys = append(keys, k.Name)
		}
		if !slices.Equal(keys, info.Keys) {
			t.Errorf("%s: keys %v, catalogue has %v", g.Entity, keys, info.Keys)
		}
		if got := acumaticatest.KeyFields(g.Entity); !slices.Equal(got, keys) {
			t.Errorf("%s: keys %v, simulator has %v", g.Entity, keys, got)
		}
	}
	if len(modules) < 10 {
		t.Errorf("getters cover %d modules, want 10: %v", len(modules), modules)
	}
}

// Keys that ASP.NET or IIS would refuse in a URL path go through a filter.
func TestKeysThatCannotTravelInAPath(t *testing.T) {
	for _, k := range []string{"A/B", "A|B", "50%", "A&B", "A:B", "A+B", "A.", "A ", "A*", "A?B", `A\B`, "<A>", "BIN", "app_data", "Web.Config"} {
		if !keysNeedFilter([]string{"OK", k}) {
			t.Errorf("%q goes in the path", k)
		}
	}
	for _, k := range []string{"C000001", "SO-0001", "Credit Memo", "A.B", "O'Brien", "10,5", "A=B", "a@b", "BINS", "App_Data2"} {
		if keysNeedFilter([]string{k}) {
			t.Errorf("%q was sent through a filter needlessly", k)
		}
	}
	text := []keySpec{text("CustomerID", "")}
	for _, k := range []string{"$adHocSchema", "f19c8926-7e08-87b9-e047-c9edf3f03b7f", "{F19C8926-7E08-87B9-E047-C9EDF3F03B7F}", "f19c89267e0887b9e047c9edf3f03b7f"} {
		if !keysRouteElsewhere([]string{k}, text) {
			t.Errorf("%q goes in the path", k)
		}
	}
	for _, k := range []string{"C000001", "A$B", "f19c8926"} {
		if keysRouteElsewhere([]string{k}, text) {
			t.Errorf("%q was sent through a filter needlessly", k)
		}
	}
	if keysRouteElsewhere([]string{"f19c8926-7e08-87b9-e047-c9edf3f03b7f"}, []keySpec{{Name: "TimeEntryID", Kind: keyGUID}}) {
		t.Error("a GUID key field was sent through a filter")
	}
	if got := odataV3Literal(keyText, "O'Brien"); got != "'O''Brien'" {
		t.Errorf("literal = %s", got)
	}
}

// TestGetterFindsArchivedRecords: Acumatica hides archived records from
// the API unless a request sends PX-ApiArchive: SHOW (api-facts.md §1.2).
// A getter names one record by its keys, so it must find that record
// archived or not; otherwise an old invoice that exists reads as NOT_FOUND
// ("check the key values").
func TestGetterFindsArchivedRecords(t *testing.T) {
	cutoff := acumaticatest.DefaultNow.AddDate(-1, 0, 0)
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{ArchivedBefore: cutoff}})
	var archived *acumaticatest.Record
	for _, inv := range h.sim.Data().Records("Invoice") {
		if inv.Time("Date").Before(cutoff) {
			archived = inv
			break
		}
	}
	if archived == nil {
		t.Fatal("no invoice is dated before the cut-off")
	}
	out, err := h.run(kindFull, "acumatica_get_invoice", map[string]any{"Type": archived.String("Type"), "ReferenceNbr": archived.String("ReferenceNbr")})
	if err != nil {
		t.Fatalf("archived invoice %s: %v", archived.String("ReferenceNbr"), err)
	}
	rec := out["record"].(map[string]any)
	if rec["ReferenceNbr"] != archived.String("ReferenceNbr") || fmt.Sprint(rec["Amount"]) != archived.Decimal("Amount").Format(4) {
		t.Errorf("record = %v %v, want %s %s", rec["ReferenceNbr"], rec["Amount"], archived.String("ReferenceNbr"), archived.Decimal("Amount").Format(4))
	}
}

// TestListFindsArchivedRecordsWhenAsked: Acumatica leaves archived records
// out of every list unless the request asks for them. A model looking for
// an old invoice by date must be able to ask (includeArchived), and by
// default gets what Acumatica shows its screens.
func TestListFindsArchivedRecordsWhenAsked(t *testing.T) {
	cutoff := acumaticatest.DefaultNow.AddDate(-1, 0, 0)
	h := newHarness(t, harnessOptions{sim: acumaticatest.Options{ArchivedBefore: cutoff}})
	var all, old int
	for _, inv := range h.sim.Data().Records("Invoice") {
		all++
		if inv.Time("Date").Before(cutoff) {
			old++
		}
	}
	if old == 0 || old == all {
		t.Fatalf("%d of %d invoices are dated before the cut-off; the test needs some of each", old, all)
	}
	count := func(args map[string]any) int {
		t.Helper()
		out, err := h.run(kindFull, "acumatica_list_entities", args)
		if err != nil {
			t.Fatal(err)
		}
		return len(out["results"].([]any))
	}
	if got := count(map[string]any{"entity": "Invoice", "top": 1000}); got != all-old {
		t.Errorf("default list: %d invoices, want the %d not archived", got, all-old)
	}
	if got := count(map[string]any{"entity": "Invoice", "top": 1000, "includeArchived": true}); got != all {
		t.Errorf("includeArchived: %d invoices, want all %d", got, all)
	}
}

// A select narrows the fields, and an expanded collection or linked entity
// is a field of the record too: Acumatica answers only what $select names,
// so expand Details with select OrderNbr would return no lines at all, and
// the model would read an order without lines. The expanded names are
// selected whole unless select already names fields of them.
func TestSelectKeepsWhatIsExpanded(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	so := h.sim.Data().Records("SalesOrder")[10]
	lines := len(so.Detail("Details"))
	if lines == 0 {
		t.Fatal("the order has no lines in the data")
	}
	out := h.mustRun(kindFull, "acumatica_get_sales_order", map[string]any{
		"OrderType": so.String("OrderType"), "OrderNbr": so.String("OrderNbr"), "expand": []string{"Details"}, "select": []string{"OrderNbr", "Status"}})
	rec := out["record"].(map[string]any)
	if got, _ := rec["Details"].([]any); len(got) != lines {
		t.Errorf("get with expand Details and select OrderNbr, Status: Details = %v, want %d lines", rec["Details"], lines)
	}
	if _, ok := rec["OrderTotal"]; ok {
		t.Errorf("select no longer limits the fields: %v", rec)
	}

	filter := "OrderType eq '" + so.String("OrderType") + "' and OrderNbr eq '" + so.String("OrderNbr") + "'"
	out = h.mustRun(kindFull, "acumatica_list_entities", map[string]any{"entity": "SalesOrder", "filterExpression": filter,
		"expand": []string{"Details"}, "select": []string{"OrderNbr"}})
	rows := out["results"].([]any)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	if got, _ := rows[0].(map[string]any)["Details"].([]any); len(got) != lines {
		t.Errorf("list with expand Details and select OrderNbr: Details = %v, want %d lines", rows[0].(map[string]any)["Details"], lines)
	}

	// Fields of an expanded entity named in select still narrow it.
	c := h.sim.Data().Records("Customer")[0]
	out = h.mustRun(kindFull, "acumatica_get_customer", map[string]any{"CustomerID": c.String("CustomerID"),
		"expand": []string{"MainContact"}, "select": []string{"CustomerID", "MainContact/Email"}})
	mc, _ := out["record"].(map[string]any)["MainContact"].(map[string]any)
	if mc["Email"] != c.Link("MainContact").String("Email") {
		t.Errorf("MainContact = %v", mc)
	}
	if _, ok := mc["Phone1"]; ok {
		t.Errorf("select MainContact/Email returned the whole contact: %v", mc)
	}
}

// IIS's request filtering hides every URL with a segment named bin,
// App_Data, web.config or another of its default hidden segments (any
// case; iis.net, requestFiltering/hiddenSegments: 404.8). A record whose
// key is such a name ("BIN", a plausible item or customer id) cannot be
// read at /Customer/BIN: IIS answers its own 404 and the getter reported
// no such customer. It is found with a filter on its key fields instead.
func TestGetterKeyThatIISHidesUsesFilter(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	if status := h.putInERP(kindFull, "Customer", map[string]any{"CustomerID": "BIN", "CustomerName": "Bin Supplies Ltd"}, "If-None-Match"); status != http.StatusOK {
		t.Fatalf("creating customer BIN: HTTP %d", status)
	}
	out, err := h.run(kindFull, "acumatica_get_customer", map[string]any{"CustomerID": "BIN"})
	if err != nil {
		t.Fatalf("CustomerID BIN: %v", err)
	}
	if got := out["record"].(map[string]any)["CustomerName"]; got != "Bin Supplies Ltd" {
		t.Errorf("CustomerID BIN read %v", got)
	}
	if n := h.sim.RequestCount("/entity/Default/24.200.001/Customer/BIN"); n != 0 {
		t.Errorf("the key went in the URL path %d times, where IIS hides it", n)
	}
}
