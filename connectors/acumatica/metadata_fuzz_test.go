package acumatica

import (
	"encoding/json"
	"math/big"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// openAPISeed is a small OpenAPI document cut from the real Default
// 24.200.001 swagger.json: the named tags and schemas, as Acumatica wrote
// them.
func openAPISeed(f *testing.F, tags []string, schemas []string) []byte {
	f.Helper()
	raw, err := os.ReadFile("acumaticatest/data/swagger-Default-24.200.001.json")
	if err != nil {
		f.Fatal(err)
	}
	var d struct {
		Tags       []map[string]any `json:"tags"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		f.Fatal(err)
	}
	want := map[string]bool{}
	for _, t := range tags {
		want[t] = true
	}
	out := map[string]any{"openapi": "3.0.1", "info": map[string]any{"title": "Default/24.200.001"}}
	var keptTags []map[string]any
	for _, t := range d.Tags {
		if name, _ := t["name"].(string); want[name] {
			keptTags = append(keptTags, t)
		}
	}
	keptSchemas := map[string]json.RawMessage{}
	for _, s := range schemas {
		keptSchemas[s] = d.Components.Schemas[s]
	}
	out["tags"] = keptTags
	out["components"] = map[string]any{"schemas": keptSchemas}
	b, err := json.Marshal(out)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzOpenAPI: any document the ERP serves as swagger.json either builds
// a model or is refused with an error, never a panic; a model has
// top-level entities, each found by its name, and survives the JSON
// round trip through the shared cache unchanged.
func FuzzOpenAPI(f *testing.F) {
	f.Add(openAPISeed(f, []string{"Customer"}, []string{"Customer", "CustomerContact", "Contact", "StringValue"}))
	f.Add(openAPISeed(f, []string{"SalesOrder", "StockItem"}, []string{"SalesOrder", "SalesOrderDetail", "StockItem"}))
	f.Add([]byte(`{"tags":[{"name":"A","description":"As (AR303000)"}],"components":{"schemas":{"A":{"allOf":[{"$ref":"#/components/schemas/Entity"},{"properties":{"X":{"$ref":"#/components/schemas/StringValue"},"L":{"type":"array","items":{"$ref":"#/components/schemas/B"}}}}]}}}}`))
	f.Add([]byte(`{"tags":[],"components":{}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		m, err := parseOpenAPI("Default/24.200.001", doc)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("refused without a reason")
			}
			return
		}
		if len(m.Entities) == 0 {
			t.Fatal("accepted a model without entities")
		}
		for name := range m.Entities {
			if m.entity(name) == nil {
				t.Fatalf("entity %q is not found by its name", name)
			}
			if m.Subs[name] != nil {
				t.Fatalf("%q is both an entity and a sub-entity", name)
			}
		}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("the model does not encode for the cache: %v", err)
		}
		var back apiModel
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatalf("the cached model does not decode: %v", err)
		}
		if !reflect.DeepEqual(&back, m) {
			t.Fatalf("the model changed through the cache:\n%+v\n%+v", m, &back)
		}
	})
}

// FuzzGIMetadata: any GI $metadata answer either builds a model or is
// refused with an error, never a panic; every inquiry of a model is found
// by its name, also after the JSON round trip through the shared cache.
func FuzzGIMetadata(f *testing.F) {
	raw, err := os.ReadFile("testdata/samples/odata-gi-metadata-fragment-200.xml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx"><edmx:DataServices><Schema Namespace="GenericInquiry"><EntityType Name="T"><Key><PropertyRef Name="ID"/></Key><Property Name="ID" Type="Edm.Int32"/></EntityType><Function Name="F"><Parameter Name="P" Type="Edm.String"/></Function><EntityContainer><EntitySet Name="Inq One" EntityType="GenericInquiry.T"/><FunctionImport Name="T_WithParameters" Function="GenericInquiry.F" EntitySet="Inq One"/></EntityContainer></Schema></edmx:DataServices></edmx:Edmx>`))
	f.Add([]byte(`<Edmx><DataServices></DataServices></Edmx>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		m, err := parseGIMetadata("MyStore", doc)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("refused without a reason")
			}
			return
		}
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("the model does not encode for the cache: %v", err)
		}
		var back giModel
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("the cached model does not decode: %v", err)
		}
		if len(back.Inquiries) != len(m.Inquiries) {
			t.Fatalf("%d inquiries came back from the cache, want %d", len(back.Inquiries), len(m.Inquiries))
		}
		for _, q := range m.Inquiries {
			if m.inquiry(q.Name) == nil {
				t.Fatalf("inquiry %q is not found by its name", q.Name)
			}
			if got := back.inquiry(q.Name); got == nil || !reflect.DeepEqual(got.columnNames(), m.inquiry(q.Name).columnNames()) {
				t.Fatalf("inquiry %q is not the same after the cache: %+v", q.Name, got)
			}
		}
	})
}

// FuzzInquiryPage reads any GI OData answer as inquiryRows does: a page
// either decodes or is refused, and each row it gives, cleaned, encodes
// as JSON whose numbers (Edm.Decimal text turned json.Number) are valid.
func FuzzInquiryPage(f *testing.F) {
	for _, name := range []string{"odata-gi-with-parameters-200.json", "odata-gi-customer-contacts-200.json"} {
		raw, err := os.ReadFile("testdata/samples/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte(`{"odata.metadata":"x","value":[{"QtyOnHand":" 1e5 ","Qty":"-0.50","Name":"a  "}]}`))
	inq := &giInquiry{Name: "Item Availability Data", Columns: []giColumn{{Name: "QtyOnHand", Type: "Edm.Decimal"}, {Name: "Qty", Type: "Edm.Double"}, {Name: "Name", Type: "Edm.String"}}}
	f.Fuzz(func(t *testing.T, body []byte) {
		var page giPage
		if err := outbound.UnmarshalJSON(body, &page); err != nil {
			return
		}
		padded := page.Context == "" && page.Metadata != ""
		for _, row := range page.Value {
			cleanInquiryRow(row, inq, padded)
			if _, err := json.Marshal(row); err != nil {
				t.Fatalf("%q: a cleaned row does not encode: %v", body, err)
			}
		}
	})
}

// FuzzFunctionArgs: parameter values reach Acumatica as OData string
// literals that read back as the values given, whatever they hold.
func FuzzFunctionArgs(f *testing.F) {
	f.Add("Warehouse", "MAIN", "Date", "2025-01-01")
	f.Add("Warehouse", "O'Brien's", "X", "a','b")
	f.Add("A", "", "B", "'")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string) {
		for _, n := range []string{n1, n2} {
			if !regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`).MatchString(n) {
				return // parameter names come from the tenant's $metadata
			}
		}
		params := map[string]string{n1: v1, n2: v2}
		got := parseFunctionArgs(t, functionArgs(params))
		if !reflect.DeepEqual(got, params) {
			t.Fatalf("functionArgs(%q) = %q, which reads back as %q", params, functionArgs(params), got)
		}
	})
}

// parseFunctionArgs reads name='value',... as OData does: a quote inside
// a literal is written twice.
func parseFunctionArgs(t *testing.T, s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		eq := strings.Index(s, "='")
		if eq < 0 {
			t.Fatalf("no literal in %q", s)
		}
		name, rest := s[:eq], s[eq+2:]
		var v strings.Builder
		for {
			i := strings.IndexByte(rest, '\'')
			if i < 0 {
				t.Fatalf("unterminated literal in %q", s)
			}
			v.WriteString(rest[:i])
			if strings.HasPrefix(rest[i:], "''") {
				v.WriteByte('\'')
				rest = rest[i+2:]
				continue
			}
			rest = rest[i+1:]
			break
		}
		out[name] = v.String()
		s = strings.TrimPrefix(rest, ",")
	}
	return out
}

// FuzzDecimal: a number argument (OrderQty, UnitPrice) or a number in
// Acumatica's answer is read exactly as big.Rat reads it, within a size
// every computation on it (places, lineAmount, money) handles quickly.
func FuzzDecimal(f *testing.F) {
	for _, seed := range []string{"12", "2.5", "1180.000000", "1e2", "0.000001", "-3", "1e-1000000", "NaN", "1/3", "0x10"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
			return // json.Number holds a JSON number literal only
		}
		r, ok := decimal(json.Number(s))
		if !ok {
			return
		}
		if r.Num().BitLen() > 4096 || r.Denom().BitLen() > 4096 {
			t.Fatalf("decimal(%q) accepted a number of %d/%d bits", s, r.Num().BitLen(), r.Denom().BitLen())
		}
		ref, _ := new(big.Rat).SetString(s)
		if ref == nil || ref.Cmp(r) != 0 {
			t.Fatalf("decimal(%q) = %s, big.Rat reads %v", s, r.RatString(), ref)
		}
	})
}

// FuzzParseEndpointList: GET /entity is the ERP's answer, in either of
// two shapes. Whatever it is, the parser never panics, says ok exactly
// when it found an endpoint, and gives one "Name/Version" per row; the
// two shapes of the same rows give the same endpoints.
func FuzzParseEndpointList(f *testing.F) {
	sample, err := os.ReadFile("testdata/samples/entity-root-version-and-endpoints-200.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sample)
	f.Add([]byte(`[{"name":"Default","version":"24.200.001"}]`))
	f.Add([]byte(`{"endpoints":[]}`))
	f.Add([]byte(` [] `))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		l, ok := parseEndpointList(body)
		if ok != (len(l.rows) > 0) || len(l.endpoints) != len(l.rows) {
			t.Fatalf("ok %v with %d rows and %d endpoints", ok, len(l.rows), len(l.endpoints))
		}
		for i, e := range l.rows {
			if l.endpoints[i] != e.Name+"/"+e.Version {
				t.Fatalf("endpoint %d is %q for row %+v", i, l.endpoints[i], e)
			}
		}
		if !ok {
			return
		}
		bare, err := json.Marshal(l.rows)
		if err != nil {
			t.Fatal(err)
		}
		again, ok := parseEndpointList(bare)
		if !ok || !reflect.DeepEqual(again.endpoints, l.endpoints) {
			t.Fatalf("the bare array of the same rows gave %v, want %v", again.endpoints, l.endpoints)
		}
	})
}
