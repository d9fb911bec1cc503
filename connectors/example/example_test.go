package example_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/example"
	"github.com/erpgate/erpgate/connectors/example/exampletest"
	"github.com/erpgate/erpgate/platform/connector/connectortest"
	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e"
)

// TestCatalogue checks the catalogue: golden snapshots in
// testdata/toolsnaps (go test -run TestCatalogue -update writes them),
// schemas, effects, annotations and naming.
func TestCatalogue(t *testing.T) { connectortest.Run(t, example.New()) }

// TestEndToEnd runs the real gateway with the example connector (-tags
// erpgate_example) and calls its tools with the demo site's service token.
func TestEndToEnd(t *testing.T) {
	gw := e2e.Start(t, e2e.Options{Tags: []string{"erpgate_example"}})
	site := gw.Site(t, example.Kind)
	seed := exampletest.New().Customers()

	t.Run("list_customers pages through every customer", func(t *testing.T) {
		var got []string
		offset := any(0)
		for offset != nil {
			out := site.CallService(t, "list_customers", map[string]any{"limit": 5, "offset": offset}).OK(t)
			for _, c := range out["data"].([]any) {
				got = append(got, c.(map[string]any)["id"].(string))
			}
			offset = out["meta"].(map[string]any)["next_offset"]
		}
		if len(got) != len(seed) || got[0] != seed[0].ID || got[len(got)-1] != seed[len(seed)-1].ID {
			t.Errorf("walked %v, want the seed's %d customers in id order", got, len(seed))
		}
	})

	t.Run("a wrong API key is refused before it is saved", func(t *testing.T) {
		var created struct {
			ID string `json:"id"`
		}
		if err := gw.Admin(t, http.MethodPost, "/sites", map[string]any{"slug": "wrong-key", "kind": example.Kind,
			"display_name": "Wrong key", "base_url": strings.Replace(site.ERPURL, "127.0.0.1", "localhost", 1)}, &created); err != nil {
			t.Fatal(err)
		}
		err := gw.Admin(t, http.MethodPut, "/sites/"+created.ID+"/connections/api_token",
			map[string]any{"credentials": map[string]string{"api_key": "not-the-key"}}, nil)
		var refused *e2e.AdminError
		if !errors.As(err, &refused) || refused.Status != http.StatusUnprocessableEntity || !strings.Contains(refused.Message, "no valid API key was sent") {
			t.Fatalf("storing a wrong API key: %v, want a refusal in Example ERP's words", err)
		}
	})

	t.Run("get_customer reads one, and an unknown one is NOT_FOUND", func(t *testing.T) {
		r := site.CallService(t, "get_customer", map[string]any{"id": seed[2].ID})
		if c, _ := r.Structured["customer"].(map[string]any); r.IsError || c["name"] != seed[2].Name || c["balance"] != seed[2].Balance {
			t.Errorf("get_customer %s: %s, want %+v", seed[2].ID, r.Text, seed[2])
		}
		if r := site.CallService(t, "get_customer", map[string]any{"id": "C999"}); r.ErrorCode() != "NOT_FOUND" {
			t.Errorf("an unknown customer: %s, want NOT_FOUND", r.Text)
		}
	})
}
