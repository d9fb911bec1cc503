package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/front/mcpengine"
)

// toolName is the MCP tool name rule (2025-11-25): 1 to 128 of ASCII
// letters, digits, '_', '-' and '.'.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// TestCatalogueAdvertisesValidTools: every tool of every catalogue has a
// valid MCP name, input and advertised output schemas that are JSON Schema
// 2020-12 objects (the root "type" is "object", as MCP requires), and
// annotations that follow from its effect: a read is read-only and
// idempotent, a destructive tool is neither read-only nor idempotent; and
// it is open-world (it reaches the ERP) unless it is local.
func TestCatalogueAdvertisesValidTools(t *testing.T) {
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, kind := range reg.Kinds() {
		for _, tool := range reg.Tools(kind) {
			if !toolName.MatchString(tool.Name) {
				t.Errorf("%s/%s: not a valid MCP tool name", kind, tool.Name)
			}
			if other, dup := seen[kind+"/"+tool.Name]; dup {
				t.Errorf("%s/%s: listed twice (%s)", kind, tool.Name, other)
			}
			seen[kind+"/"+tool.Name] = kind
			for what, s := range map[string]json.RawMessage{"input": tool.Input.JSON(), "output": mcpengine.AdvertisedOutputSchema(tool.Output)} {
				var root map[string]any
				if err := json.Unmarshal(s, &root); err != nil || root["type"] != "object" {
					t.Errorf("%s/%s: %s schema's root is not an object schema: %s", kind, tool.Name, what, s)
					continue
				}
				if _, err := schema.CompileJSON(s, "erpgate:///"+kind+"/"+tool.Name+"/"+what+".json"); err != nil {
					t.Errorf("%s/%s: %s schema does not compile as 2020-12: %v", kind, tool.Name, what, err)
				}
			}
			h := tool.Hints()
			switch tool.Effect {
			case connector.Read:
				if !h.ReadOnly || h.Destructive || !h.Idempotent {
					t.Errorf("%s/%s: a read advertised as %+v", kind, tool.Name, h)
				}
			case connector.Destructive:
				if h.ReadOnly || !h.Destructive || h.Idempotent {
					t.Errorf("%s/%s: a destructive tool advertised as %+v", kind, tool.Name, h)
				}
			default:
				// A write that replaces values is destructive as MCP
				// defines it; one that only adds is not.
				if h.ReadOnly || h.Destructive != tool.Overwrites {
					t.Errorf("%s/%s: a write (overwrites %v) advertised as %+v", kind, tool.Name, tool.Overwrites, h)
				}
			}
			// openWorldHint: the tool reaches the ERP, unless it is local
			// (TestEveryReadToolAnswersToItsOutputSchema checks, by the
			// requests the simulators see, that local tools reach nothing
			// and the others do).
			if h.OpenWorld == tool.Local {
				t.Errorf("%s/%s: local %v, advertised with openWorldHint %v", kind, tool.Name, tool.Local, h.OpenWorld)
			}
		}
	}
}
