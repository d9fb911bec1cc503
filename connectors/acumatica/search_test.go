package acumatica

import (
	"net/url"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

func TestSearchAndFetchForEveryUserKind(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	cust := h.sim.Data().Records("Customer")[0]
	word := strings.Fields(cust.String("CustomerName"))[0]
	so := h.sim.Data().Records("SalesOrder")[0]
	for _, kind := range userKinds {
		t.Run(kind.name, func(t *testing.T) {
			h.t = t
			out := h.mustRun(kind, "search", map[string]any{"query": word})
			ids := map[string]string{}
			for _, r := range out["results"].([]any) {
				rm := r.(map[string]any)
				ids[rm["id"].(string)] = rm["url"].(string)
			}
			custID := "Customer:" + url.PathEscape(cust.String("CustomerID"))
			_, found := ids[custID]
			if kind == kindNoAR {
				if found {
					t.Error("a user without AR rights found a customer")
				}
				if w, _ := out["warnings"].([]any); len(w) == 0 || !strings.Contains(w[0].(string), "Customer") {
					t.Errorf("warnings = %v", out["warnings"])
				}
			} else {
				if !found {
					t.Fatalf("search %q did not find %s: %v", word, custID, ids)
				}
				if u := ids[custID]; !strings.Contains(u, "ScreenId=AR303000") || !strings.Contains(u, "AcctCD="+cust.String("CustomerID")) {
					t.Errorf("url = %s", u)
				}
			}

			f, err := h.run(kind, "fetch", map[string]any{"id": custID})
			if kind == kindNoAR {
				wantCode(t, err, toolerr.PermissionDenied, "fetch customer")
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(f["text"].(string), "CustomerName: "+cust.String("CustomerName")) {
					t.Errorf("text = %s", f["text"])
				}
			}

			soID := "SalesOrder:" + so.String("OrderType") + "/" + url.PathEscape(so.String("OrderNbr"))
			f = h.mustRun(kind, "fetch", map[string]any{"id": soID})
			if !strings.Contains(f["text"].(string), "Details (") || !strings.Contains(f["title"].(string), so.String("OrderNbr")) {
				t.Errorf("sales order text = %s", f["text"])
			}
		})
	}
	_, err := h.run(kindFull, "fetch", map[string]any{"id": "Widget:1"})
	wantCode(t, err, toolerr.InvalidArgument, "unknown kind of id")
	_, err = h.run(kindFull, "fetch", map[string]any{"id": "SalesOrder:SO"})
	wantCode(t, err, toolerr.InvalidArgument, "too few key parts")
}

// A search where every source fails is an error, never "no matches".
func TestSearchFailureIsNotNoMatches(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.userToken(kindFull.role) // sign in before the fault
	h.sim.SetFault(acumaticaFault("/entity/", 500))
	_, err := h.run(kindFull, "search", map[string]any{"query": "anything"})
	wantCode(t, err, toolerr.UpstreamUnavailable, "all sources failing")
}
