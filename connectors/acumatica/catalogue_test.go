package acumatica

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/connectortest"
)

// writeTools are the tools that change Acumatica, each with its
// idempotency: setting fields is, creating and appending are not.
var writeTools = map[string]bool{"acumatica_create_sales_order": false, "acumatica_update_customer": true, "acumatica_add_note": false}

var (
	optionName = regexp.MustCompile(`^[a-z][a-zA-Z]*$`)
	fieldName  = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// TestCatalogue runs the connector kit's conformance suite: golden
// snapshots of every tool (testdata/toolsnaps; `go test
// ./connectors/acumatica -run TestCatalogue -update` after an intended
// change), the catalogue's invariants, schema compilation, effects,
// annotations and naming (acumatica_*). Options are lowerCamelCase; write
// tools and getters name the fields they set or key on as Acumatica does.
func TestCatalogue(t *testing.T) {
	getters := map[string]getterSpec{}
	for _, g := range getterSpecs {
		getters["acumatica_get_"+g.Tool] = g
	}
	argument := func(tool connector.Tool, name string) error {
		_, write := writeTools[tool.Name]
		g, isGetter := getters[tool.Name]
		switch {
		case write && fieldName.MatchString(name):
			// Write tools name the fields they set as Acumatica does.
		case isGetter && slicesContainsKey(g.Keys, name):
			if !fieldName.MatchString(name) {
				return fmt.Errorf("key argument %s is not an Acumatica field name", name)
			}
		case !optionName.MatchString(name):
			return fmt.Errorf("option %s is not lowerCamelCase", name)
		}
		return nil
	}
	connectortest.Run(t, New(Options{}), connectortest.WithPrefix("acumatica_"), connectortest.WithArgumentNames(argument))
}

// TestCatalogueInvariants checks the Acumatica catalogue's own rules,
// beyond the conformance suite's.
func TestCatalogueInvariants(t *testing.T) {
	tools := New(Options{}).Tools()
	if len(tools) < 48 {
		t.Errorf("%d tools, want at least 48", len(tools))
	}
	for _, tool := range tools {
		idempotent, write := writeTools[tool.Name]
		if tool.Idempotent != idempotent {
			t.Errorf("%s: Idempotent = %v, want %v", tool.Name, tool.Idempotent, idempotent)
		}
		if (tool.Effect != connector.Read) != write || tool.Effect == connector.Destructive {
			t.Errorf("%s: effect %s; the Acumatica tools are reads but for the write tools %v", tool.Name, tool.Effect, writeTools)
		}
		if write && !strings.Contains(tool.Description, "call this tool again with exactly the same arguments") {
			t.Errorf("%s: the description must tell the model to repeat the call after approval", tool.Name)
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
