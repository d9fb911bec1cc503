package frappe

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/erpgate/erpgate/platform/connector"
)

func TestListFields(t *testing.T) {
	fields := listFields([]string{"name", "customer_name"}, []dirFilter{{arg: "territory", field: "territory"}})
	for args, want := range map[string][]connector.FieldRef{
		`{"limit":20}`: nil,
		`{"order_by":"customer_name","order":"asc"}`: {{Arg: "order_by", Name: "customer_name"}},
		`{"order\u005fby":"name"}`:                   {{Arg: "order_by", Name: "name"}},
		`{"search":"Ltd","territory":"NZ"}`:          {{Arg: "search", Name: "name"}, {Arg: "search", Name: "customer_name"}, {Arg: "territory", Name: "territory"}},
		// An empty search searches nothing, so it names no field.
		`{"search":""}`: nil,
	} {
		got, err := fields(json.RawMessage(args))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("listFields(%s) = %v, %v; want %v", args, got, err, want)
		}
	}
	plain := json.RawMessage(`{"limit":20,"offset":0}`)
	if n := testing.AllocsPerRun(20, func() { _, _ = fields(plain) }); n != 0 {
		t.Errorf("a call without sort, search or filters allocates %v times", n)
	}
}
