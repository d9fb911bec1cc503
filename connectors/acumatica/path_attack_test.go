package acumatica

import (
	"net/http"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// TestInquiryParametersCannotStepToAnotherAddress: an inquiry's parameter
// values come from the model and travel in the URL path, inside the OData
// function call's segment. IIS decodes %2F and resolves dot segments
// before the application routes the request (modelled here in front of
// the simulator), so a value holding "/../" would turn the inquiry's GET
// into a GET of another of the instance's addresses. Such a value is
// refused before anything is sent.
func TestInquiryParametersCannotStepToAnotherAddress(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	var mu sync.Mutex
	var reached []string
	h.erp = func(w http.ResponseWriter, r *http.Request) bool {
		clean := path.Clean(strings.ReplaceAll(r.URL.Path, `\`, "/"))
		mu.Lock()
		reached = append(reached, clean)
		mu.Unlock()
		if clean == r.URL.Path {
			return false
		}
		r.URL.Path, r.URL.RawPath = clean, ""
		h.sim.ServeHTTP(w, r)
		return true
	}
	for _, v := range []string{"../../../../../../../entity/Default/24.200.001/StockItem/", `..\..\..\..\..\..\..\entity\Default\24.200.001\StockItem\`} {
		_, err := h.run(kindFull, "acumatica_run_inquiry", map[string]any{"name": "Item Availability Data", "parameters": map[string]string{"InventoryID": v}})
		if toolerr.Classify(err).Code != toolerr.InvalidArgument {
			t.Errorf("parameter %q: %v, want INVALID_ARGUMENT", v, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range reached {
		if !strings.HasPrefix(p, "/t/Demo/api/odata/gi") && !strings.HasPrefix(p, "/identity/") {
			t.Errorf("the inquiry reached %s", p)
		}
	}
}
