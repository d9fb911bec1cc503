package acumatica

import (
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

func TestDescribeEntityForEveryUserKindIsCached(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	swagger := "/entity/Default/24.200.001/swagger.json"
	for _, kind := range userKinds {
		t.Run(kind.name, func(t *testing.T) {
			h.t = t
			out := h.mustRun(kind, "acumatica_describe_entity", map[string]any{"entity": "SalesOrder"})
			if out["screen"] != "SO301000" || out["form"] != "Sales Orders" {
				t.Errorf("form = %v %v", out["form"], out["screen"])
			}
			keys := out["keys"].([]any)
			if len(keys) != 2 || keys[0] != "OrderType" || keys[1] != "OrderNbr" {
				t.Errorf("keys = %v", keys)
			}
			found := false
			for _, d := range out["details"].([]any) {
				dm := d.(map[string]any)
				if dm["name"] == "Details" && dm["entity"] == "SalesOrderDetail" && len(dm["fields"].([]any)) > 10 {
					found = true
				}
			}
			if !found {
				t.Errorf("details = %v", out["details"])
			}
		})
	}
	// Four users, one download: the OpenAPI document is cached per site.
	if n := h.sim.RequestCount(swagger); n != 1 {
		t.Errorf("the OpenAPI document was fetched %d times, want 1", n)
	}
	out := h.mustRun(kindFull, "acumatica_describe_entity", map[string]any{"entity": "Customer"})
	for _, f := range out["fields"].([]any) {
		if fm := f.(map[string]any); fm["name"] == "AccountRef" && fm["label"] != "Ext Ref Nbr" {
			t.Errorf("AccountRef label = %v", fm["label"])
		}
	}
	_, err := h.run(kindFull, "acumatica_describe_entity", map[string]any{"entity": "SalesOrders"})
	te := wantCode(t, err, toolerr.NotFound, "unknown entity")
	if !strings.Contains(te.Message, "did you mean SalesOrder") {
		t.Errorf("message = %s", te.Message)
	}
}

// Default/25.200.001 has what 24 lacks, and lacks what 24 has.
func TestDescribeEntityFollowsTheEndpointVersion(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: `{"tenant":"Demo","endpoint_version":"25.200.001"}`})
	out := h.mustRun(kindFull, "acumatica_describe_entity", map[string]any{"entity": "Bill"})
	found := false
	for _, d := range out["details"].([]any) {
		found = found || d.(map[string]any)["name"] == "RetainageDocuments"
	}
	if !found || out["endpoint"] != "Default/25.200.001" {
		t.Errorf("Bill on 25.200.001 lacks RetainageDocuments: %v", out["details"])
	}
}

func TestSchemaKnowledgeForEveryUserKind(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, kind := range userKinds {
		t.Run(kind.name, func(t *testing.T) {
			h.t = t
			out := h.mustRun(kind, "acumatica_search_schema", map[string]any{"query": "customer credit limit"})
			hits := out["results"].([]any)
			if len(hits) == 0 {
				t.Fatal("no hits")
			}
			names := []string{}
			for _, hit := range hits {
				names = append(names, hit.(map[string]any)["name"].(string))
			}
			if !strings.Contains(strings.Join(names, " "), "Customer.CreditLimit") {
				t.Errorf("hits = %v", names)
			}
			if hits[0].(map[string]any)["matchedAllWords"] != true {
				t.Errorf("best hit does not match every word: %v", hits[0])
			}

			out = h.mustRun(kind, "acumatica_search_schema", map[string]any{"query": "open invoices", "kind": "inquiry"})
			if hits := out["results"].([]any); len(hits) == 0 || hits[0].(map[string]any)["name"] != "AR-OpenInvoices" {
				t.Errorf("inquiry search = %v", hits)
			}
			// On-screen labels are searchable: "Ext Ref Nbr" is Customer.AccountRef.
			out = h.mustRun(kind, "acumatica_search_schema", map[string]any{"query": "customer ext ref nbr", "kind": "field", "limit": 3})
			found := false
			for _, hit := range out["results"].([]any) {
				found = found || hit.(map[string]any)["name"] == "Customer.AccountRef"
			}
			if !found {
				t.Errorf("label search = %v", out["results"])
			}

			ent := h.mustRun(kind, "acumatica_get_schema_entity", map[string]any{"name": "salesorder"})
			if ent["kind"] != "entity" || ent["name"] != "SalesOrder" {
				t.Errorf("get_schema_entity = %v", ent)
			}
			inq := h.mustRun(kind, "acumatica_get_schema_entity", map[string]any{"name": "Customer Contacts"})
			if inq["kind"] != "inquiry" {
				t.Errorf("inquiry lookup = %v", inq)
			}

			list := h.mustRun(kind, "acumatica_list_schema_entities", map[string]any{"module": "receivables"})
			for _, r := range list["results"].([]any) {
				if r.(map[string]any)["module"] != "receivables" {
					t.Errorf("module filter let %v through", r)
				}
			}
			if len(list["results"].([]any)) < 5 {
				t.Errorf("receivables entities = %v", list["results"])
			}
			inqs := h.mustRun(kind, "acumatica_list_schema_entities", map[string]any{"kind": "inquiry"})
			if n := len(inqs["results"].([]any)); n != len(h.sim.Data().Inquiries()) {
				t.Errorf("%d inquiries in the index", n)
			}
		})
	}
	_, err := h.run(kindFull, "acumatica_get_schema_entity", map[string]any{"name": "SalesOrdr"})
	te := wantCode(t, err, toolerr.NotFound, "unknown schema entity")
	if !strings.Contains(te.Message, "closest") {
		t.Errorf("message = %s", te.Message)
	}
	st, _ := h.storage.SchemaIndex(h.site.ID).Status(t.Context())
	if !st.Built || st.Version != "Default/24.200.001|Demo" || st.Documents < 1000 {
		t.Errorf("index status = %+v", st)
	}
}

// Without a tenant the index still covers entities and says what it lacks.
func TestSchemaIndexWithoutTenant(t *testing.T) {
	h := newHarness(t, harnessOptions{settings: `{}`})
	out := h.mustRun(kindFull, "acumatica_search_schema", map[string]any{"query": "invoice balance"})
	if w := out["warnings"].([]any); len(w) != 1 || !strings.Contains(w[0].(string), "tenant") {
		t.Errorf("warnings = %v", w)
	}
}

// A call without shared storage still answers, building what it needs.
func TestSchemaToolsWithoutSharedStorage(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	out, err := h.runCall("acumatica_search_schema", func(raw []byte) *connector.Call {
		c := h.newCall(kindFull, raw)
		c.Cache, c.Index = nil, nil
		return c
	}, map[string]any{"query": "sales order"})
	if err != nil || len(out["results"].([]any)) == 0 {
		t.Fatalf("out = %v, %v", out, err)
	}
	out, err = h.runCall("acumatica_clear_cache", func(raw []byte) *connector.Call {
		c := h.newCall(kindFull, raw)
		c.Cache, c.Index = nil, nil
		return c
	}, nil)
	if err != nil || out["indexCleared"] != false {
		t.Fatalf("clear without storage = %v, %v", out, err)
	}
}

func TestClearCacheForEveryUserKind(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	swagger := "/entity/Default/24.200.001/swagger.json"
	for i, kind := range userKinds {
		t.Run(kind.name, func(t *testing.T) {
			h.t = t
			h.mustRun(kind, "acumatica_describe_entity", map[string]any{"entity": "Vendor"})
			h.mustRun(kind, "acumatica_search_schema", map[string]any{"query": "vendor"})
			out := h.mustRun(kind, "acumatica_clear_cache", nil)
			if out["indexCleared"] != true || out["entriesCleared"].(interface{ String() string }).String() == "0" {
				t.Errorf("clear = %v", out)
			}
			if n := h.sim.RequestCount(swagger); n != i+1 {
				t.Errorf("OpenAPI downloads = %d before the next describe, want %d", n, i+1)
			}
			h.ahead.Add(int64(clearCacheInterval))
		})
	}
	h.t = t
	h.mustRun(kindFull, "acumatica_describe_entity", map[string]any{"entity": "Vendor"})
	if n := h.sim.RequestCount(swagger); n != len(userKinds)+1 {
		t.Errorf("after the last clear, describe did not refetch (%d downloads)", n)
	}
}

// TestClearCacheAtMostOncePerInterval: each clear makes the next describe
// and search read the OpenAPI document again and rebuild the site's index
// in the shared store (megabytes for a real endpoint). Called in a loop by
// one user, clears would keep the shared store rebuilding; a site's cache
// is cleared at most once per interval, and a clear within it is refused
// with RATE_LIMITED and leaves the cache and index as they are.
func TestClearCacheAtMostOncePerInterval(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	swagger := "/entity/Default/24.200.001/swagger.json"
	h.mustRun(kindFull, "acumatica_search_schema", map[string]any{"query": "vendor"})
	if out := h.mustRun(kindFull, "acumatica_clear_cache", nil); out["indexCleared"] != true {
		t.Fatalf("first clear = %v", out)
	}
	h.mustRun(kindFull, "acumatica_search_schema", map[string]any{"query": "vendor"})
	downloads := h.sim.RequestCount(swagger)
	_, err := h.run(kindNoAR, "acumatica_clear_cache", nil)
	te := wantCode(t, err, toolerr.RateLimited, "a second clear within the interval, by another user")
	if te.RetryAfter <= 0 || te.RetryAfter > clearCacheInterval {
		t.Errorf("retry after %v, want within %v", te.RetryAfter, clearCacheInterval)
	}
	st, err := h.storage.SchemaIndex(h.site.ID).Status(t.Context())
	if err != nil || !st.Built {
		t.Errorf("the refused clear dropped the index: %+v %v", st, err)
	}
	h.mustRun(kindFull, "acumatica_describe_entity", map[string]any{"entity": "Vendor"})
	if n := h.sim.RequestCount(swagger); n != downloads {
		t.Errorf("the refused clear dropped the cache: %d OpenAPI downloads, want %d", n, downloads)
	}
	h.ahead.Add(int64(clearCacheInterval))
	if out := h.mustRun(kindFull, "acumatica_clear_cache", nil); out["indexCleared"] != true {
		t.Errorf("a clear after the interval = %v", out)
	}
}
