package frappe

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/connectortest"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// TestCatalogue runs the connector kit's conformance suite: golden
// snapshots of every tool (testdata/toolsnaps; `go test ./connectors/frappe
// -run TestCatalogue -update` after an intended change), the catalogue's
// invariants, schema compilation, effects, annotations and naming.
func TestCatalogue(t *testing.T) {
	connectortest.Run(t, New())
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
