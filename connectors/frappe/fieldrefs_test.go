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

// FuzzListFields holds listFields, which reads the arguments without
// decoding them, to encoding/json, which the handler decodes them with:
// whatever field the decoded arguments sort, search or filter on is
// among the fields reported, so a redacted one is always refused.
func FuzzListFields(f *testing.F) {
	for _, seed := range []string{`{"limit":20}`, `{"order_by":"customer_name","order":"asc"}`, `{"order\u005fby":"name"}`,
		`{"search":"Ltd","territory":"NZ"}`, `{"search":""}`, `{"order_by":"name","order_by":"salary"}`, `{"territory":null}`, `[]`} {
		f.Add([]byte(seed))
	}
	search := []string{"name", "customer_name"}
	fields := listFields(search, []dirFilter{{arg: "territory", field: "territory"}})
	f.Fuzz(func(t *testing.T, args []byte) {
		got, err := fields(json.RawMessage(args))
		var decoded struct {
			OrderBy   *string `json:"order_by"`
			Search    *string `json:"search"`
			Territory *string `json:"territory"`
		}
		var members map[string]json.RawMessage
		if json.Unmarshal(args, &members) != nil || json.Unmarshal(args, &decoded) != nil {
			return // the engine refuses these before the handler runs
		}
		for name := range members {
			if name != "order_by" && name != "search" && name != "territory" && name != "limit" {
				return // the input schema refuses other names
			}
		}
		if err != nil {
			t.Fatalf("listFields(%s): %v for arguments encoding/json reads", args, err)
		}
		var want []connector.FieldRef
		if decoded.OrderBy != nil {
			want = append(want, connector.FieldRef{Arg: "order_by", Name: *decoded.OrderBy})
		}
		if decoded.Search != nil && *decoded.Search != "" {
			for _, n := range search {
				want = append(want, connector.FieldRef{Arg: "search", Name: n})
			}
		}
		if decoded.Territory != nil {
			want = append(want, connector.FieldRef{Arg: "territory", Name: "territory"})
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Fatalf("listFields(%s) = %v, missing %v", args, got, w)
			}
		}
	})
}
