package acumatica

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
)

var update = flag.Bool("update", false, "rewrite the golden tool snapshots")

// TestToolSnapshots keeps a golden copy of every tool's name, description,
// effect and schemas, so any change to the contract a model sees shows up
// in review. Run `go test ./connectors/acumatica -run TestToolSnapshots
// -update` after an intended change.
func TestToolSnapshots(t *testing.T) {
	dir := filepath.Join("testdata", "toolsnaps")
	want := map[string]bool{}
	for _, tool := range New(Options{}).Tools() {
		want[tool.Name+".snap"] = true
		got, err := json.MarshalIndent(map[string]any{
			"name":         tool.Name,
			"title":        tool.Title,
			"description":  tool.Description,
			"effect":       tool.Effect.String(),
			"inputSchema":  tool.Input,
			"outputSchema": tool.Output,
		}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(dir, tool.Name+".snap")
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no snapshot (run with -update): %v", tool.Name, err)
			continue
		}
		if !bytes.Equal(old, got) {
			t.Errorf("%s: schema differs from %s (run with -update if intended)", tool.Name, path)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("snapshot %s has no tool; delete it", e.Name())
		}
	}
}

// writeTools are the tools that change Acumatica, each with its
// idempotency: setting fields is, creating and appending are not.
var writeTools = map[string]bool{"acumatica_create_sales_order": false, "acumatica_update_customer": true, "acumatica_add_note": false}

var (
	optionName = regexp.MustCompile(`^[a-z][a-zA-Z]*$`)
	fieldName  = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// TestCatalogueInvariants checks rules every tool follows beyond what the
// registry enforces.
func TestCatalogueInvariants(t *testing.T) {
	tools := New(Options{}).Tools()
	if err := connector.ValidateCatalogue(tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) < 48 {
		t.Errorf("%d tools, want at least 48", len(tools))
	}
	reg := connector.NewRegistry()
	if err := reg.Register(New(Options{})); err != nil {
		t.Fatal(err)
	}
	getters := map[string]getterSpec{}
	for _, g := range getterSpecs {
		getters["acumatica_get_"+g.Tool] = g
	}
	for _, tool := range tools {
		idempotent, write := writeTools[tool.Name]
		if tool.Idempotent != idempotent {
			t.Errorf("%s: Idempotent = %v, want %v", tool.Name, tool.Idempotent, idempotent)
		}
		if (tool.Effect != connector.Read) != write || tool.Effect == connector.Destructive {
			t.Errorf("%s: effect %s; the Acumatica tools are reads but for the write tools %v", tool.Name, tool.Effect, writeTools)
		}
		if write && tool.Preview == nil {
			t.Errorf("%s: a write tool without a preview", tool.Name)
		}
		if write && !strings.Contains(tool.Description, "call this tool again with exactly the same arguments") {
			t.Errorf("%s: the description must tell the model to repeat the call after approval", tool.Name)
		}
		if !strings.HasPrefix(tool.Name, "acumatica_") && tool.Name != "search" && tool.Name != "fetch" {
			t.Errorf("%s: tools are named acumatica_*, except ChatGPT's search and fetch", tool.Name)
		}
		if d := strings.TrimSpace(tool.Description); !strings.HasSuffix(d, ".") || len(d) < 80 {
			t.Errorf("%s: description should be full sentences", tool.Name)
		}
		if tool.Title == "" {
			t.Errorf("%s: no title", tool.Name)
		}
		g, isGetter := getters[tool.Name]
		for name := range tool.Input.Properties {
			switch {
			case write && fieldName.MatchString(name):
				// Write tools name the fields they set as Acumatica does.
			case isGetter && slicesContainsKey(g.Keys, name):
				if !fieldName.MatchString(name) {
					t.Errorf("%s: key argument %s is not an Acumatica field name", tool.Name, name)
				}
			case !optionName.MatchString(name):
				t.Errorf("%s: option %s is not lowerCamelCase", tool.Name, name)
			}
		}
		// The engine adds ok/status/error to every output schema.
		for _, reserved := range []string{"ok", "status", "error"} {
			if _, clash := tool.Output.Properties[reserved]; clash {
				t.Errorf("%s: output property %s is reserved for the error envelope", tool.Name, reserved)
			}
		}
		if _, lists := tool.Output.Properties["results"]; lists && tool.Name != "search" && tool.Name != "acumatica_search_schema" {
			for _, p := range []string{"truncated", "recordsReturned", "recordLimit", "paginationSupported", "actionRequired"} {
				if _, ok := tool.Output.Properties[p]; !ok {
					t.Errorf("%s: a list without the truncation envelope's %s", tool.Name, p)
				}
			}
		}
	}
}
