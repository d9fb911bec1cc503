package acumaticatest

import (
	"net/http"
	"strings"
	"testing"
)

// longOperationText is Acumatica's 409 sentence (swagger 25.200.001,
// EntityController_409 and InvokeAction_409).
const longOperationText = "A long operation is running for this screen in the current session. Please try again later."

// TestLongOperationLocksTheFormForTheSession: a processing action runs as
// a long operation (202 with the status URL in Location); until it is
// done, every other request on that form in the same session is answered
// 409 "A long operation is running…" (api-facts.md §3.1, §3.3, §8 item 7),
// while another session, and another form in the same session, are served.
// The status URL answers 202 while it runs, then 204.
func TestLongOperationLocksTheFormForTheSession(t *testing.T) {
	for _, ver := range []string{Version24, Version25} {
		t.Run(ver, func(t *testing.T) {
			s := newTestServer(t, Options{})
			tok := passwordToken(t, s, "admin", "api")
			other := passwordToken(t, s, "admin", "api") // a second token is a second session
			so := s.Data().Records("SalesOrder")[4]
			keys := so.String("OrderType") + "/" + so.String("OrderNbr")
			body := `{"entity":{"OrderType":{"value":"` + so.String("OrderType") + `"},"OrderNbr":{"value":"` + so.String("OrderNbr") + `"}},"parameters":{}}`

			resp, _ := call(t, http.MethodPost, s.entityURL(ver, "SalesOrder/SalesOrderCreateShipment", nil), tok, strings.NewReader(body))
			status := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusAccepted || !strings.Contains(status, "/entity/Default/"+ver+"/SalesOrder/SalesOrderCreateShipment/status/") {
				t.Fatalf("long action: %d Location %q, want 202 and the status URL", resp.StatusCode, status)
			}

			resp, b := call(t, http.MethodGet, s.entityURL(ver, "SalesOrder/"+keys, nil), tok, nil)
			if resp.StatusCode != http.StatusConflict || !strings.Contains(string(b), longOperationText) {
				t.Errorf("same form, same session: %d %s, want 409 %q", resp.StatusCode, b, longOperationText)
			}
			put := `{"OrderType":{"value":"SO"},"CustomerID":{"value":"` + so.String("CustomerID") + `"},"Hold":{"value":true}}`
			before := len(s.Data().Records("SalesOrder"))
			resp, b = call(t, http.MethodPut, s.entityURL(ver, "SalesOrder", nil), tok, strings.NewReader(put))
			if resp.StatusCode != http.StatusConflict || len(s.Data().Records("SalesOrder")) != before {
				t.Errorf("PUT on the form, same session: %d %s, %d orders (had %d), want 409 and nothing saved", resp.StatusCode, b, len(s.Data().Records("SalesOrder")), before)
			}
			if resp, b := call(t, http.MethodGet, s.entityURL(ver, "SalesOrder/"+keys, nil), other, nil); resp.StatusCode != http.StatusOK {
				t.Errorf("same form, another session: %d %s", resp.StatusCode, b)
			}
			if resp, b := call(t, http.MethodGet, s.entityURL(ver, "Customer/"+so.String("CustomerID"), nil), tok, nil); resp.StatusCode != http.StatusOK {
				t.Errorf("another form, same session: %d %s", resp.StatusCode, b)
			}

			if resp, _ := call(t, http.MethodGet, s.URL+strings.TrimPrefix(status, s.PathPrefix()), tok, nil); resp.StatusCode != http.StatusAccepted {
				t.Errorf("first status poll: %d, want 202", resp.StatusCode)
			}
			if resp, _ := call(t, http.MethodGet, s.URL+strings.TrimPrefix(status, s.PathPrefix()), tok, nil); resp.StatusCode != http.StatusNoContent {
				t.Errorf("second status poll: %d, want 204", resp.StatusCode)
			}
			if resp, b := call(t, http.MethodGet, s.entityURL(ver, "SalesOrder/"+keys, nil), tok, nil); resp.StatusCode != http.StatusOK {
				t.Errorf("same form, same session, after the operation: %d %s", resp.StatusCode, b)
			}
		})
	}
}
