package acumatica

import (
	"fmt"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/connectortest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// The schema index holds a document per field, each naming its entity
// several times: an ERP whose OpenAPI document has an entity of a long
// name with many fields (a 200 KiB document) made a search of the schema
// build some 100 MB of documents; within the response bound, terabytes.
// The index is bounded, and past the bound the search fails before it
// builds anything: the call costs less than the bound (a first search of
// the simulator's real document allocates some 26 MiB, its index 0.6 MB).
func TestSchemaIndexBoundsItsDocuments(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	long := "E" + strings.Repeat("x", 8<<10)
	var b strings.Builder
	b.WriteString(`{"info":{"title":"Default/24.200.001"},"tags":[{"name":"` + long + `","description":"Long (AR303000)"}],`)
	b.WriteString(`"components":{"schemas":{"Entity":{},"` + long + `":{"allOf":[{"$ref":"#/components/schemas/Entity"},{"properties":{`)
	for i := range 4000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"F%d":{"$ref":"#/components/schemas/StringValue"}`, i)
	}
	b.WriteString(`}}]}}}}`)
	swagger := b.String()
	h.answerAt("/swagger.json", "application/json", swagger)
	var (
		out map[string]any
		err error
	)
	alloc := connectortest.Allocated(func() {
		out, err = h.run(kindFull, "acumatica_search_schema", map[string]any{"query": "customer"})
	})
	if err == nil {
		t.Errorf("the search ran over an index of a %d KiB document: %v", len(swagger)>>10, truncate([]byte(fmt.Sprint(out))))
	} else {
		wantCode(t, err, toolerr.UpstreamInvalidResponse, "huge index")
	}
	if alloc > 2*maxIndexBytes {
		t.Errorf("the search allocated %d MiB for a %d KiB document", alloc>>20, len(swagger)>>10)
	}
}
