package acumatica

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestToolErrorQuotesNoToken: an Acumatica (or a proxy in front of it)
// that fails a tool call's request and quotes the access token the
// request carried, without the "Bearer" the later redaction of error text
// looks for: as a refused sign-in (HTTP 500 "Invalid credentials") and as
// any other server error. The message goes to the model and the operator;
// the token must be in neither, for a person's call and a service
// connection's. Verification requests (TestVerifyAPICredentialQuotesNoToken)
// and token requests already withhold such a message.
func TestToolErrorQuotesNoToken(t *testing.T) {
	for _, message := range []string{
		"Error: Invalid credentials. Please try again. (%s)",
		"An error has occurred while processing the request for %s.",
	} {
		for _, kind := range []userKind{kindFull, kindService} {
			h := newHarness(t, harnessOptions{})
			var sent []string
			h.erp = func(w http.ResponseWriter, r *http.Request) bool {
				token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
				if !ok || !strings.Contains(r.URL.Path, "/Currency") {
					return false
				}
				sent = append(sent, token)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				_ = json.NewEncoder(w).Encode(map[string]any{"message": "An error has occurred.", "exceptionType": "PX.Data.PXException",
					"exceptionMessage": strings.Replace(message, "%s", token, 1)})
				return true
			}
			_, err := h.run(kind, "acumatica_get_currency", map[string]any{"CurrencyID": "USD"})
			if err == nil {
				t.Fatalf("%s, %q: the call succeeded", kind.name, message)
			}
			if len(sent) == 0 {
				t.Fatalf("%s, %q: no request reached the ERP", kind.name, message)
			}
			for _, token := range sent {
				if len(token) < 20 {
					t.Fatalf("%s: token %q is too short to prove anything", kind.name, token)
				}
				if strings.Contains(err.Error(), token) {
					t.Errorf("%s, %q: the error quotes the access token: %v", kind.name, message, err)
				}
			}
		}
	}
}

// TestWriteErrorQuotesNoToken: the same for a write's PUT, refused with
// Acumatica's validation (HTTP 422) or request (HTTP 400) answer, whose
// words the model is otherwise given to correct its arguments.
func TestWriteErrorQuotesNoToken(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusUnprocessableEntity} {
		h := newHarness(t, harnessOptions{})
		args := map[string]any{"entity": "Customer", "CustomerID": "C000001", "text": "Called 2 Dec: prefers e-mail."}
		p, err := h.preview(kindFull, "acumatica_add_note", args)
		if err != nil {
			t.Fatal(err)
		}
		var sent []string
		h.erp = func(w http.ResponseWriter, r *http.Request) bool {
			token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || r.Method != http.MethodPut {
				return false
			}
			sent = append(sent, token)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]any{"message": "The request is invalid for " + token + ".", "error": "The session " + token + " cannot save.",
				"modelState": map[string][]string{"note": {"The session " + token + " cannot save notes."}}})
			return true
		}
		_, err = h.execute(kindFull, "acumatica_add_note", args, p)
		if err == nil || len(sent) == 0 {
			t.Fatalf("HTTP %d: the write succeeded (%v) or never reached the ERP (%d requests)", status, err, len(sent))
		}
		for _, token := range sent {
			if strings.Contains(err.Error(), token) {
				t.Errorf("HTTP %d: the error quotes the access token: %v", status, err)
			}
		}
	}
}
