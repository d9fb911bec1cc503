package acumatica

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// TestARefusalNotInAcumaticasShapeAfterThePutIsAnOutcomeNotKnown: a proxy
// or load balancer in front of Acumatica forwards the approved PUT (the
// simulator saves the order), then answers with a status Acumatica uses
// for a refusal before the save (409, 429, 403, 400, 412, 422) but with a
// body that is not Acumatica's (an HTML page, an empty body, a gateway's
// JSON). erpgate cannot say nothing was written: the failure is never
// flagged NothingWritten (which would keep the approval for a second
// write), and it is told as an outcome not known (UPSTREAM_*), never as
// "nothing was written".
func TestARefusalNotInAcumaticasShapeAfterThePutIsAnOutcomeNotKnown(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	d := h.sim.Data()
	cust := exemptCustomer(t, h.sim)
	orders := h.sim.PathPrefix() + "/entity/Default/24.200.001/SalesOrder"
	for _, c := range []struct {
		name, contentType, body string
		status                  int
	}{
		{"a proxy's 409 page", "text/html", "<html><body><h1>409 Conflict</h1></body></html>", http.StatusConflict},
		{"an empty 409", "", "", http.StatusConflict},
		{"a load balancer's 429 page", "text/html", "<html><head><title>429 Too Many Requests</title></head><body><center><h1>429 Too Many Requests</h1></center><hr><center>nginx</center></body></html>", http.StatusTooManyRequests},
		{"an empty 429", "", "", http.StatusTooManyRequests},
		{"an API gateway's JSON 429", "application/json", `{"message":"API rate limit exceeded"}`, http.StatusTooManyRequests},
		{"a web application firewall's 403 page after the answer", "text/html", "<html><head><title>403 Forbidden</title></head><body><h1>Forbidden</h1></body></html>", http.StatusForbidden},
		{"an empty 403", "", "", http.StatusForbidden},
		{"a proxy's 400 page", "text/html", "<html><body><h1>400 Bad Request</h1></body></html>", http.StatusBadRequest},
		{"a proxy's 412 page", "text/html", "<html><body><h1>412 Precondition Failed</h1></body></html>", http.StatusPreconditionFailed},
		{"an empty 422", "", "", http.StatusUnprocessableEntity},
		// Gateways' JSON: a message, but none of Acumatica's sentences,
		// nor its modelState or exception.
		{"an API gateway's JSON 403", "application/json", `{"message":"Forbidden"}`, http.StatusForbidden},
		{"an API gateway's JSON 400", "application/json", `{"message":"Bad Request"}`, http.StatusBadRequest},
		{"a gateway's JSON 412", "application/json", `{"message":"Precondition Failed"}`, http.StatusPreconditionFailed},
		{"a gateway's JSON 403 with a status member", "application/json", `{"statusCode":403,"message":"Access is denied due to a policy."}`, http.StatusForbidden},
		{"a gateway's JSON 422", "application/json", `{"error":"Unprocessable Entity"}`, http.StatusUnprocessableEntity},
	} {
		t.Run(c.name, func(t *testing.T) {
			args, p := h.proposedOrder(t, kindFull, cust, c.name)
			before := len(d.Records("SalesOrder"))
			forwarded := 0
			h.erp = func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, orders) {
					return false
				}
				// Forward the PUT to Acumatica, which saves the order,
				// then answer in Acumatica's place.
				forwarded++
				h.sim.ServeHTTP(httptest.NewRecorder(), r)
				if c.contentType != "" {
					w.Header().Set("Content-Type", c.contentType)
				}
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
				return true
			}
			defer func() { h.erp = nil }()
			_, err := h.execute(kindFull, "acumatica_create_sales_order", args, p)
			if err == nil {
				t.Fatal("the write succeeded through the proxy's answer")
			}
			if forwarded != 1 || len(d.Records("SalesOrder")) != before+1 {
				t.Fatalf("the PUT was forwarded %d times and saved %d orders, want once and one", forwarded, len(d.Records("SalesOrder"))-before)
			}
			if toolerr.NothingWritten(err) {
				t.Errorf("a %d not in Acumatica's shape, after the order was saved, is flagged as having written nothing (the approval would be kept): %v", c.status, err)
			}
			te := asToolErr(err)
			if te == nil || !strings.HasPrefix(string(te.Code), "UPSTREAM_") || strings.Contains(strings.ToLower(te.Message), "nothing was written") {
				t.Errorf("told as %v, want an outcome not known (UPSTREAM_*) that never says nothing was written", err)
			}
		})
	}
}

// TestAServiceWritesPutIsNotSentAgainAfterA500: a service connection's
// request that Acumatica answers 500 "Invalid credentials" (PXLogin's
// PXException) is sent again once with a fresh sign-in. For the PUT of an
// approved write that answer is no proof that nothing was saved: a
// PXException comes the same from code that failed after the save
// committed. The PUT is sent once; the failure is an outcome not known.
func TestAServiceWritesPutIsNotSentAgainAfterA500(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	d := h.sim.Data()
	cust := exemptCustomer(t, h.sim)
	orders := h.sim.PathPrefix() + "/entity/Default/24.200.001/SalesOrder"
	args, p := h.proposedOrder(t, kindService, cust, "Saved, then a PXException")
	before := len(d.Records("SalesOrder"))
	h.sim.SetFault(acumaticatest.Fault{PathPrefix: orders, Times: 1, Status: http.StatusInternalServerError, AfterServing: true,
		Body: `{"message":"An error has occurred.","exceptionMessage":"Error: Invalid credentials. Please try again.","exceptionType":"PX.Data.PXException"}`})
	defer h.sim.ClearFaults()
	_, err := h.execute(kindService, "acumatica_create_sales_order", args, p)
	if n := len(d.Records("SalesOrder")) - before; n != 1 {
		t.Errorf("the approved order was saved %d times, want once", n)
	}
	if err == nil {
		t.Fatal("the write succeeded: its PUT was sent again")
	}
	if toolerr.NothingWritten(err) {
		t.Errorf("flagged as having written nothing: %v", err)
	}
	if te := asToolErr(err); te == nil || !strings.HasPrefix(string(te.Code), "UPSTREAM_") {
		t.Errorf("told as %v, want an outcome not known (UPSTREAM_*)", err)
	}
}

// renewingUser is a person's token as the platform holds it (authserver's
// userAuthorizer): after a 401 the transport marks it refused, it signs
// the person in afresh, and the transport sends the request again.
type renewingUser struct {
	h       *harness
	role    string
	mu      sync.Mutex
	tok     secrets.Secret
	renewed int
}

func (a *renewingUser) Authorize(r *http.Request) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.tok.IsSet() {
		a.tok = a.h.userToken(a.role)
	}
	r.Header.Set("Authorization", "Bearer "+a.tok.Reveal())
	return nil
}

func (a *renewingUser) RejectAuthorization(r *http.Request) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	u := a.h.sim.User(a.role)
	cred := serviceCredential{client: connector.OAuthClient{ID: acumaticatest.DefaultServiceClientGUID + "@" + a.h.sim.Tenant(), Secret: acumaticatest.DefaultServiceSecret},
		username: u.Username, password: secrets.Secret(u.Password)}
	tok, err := passwordGrant(r.Context(), a.h.site, cred, a.h.out.Client(a.h.site, nil))
	if err != nil {
		return false
	}
	a.tok = tok.AccessToken
	a.renewed++
	return true
}

// writeCall is the call the engine gives an approved write tool's
// handler: its client is the write tool's (outbound.ToolClient), with a
// person's renewable token or the service connection.
func (h *harness) writeCall(kind userKind, auth connector.Authorizer, p *connector.Preview) func([]byte) *connector.Call {
	return func(raw []byte) *connector.Call {
		call := h.newCall(kind, raw)
		if kind.service {
			a, err := h.conn.APIAuthorizer(h.site, h.serviceFields())
			if err != nil {
				h.t.Fatal(err)
			}
			auth = a
		}
		call.HTTP = h.out.ToolClient(h.site, auth, connector.Write, h.conn)
		call.Approved = &connector.Approved{ID: uuid.NewString(), Preview: *p, By: call.Principal.Subject}
		return call
	}
}

// TestAPutAnswered401NotInAcumaticasShapeIsNotSentAgain: a proxy or an
// SSO layer in front of Acumatica forwards the approved PUT (the
// simulator saves the order), then answers 401 in its own shape, not
// Acumatica's (ASP.NET's HttpError, "Authorization has been denied for
// this request."). A person's token is renewed by the transport, a
// service connection's by the connector, and the request sent again: for
// the PUT that would save the order twice. The PUT is sent once; the
// failure is an outcome not known, never flagged as having written
// nothing. Acumatica's own 401 (sent before the PUT ran) is still renewed
// and the PUT sent again, the order saved once.
func TestAPutAnswered401NotInAcumaticasShapeIsNotSentAgain(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	d := h.sim.Data()
	cust := exemptCustomer(t, h.sim)
	orders := h.sim.PathPrefix() + "/entity/Default/24.200.001/SalesOrder"
	for _, kind := range []userKind{kindFull, kindService} {
		for _, c := range []struct {
			name, contentType, body string
		}{
			{"an API gateway's JSON 401", "application/json", `{"message":"Unauthorized"}`},
			{"an nginx 401 page", "text/html", "<html><head><title>401 Authorization Required</title></head><body><center><h1>401 Authorization Required</h1></center><hr><center>nginx</center></body></html>"},
			{"an empty 401", "", ""},
		} {
			t.Run(kind.name+"/"+c.name, func(t *testing.T) {
				args, p := h.proposedOrder(t, kind, cust, kind.name+": "+c.name)
				before := len(d.Records("SalesOrder"))
				forwarded := 0
				h.erp = func(w http.ResponseWriter, r *http.Request) bool {
					if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, orders) {
						return false
					}
					forwarded++
					h.sim.ServeHTTP(httptest.NewRecorder(), r)
					if c.contentType != "" {
						w.Header().Set("Content-Type", c.contentType)
					}
					w.Header().Set("WWW-Authenticate", `Bearer realm="sso"`)
					w.WriteHeader(http.StatusUnauthorized)
					_, _ = w.Write([]byte(c.body))
					return true
				}
				defer func() { h.erp = nil }()
				var auth connector.Authorizer
				if !kind.service {
					auth = &renewingUser{h: h, role: kind.role}
				}
				_, err := h.runCall("acumatica_create_sales_order", h.writeCall(kind, auth, p), args)
				if forwarded != 1 || len(d.Records("SalesOrder")) != before+1 {
					t.Fatalf("the PUT was forwarded %d times and saved %d orders, want once and one", forwarded, len(d.Records("SalesOrder"))-before)
				}
				if err == nil {
					t.Fatal("the write succeeded through the proxy's 401")
				}
				if toolerr.NothingWritten(err) {
					t.Errorf("a 401 not in Acumatica's shape, after the order was saved, is flagged as having written nothing: %v", err)
				}
				te := asToolErr(err)
				if te == nil || !strings.HasPrefix(string(te.Code), "UPSTREAM_") || strings.Contains(strings.ToLower(te.Message), "nothing was written") {
					t.Errorf("told as %v, want an outcome not known (UPSTREAM_*) that never says nothing was written", err)
				}
			})
		}
		t.Run(kind.name+"/Acumatica's own 401 is renewed and the PUT sent again", func(t *testing.T) {
			args, p := h.proposedOrder(t, kind, cust, kind.name+": sent again after Acumatica's own 401")
			before := len(d.Records("SalesOrder"))
			refused := false
			h.erp = func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodPut || !strings.HasPrefix(r.URL.Path, orders) || refused {
					return false
				}
				// Acumatica refuses the token before the PUT runs.
				refused = true
				w.Header().Set("WWW-Authenticate", "Bearer")
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"message":"Authorization has been denied for this request."}`))
				return true
			}
			defer func() { h.erp = nil }()
			var auth connector.Authorizer
			if !kind.service {
				auth = &renewingUser{h: h, role: kind.role}
			}
			if _, err := h.runCall("acumatica_create_sales_order", h.writeCall(kind, auth, p), args); err != nil {
				t.Fatalf("the write failed after a renewable 401 in Acumatica's shape: %v", err)
			}
			if n := len(d.Records("SalesOrder")) - before; n != 1 || !refused {
				t.Errorf("%d orders saved (refused %v), want one after the 401", n, refused)
			}
		})
	}
}
