package frappe

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

var update = flag.Bool("update", false, "rewrite the golden tool snapshots")

// TestToolSnapshots keeps a golden copy of every tool's name, description,
// effect and schemas, so any change to the contract a model sees shows up
// in review. Run `go test ./connectors/frappe -run TestToolSnapshots -update`
// after an intended change.
func TestToolSnapshots(t *testing.T) {
	dir := filepath.Join("testdata", "toolsnaps")
	tools := New().Tools()
	want := map[string]bool{}
	for _, tool := range tools {
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

// TestCatalogueInvariants checks rules every tool must follow beyond what
// the registry enforces.
func TestCatalogueInvariants(t *testing.T) {
	tools := New().Tools()
	if err := connector.ValidateCatalogue(tools); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		if (tool.Effect == connector.Read) != (tool.Preview == nil) {
			t.Errorf("%s: a %s tool with Preview %v", tool.Name, tool.Effect, tool.Preview != nil)
		}
		if !strings.HasSuffix(strings.TrimSpace(tool.Description), ".") {
			t.Errorf("%s: description should be full sentences", tool.Name)
		}
		for name := range tool.Input.Properties {
			if name != strings.ToLower(name) {
				t.Errorf("%s: argument %s is not lower snake case", tool.Name, name)
			}
		}
		for _, reserved := range []string{"ok", "status", "error"} {
			if _, ok := tool.Output.Properties[reserved]; ok {
				t.Errorf("%s: output property %s is the engine's error envelope's", tool.Name, reserved)
			}
		}
		if _, ok := tool.Output.Properties["data"]; ok {
			if _, ok := tool.Input.Properties["offset"]; !ok {
				t.Errorf("%s: list tools take offset", tool.Name)
			}
		}
	}
}

// TestSchemasCompile compiles every input and output schema with the JSON
// Schema library the engine uses, so a schema the engine would refuse at
// start-up fails here first.
func TestSchemasCompile(t *testing.T) {
	for _, tool := range New().Tools() {
		compileSchema(t, tool.Name+"/input", tool.Input.JSON())
		compileSchema(t, tool.Name+"/output", tool.Output.JSON())
	}
}

func TestArgsSplit(t *testing.T) {
	type rest struct {
		Company string `json:"company"`
		Limit   int    `json:"limit"`
	}
	split := []string{"is_group", "amount"}
	for _, c := range []struct {
		args      string
		wantRest  rest
		wantTaken map[string]any
		wantErr   bool
	}{
		{``, rest{}, map[string]any{}, false},
		{`{}`, rest{}, map[string]any{}, false},
		{`{"company":"Acme","limit":5}`, rest{"Acme", 5}, map[string]any{}, false},
		{`{"is_group":true,"company":"Acme","amount":1180.100}`, rest{Company: "Acme"}, map[string]any{"is_group": true, "amount": json.Number("1180.100")}, false},
		{`{"is_gr\u006fup":false,"limit":2}`, rest{Limit: 2}, map[string]any{"is_group": false}, false},
		{`{"amount":1,"amount":2}`, rest{}, map[string]any{"amount": json.Number("2")}, false},
		{`{"is_group":true,"unknown":1}`, rest{}, nil, true},
		{`{"unknown":1}`, rest{}, nil, true},
		{`[1]`, rest{}, nil, true},
	} {
		got, taken, err := argsSplit[rest](&connector.Call{Args: json.RawMessage(c.args)}, split)
		if c.wantErr {
			if toolerr.Classify(err).Code != toolerr.InvalidArgument {
				t.Errorf("argsSplit(%s): %v, want INVALID_ARGUMENT", c.args, err)
			}
			continue
		}
		if err != nil || got != c.wantRest || !reflect.DeepEqual(taken, c.wantTaken) {
			t.Errorf("argsSplit(%s) = %+v, %v, %v; want %+v, %v", c.args, got, taken, err, c.wantRest, c.wantTaken)
		}
	}
}

// BenchmarkArgsSplit is a directory call's argument decoding, without a
// filter argument (the common case) and with one.
func BenchmarkArgsSplit(b *testing.B) {
	split := []string{"customer_group", "territory"}
	for _, c := range []struct{ name, args string }{
		{"plain", `{"limit":20}`},
		{"filter", `{"limit":20,"territory":"Europe","search":"acme"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			call := &connector.Call{Args: json.RawMessage(c.args)}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := argsSplit[dirArgs](call, split); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
