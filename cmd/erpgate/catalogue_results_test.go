package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// TestEveryReadToolAnswersToItsOutputSchema calls every read tool of both
// catalogues, through the service door of a real gateway against the
// simulators, with the official Go SDK, and validates every answer's
// structuredContent against the output schema tools/list advertises for
// the tool (JSON Schema 2020-12, formats asserted), its text block being
// the same JSON. Each tool is called with no arguments, with its required
// arguments (an enum's first value, an example, or a value that names
// nothing), with a one-row page where it pages, and with a search that
// matches nothing where it searches: full pages, truncated pages, empty
// pages, summaries and the error envelopes (INVALID_ARGUMENT, NOT_FOUND,
// and the like) all pass through the same check.
func TestEveryReadToolAnswersToItsOutputSchema(t *testing.T) {
	// Limits high enough for a few hundred calls in a minute.
	gw := startGateway(t, "", map[string]string{"ERPGATE_LIMIT_USER_PER_MINUTE": "100000", "ERPGATE_LIMIT_SITE_PER_MINUTE": "100000"})
	fsim := frappetest.NewServer(frappetest.Options{})
	defer fsim.Close()
	fsite := gw.registerFrappe(t, "frappe-cat", fsim, userWithRole(t, fsim, "service"))

	acu := acumaticatest.NewServer(acumaticatest.Options{})
	defer acu.Close()
	asite, err := registerAcumaticaService(context.Background(), gw.admin, devState{}, acumaticaService(acu.ServiceLogin()), "acu-cat", "Test Acumatica", acu.URL)
	if err != nil {
		t.Fatal(err)
	}
	giExport, err := os.ReadFile(filepath.Join("..", "..", "connectors", "acumatica", "testdata", "gi", "flat-export.xml"))
	if err != nil {
		t.Fatal(err)
	}
	requestsToERPs := func() int { return fsim.RequestCount("") + acu.RequestCount("") }
	known := map[string]map[string]any{
		fsite.Slug: {"company": fsim.Data().List("Company")[0].Name, "from_date": "2024-07-01", "to_date": "2025-06-30",
			"party_query": fsim.Data().List("Customer")[0].Str("customer_name")},
		// An inquiry exported from Acumatica, for acumatica_explain_gi_xml.
		asite.Slug: {"entity": "Invoice", "xml": string(giExport)},
	}
	for _, site := range []devSite{fsite, asite} {
		cs := connect(t, site.ServiceMCPURL, map[string]string{"X-Erpgate-Service-Token": site.ServiceToken})
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Tools) == 0 {
			t.Fatalf("%s: no tools", site.Slug)
		}
		answered := map[bool]int{} // by isError
		clearedTwice := false
		for _, tool := range list.Tools {
			if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
				continue // writes ask for approval first (TestApprovalRequiredResultMatchesTheOutputSchema)
			}
			if site.Slug == asite.Slug {
				// Nothing cached: a tool that reads Acumatica's metadata
				// reads it from Acumatica. A site's cache is cleared at
				// most once a minute; removing the mark of the last clear
				// stands for the minute passing.
				execSQL(t, gw.DBURL, `DELETE FROM site_cache WHERE key = 'cleared'`)
				if res, err := callWithin(cs, "acumatica_clear_cache", nil); err != nil || res.IsError {
					t.Fatalf("clearing the cache: %v %v", res, err)
				}
				if !clearedTwice {
					clearedTwice = true
					if r := callTool(t, cs, "acumatica_clear_cache", nil); r.errorCode() != "RATE_LIMITED" {
						t.Errorf("a second clear within the minute: %+v", r)
					}
				}
			}
			before, resultsBefore := requestsToERPs(), answered[false]
			out := compileAdvertised(t, tool)
			in := inputSchemaOf(t, tool)
			for _, args := range representativeArgs(in, known[site.Slug]) {
				res, err := callWithin(cs, tool.Name, args)
				if err != nil {
					t.Errorf("%s %s(%v): a protocol error: %v", site.Slug, tool.Name, args, err)
					continue
				}
				checkAnswer(t, site.Slug, tool.Name, args, out, res)
				answered[res.IsError]++
			}
			// openWorldHint says whether the tool reaches a system outside
			// erpgate. A tool whose calls reached the ERP does; one that
			// answered a call with a result without reaching it (nothing
			// cached) does not. (A call refused before it reached the ERP
			// says neither.)
			reached := requestsToERPs() > before
			open := tool.Annotations.OpenWorldHint
			if reached && (open == nil || !*open) {
				t.Errorf("%s %s: its calls reached the ERP, but it is advertised with openWorldHint %v", site.Slug, tool.Name, derefBool(open))
			}
			if !reached && answered[false] > resultsBefore && (open == nil || *open) {
				t.Errorf("%s %s: it answered with a result without reaching the ERP, but it is advertised with openWorldHint %v", site.Slug, tool.Name, derefBool(open))
			}
		}
		// Both kinds of answer were checked: results and error envelopes.
		if answered[false] == 0 || answered[true] == 0 {
			t.Errorf("%s: %d results and %d errors checked", site.Slug, answered[false], answered[true])
		}
	}
}

func derefBool(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func callWithin(cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// inputSchema is the part of an input schema representativeArgs reads.
type inputSchema struct {
	Properties map[string]struct {
		Type     any    `json:"type"`
		Enum     []any  `json:"enum"`
		Examples []any  `json:"examples"`
		Minimum  *int   `json:"minimum"`
		Format   string `json:"format"`
	} `json:"properties"`
	Required []string `json:"required"`
}

func inputSchemaOf(t *testing.T, tool *mcp.Tool) inputSchema {
	t.Helper()
	raw, err := json.Marshal(tool.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var in inputSchema
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatalf("%s: input schema: %v", tool.Name, err)
	}
	return in
}

// representativeArgs are the argument sets a tool is called with.
// known holds values that name seeded records (a company), by argument
// name; a tool taking such an argument gets it in every set.
func representativeArgs(in inputSchema, known map[string]any) []map[string]any {
	value := func(name string) any {
		p := in.Properties[name]
		switch {
		case known[name] != nil:
			return known[name]
		case p.Format == "date":
			return "2025-06-30"
		case p.Format == "date-time":
			return "2025-06-30T00:00:00Z"
		case len(p.Enum) > 0:
			return p.Enum[0]
		case len(p.Examples) > 0:
			return p.Examples[0]
		}
		typ := fmt.Sprint(p.Type)
		switch {
		case strings.Contains(typ, "integer"), strings.Contains(typ, "number"):
			if p.Minimum != nil {
				return *p.Minimum
			}
			return 1
		case strings.Contains(typ, "boolean"):
			return true
		case strings.Contains(typ, "array"):
			return []any{}
		case strings.Contains(typ, "object"):
			return map[string]any{}
		}
		return "NO-SUCH-RECORD-7"
	}
	required := map[string]any{}
	for _, name := range in.Required {
		required[name] = value(name)
	}
	for name := range known {
		if _, ok := in.Properties[name]; ok {
			required[name] = value(name)
		}
	}
	with := func(k string, v any) map[string]any {
		m := map[string]any{k: v}
		for rk, rv := range required {
			m[rk] = rv
		}
		return m
	}
	sets := []map[string]any{{}, required}
	for _, page := range []string{"limit", "top", "page_size"} {
		if _, ok := in.Properties[page]; ok {
			sets = append(sets, with(page, 1))
		}
	}
	for _, search := range []string{"search", "query", "q"} {
		if _, ok := in.Properties[search]; ok {
			sets = append(sets, with(search, "zzz-matches-nothing-7"))
		}
	}
	return sets
}

func compileAdvertised(t *testing.T, tool *mcp.Tool) *jsonschema.Schema {
	t.Helper()
	if tool.OutputSchema == nil {
		t.Fatalf("%s: no output schema", tool.Name)
	}
	raw, err := json.Marshal(tool.OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.CompileJSON(raw, "erpgate:///advertised/"+tool.Name+".json")
	if err != nil {
		t.Fatalf("%s: the advertised output schema does not compile: %v", tool.Name, err)
	}
	return s
}

// checkAnswer validates one answer against the advertised output schema
// and checks that its text block is the JSON of structuredContent.
func checkAnswer(t *testing.T, site, tool string, args map[string]any, out *jsonschema.Schema, res *mcp.CallToolResult) {
	t.Helper()
	if len(res.Content) != 1 {
		t.Errorf("%s %s(%v): %d content blocks", site, tool, args, len(res.Content))
		return
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Errorf("%s %s(%v): content %T", site, tool, args, res.Content[0])
		return
	}
	if res.StructuredContent == nil {
		t.Errorf("%s %s(%v): no structuredContent: %s", site, tool, args, tc.Text)
		return
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.Text))
	if err != nil {
		t.Errorf("%s %s(%v): text is not JSON: %v", site, tool, args, err)
		return
	}
	if err := out.Validate(inst); err != nil {
		text := tc.Text
		if len(text) > 1500 {
			text = text[:1500] + "…"
		}
		t.Errorf("%s %s(%v): isError=%v, the answer does not match the advertised output schema: %v\n%s", site, tool, args, res.IsError, err, text)
	}
	structured, _ := json.Marshal(res.StructuredContent)
	var a, b any
	_ = json.Unmarshal(structured, &a)
	_ = json.Unmarshal([]byte(tc.Text), &b)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s %s(%v): the text and structuredContent differ", site, tool, args)
	}
}
