package acumaticatest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestFaults(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	list := s.entityURL(Version24, "Currency", nil)

	s.SetFault(Fault{PathPrefix: "/entity/Default/24.200.001/Currency", Times: 1, Status: http.StatusServiceUnavailable,
		Body: `{"message":"down"}`, RetryAfter: 7 * time.Second})
	resp, b := call(t, http.MethodGet, list, tok, nil)
	if resp.StatusCode != http.StatusServiceUnavailable || string(b) != `{"message":"down"}` || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("status fault: %d %s %v", resp.StatusCode, b, resp.Header)
	}
	if status, _ := get(t, list, tok); status != http.StatusOK {
		t.Errorf("Times=1 must affect one request: %d", status)
	}
	if status, _ := get(t, s.entityURL(Version24, "Vendor?$top=1", nil), tok); status != http.StatusOK {
		t.Errorf("other paths unaffected: %d", status)
	}
	if n := s.RequestCount("/entity/Default/24.200.001/Currency"); n != 2 {
		t.Errorf("RequestCount %d", n)
	}

	s.SetFault(Fault{PathPrefix: "/entity/", Times: 1, Status: http.StatusOK, BodySize: 1000})
	resp, b = call(t, http.MethodGet, list, tok, nil)
	if resp.StatusCode != http.StatusOK || len(b) != 1000 || strings.Trim(string(b), "x") != "" {
		t.Errorf("body-size fault: %d %d bytes", resp.StatusCode, len(b))
	}

	s.SetFault(Fault{PathPrefix: "/entity/", Times: 1, ResetConnection: true})
	req, _ := http.NewRequest(http.MethodGet, list, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("reset connection: got %d", resp.StatusCode)
	}

	s.SetFault(Fault{PathPrefix: "/t/", Times: 1, Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, s.giURL("/MCPAccess", nil), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("hang: got %d", resp.StatusCode)
	}

	s.SetFault(Fault{Status: http.StatusBadGateway})
	s.ClearFaults()
	if status, _ := get(t, list, tok); status != http.StatusOK {
		t.Errorf("after ClearFaults: %d", status)
	}
}

// A fault AfterServing lets the request run as usual (a PUT saves) and
// answers it with the fault: what Acumatica answers when its code fails
// after the save committed (a RowPersisted handler run with
// TranStatus.Completed, a graph's Persist override after base.Persist, or
// reading the saved record back for the answer).
func TestFaultAfterServingSavesThenAnswersTheFault(t *testing.T) {
	s := newTestServer(t, Options{})
	tok := passwordToken(t, s, "admin", "api")
	c := s.Data().Records("Customer")[1]
	it := s.Data().Records("StockItem")[5]
	before := len(s.Data().Records("SalesOrder"))
	const px = `{"message":"An error has occurred.","exceptionMessage":"Error: after the save.","exceptionType":"PX.Data.PXException"}`
	s.SetFault(Fault{PathPrefix: "/entity/Default/24.200.001/SalesOrder", Times: 1, Status: http.StatusInternalServerError,
		Body: px, AfterServing: true})
	body := `{"CustomerID":{"value":"` + c.String("CustomerID") + `"},"Details":[{"InventoryID":{"value":"` + it.String("InventoryID") + `"},"OrderQty":{"value":1}}]}`
	resp, b := call(t, http.MethodPut, s.entityURL(Version24, "SalesOrder", nil), tok, strings.NewReader(body))
	if resp.StatusCode != http.StatusInternalServerError || string(b) != px {
		t.Errorf("answer: %d %s, want the fault's", resp.StatusCode, b)
	}
	if n := len(s.Data().Records("SalesOrder")); n != before+1 {
		t.Errorf("%d sales orders after the PUT, want %d: the request runs before the fault answers it", n, before+1)
	}
}
