package acumaticatest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// assertAcumaticaOrder checks id, rowNumber, note, fields sorted
// case-insensitively, custom, _links.
func assertAcumaticaOrder(t *testing.T, where string, keys []string) {
	t.Helper()
	if len(keys) < 5 || keys[0] != "id" || keys[1] != "rowNumber" || keys[2] != "note" {
		t.Errorf("%s: starts %v", where, keys[:min(3, len(keys))])
		return
	}
	end := len(keys)
	if keys[end-1] == "_links" {
		end--
	}
	if keys[end-1] != "custom" {
		t.Errorf("%s: custom not last before _links: %v", where, keys[end-2:])
	}
	fields := keys[3 : end-1]
	for i := 1; i < len(fields); i++ {
		if strings.ToLower(fields[i-1]) > strings.ToLower(fields[i]) {
			t.Errorf("%s: %s before %s", where, fields[i-1], fields[i])
		}
	}
}

// sampleOrderMatches checks that the keys two responses share appear in
// the same relative order.
func sampleOrderMatches(t *testing.T, where string, sample, ours []string) {
	t.Helper()
	pos := map[string]int{}
	for i, k := range ours {
		pos[k] = i
	}
	last := -1
	for _, k := range sample {
		p, ok := pos[k]
		if !ok {
			t.Errorf("%s: sample field %s missing from our response", where, k)
			continue
		}
		if p < last {
			t.Errorf("%s: %s out of order", where, k)
		}
		last = p
	}
}

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func firstElement(t *testing.T, list []byte) []byte {
	t.Helper()
	var arr []json.RawMessage
	mustUnmarshal(t, list, &arr)
	if len(arr) == 0 {
		t.Fatal("empty list")
	}
	return arr[0]
}

// Our records have the shape of the real recordings: same envelope, same
// field order, every wrapper {} or {"value":…}.
func TestShapesMatchSamples(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	for _, c := range []struct{ sample, entity string }{
		{"customer-list-top1-200.json", "Customer"},
		{"salesorder-list-top1-200.json", "SalesOrder"},
		{"stockitem-list-top1-200.json", "StockItem"},
	} {
		sample := firstElement(t, readSample(t, c.sample))
		_, b := get(t, s.entityURL(Version24, c.entity, url.Values{"$top": {"1"}}), tok)
		ours := firstElement(t, b)
		sk, ok := topLevelKeys(t, sample), topLevelKeys(t, ours)
		assertAcumaticaOrder(t, c.sample, sk)
		assertAcumaticaOrder(t, c.entity, ok)
		sampleOrderMatches(t, c.entity, sk, ok)
		assertWrappers(t, c.entity, ours)
	}
	sample := readSample(t, "SYNTHETIC-invoice-get-expand-details-v24.200.001.json")
	inv := s.Data().Records("Invoice")[0]
	_, b := get(t, s.entityURL(Version24, "Invoice/"+inv.ID, url.Values{"$expand": {"Details"}}), tok)
	sampleOrderMatches(t, "Invoice", topLevelKeys(t, sample), topLevelKeys(t, b))
	var sm, om struct{ Details []json.RawMessage }
	mustUnmarshal(t, sample, &sm)
	mustUnmarshal(t, b, &om)
	sampleOrderMatches(t, "InvoiceDetail", topLevelKeys(t, sm.Details[0]), topLevelKeys(t, om.Details[0]))
	assertAcumaticaOrder(t, "InvoiceDetail", topLevelKeys(t, om.Details[0]))
	var links struct {
		Links map[string]string `json:"_links"`
	}
	mustUnmarshal(t, b, &links)
	if links.Links["files:put"] != "/entity/Default/24.200.001/files/PX.Objects.AR.ARInvoiceEntry/Document/"+inv.ID+"/{filename}" ||
		links.Links["self"] != "/entity/Default/24.200.001/Invoice/"+inv.ID {
		t.Errorf("_links %v", links.Links)
	}
}

var reDateValue = regexp.MustCompile(`^"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d*[1-9])?\+00:00"$`)

// assertWrappers checks that scalars are {} or {"value":X} (never
// {"value":null}) and that date-times use Acumatica's format.
func assertWrappers(t *testing.T, where string, rec []byte) {
	t.Helper()
	var m map[string]json.RawMessage
	mustUnmarshal(t, rec, &m)
	for k, v := range m {
		if k == "id" || k == "rowNumber" || k == "custom" || k == "_links" || k == "note" || v[0] != '{' {
			continue
		}
		var w map[string]json.RawMessage
		mustUnmarshal(t, v, &w)
		if len(w) == 0 {
			continue
		}
		val, ok := w["value"]
		if !ok || string(val) == "null" {
			t.Errorf("%s.%s: %s", where, k, v)
		}
		if strings.HasSuffix(k, "DateTime") && !reDateValue.Match(val) {
			t.Errorf("%s.%s: date %s", where, k, val)
		}
	}
}

func TestDecimalScalesAndEmptyFields(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	so := s.Data().Find("SalesOrder", "SO", "SO000003")
	_, b := get(t, s.entityURL(Version24, "SalesOrder/SO/SO000003", url.Values{"$expand": {"Details"}}), tok)
	body := string(b)
	for _, want := range []string{
		`"CurrencyRate":{"value":1.00000000}`,
		`"OrderTotal":{"value":` + so.Decimal("OrderTotal").Format(4) + `}`,
		`"OrderQty":{"value":` + so.Detail("Details")[0].Decimal("OrderQty").Format(6) + `}`,
		`"UnitPrice":{"value":` + so.Detail("Details")[0].Decimal("UnitPrice").Format(6) + `}`,
		`"CashAccount":{}`,
		`"Date":{"value":"` + so.Time("Date").Format("2006-01-02") + `T00:00:00+00:00"}`,
		`"LastModifiedDate":{"value":"` + so.Detail("Details")[0].String("LastModifiedDate") + `"}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %s", want)
		}
	}
	item := s.Data().Records("StockItem")[0]
	_, b = get(t, s.entityURL(Version24, "StockItem/"+item.String("InventoryID"), nil), tok)
	for _, want := range []string{`"AverageCost":{"value":` + item.Decimal("AverageCost").String() + `}`,
		`"MSRP":{"value":` + item.Decimal("MSRP").Format(6) + `}`, `"ImageUrl":{}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("stock item missing %s", want)
		}
	}
	c := s.Data().Records("Customer")[0]
	_, b = get(t, s.entityURL(Version24, "Customer/"+c.String("CustomerID"), nil), tok)
	if !strings.Contains(string(b), `"WriteOffLimit":{"value":`+c.Decimal("WriteOffLimit").Format(4)+`}`) {
		t.Errorf("WriteOffLimit scale: %.400s", b)
	}
}

func TestDecimalFormat(t *testing.T) {
	for _, c := range []struct {
		in    string
		scale int
		want  string
	}{{"30", 4, "30.0000"}, {"1", 8, "1.00000000"}, {"0", -1, "0.0"}, {"201.73", -1, "201.73"},
		{"-12.5", 2, "-12.50"}, {"0.000001", 6, "0.000001"}, {"7", 0, "7"}} {
		if got := mustDecimal(c.in).Format(c.scale); got != c.want {
			t.Errorf("%s at %d = %s, want %s", c.in, c.scale, got, c.want)
		}
	}
	if got := mustDecimal("19.99").Mul(mustDecimal("0.0725"), 2); got.Format(2) != "1.45" {
		t.Errorf("rounding: %s", got.Format(2))
	}
}

// An empty boolean is {} as any empty field, not false (the recorded
// customer has "ShippingAddressOverride":{} next to
// "BillingAddressOverride":{"value":false}): the simulator's customer has
// its booleans empty or set exactly where the recording does.
func TestEmptyBooleanIsEmpty(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	var sample, ours map[string]json.RawMessage
	mustUnmarshal(t, firstElement(t, readSample(t, "customer-list-top1-200.json")), &sample)
	_, b := get(t, s.entityURL(Version24, "Customer", url.Values{"$top": {"1"}}), tok)
	mustUnmarshal(t, firstElement(t, b), &ours)
	es := endpoints()[Version24].entity("Customer")
	for name, f := range es.Fields {
		if f.Type != tBool || sample[name] == nil {
			continue
		}
		if sampleEmpty, ourEmpty := string(sample[name]) == "{}", string(ours[name]) == "{}"; sampleEmpty != ourEmpty {
			t.Errorf("Customer.%s: recorded %s, simulated %s", name, sample[name], ours[name])
		}
	}
}

// In a $filter an empty boolean is SQL NULL: it equals neither false nor
// true.
func TestFilterEmptyBoolean(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	for _, v := range []bool{false, true} {
		want := 0
		for _, r := range s.Data().Records("Customer") {
			if b, ok := r.Fields["ShippingAddressOverride"].(bool); ok && b == v {
				want++
			}
		}
		_, b := get(t, s.entityURL(Version24, "Customer", url.Values{"$filter": {fmt.Sprintf("ShippingAddressOverride eq %t", v)}}), tok)
		var got []json.RawMessage
		mustUnmarshal(t, b, &got)
		if len(got) != want {
			t.Errorf("ShippingAddressOverride eq %t: %d customers, seeded %d", v, len(got), want)
		}
	}
}
