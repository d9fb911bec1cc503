package frappe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// behindProxy returns s as reached through a proxy in front of it: reads
// pass through; a write request is forwarded to Frappe, which makes the
// change, and is then answered by answer in Frappe's place. It reports
// the status Frappe gave each forwarded write.
func behindProxy(t *testing.T, s *frappetest.Server, answer func(w http.ResponseWriter, r *http.Request)) (*frappetest.Server, *[]int) {
	t.Helper()
	var erp []int
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			s.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		erp = append(erp, rec.Code)
		answer(w, r)
	}))
	t.Cleanup(px.Close)
	return &frappetest.Server{Simulator: s.Simulator, URL: px.URL}, &erp
}

// TestARefusalNotInFrappesShapeAfterTheWriteIsAnOutcomeNotKnown: a proxy
// in front of Frappe forwards the approved write (Frappe makes it and
// answers 200), then answers with a status Frappe refuses a write with
// (403, 404, 409, 417) or another 4xx (429), but not in Frappe's shape
// (no exc_type: an nginx page, an empty body). Frappe rolls a request
// back only when it raised, and its error body says so; this answer is
// not Frappe's, so the failure is never flagged NothingWritten (which
// would keep the approval for a second write) and is told as an outcome
// not known (UPSTREAM_*), never as "nothing was written".
func TestARefusalNotInFrappesShapeAfterTheWriteIsAnOutcomeNotKnown(t *testing.T) {
	s := writeSim(t)
	so := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool { return d.Int("docstatus") == 1 })
	for _, c := range []struct {
		name, contentType, body string
		status                  int
	}{
		{"an nginx 403 page", "text/html", "<html><head><title>403 Forbidden</title></head><body><center><h1>403 Forbidden</h1></center><hr><center>nginx</center></body></html>", http.StatusForbidden},
		{"an nginx 404 page", "text/html", "<html><head><title>404 Not Found</title></head><body><center><h1>404 Not Found</h1></center><hr><center>nginx</center></body></html>", http.StatusNotFound},
		{"an empty 409", "", "", http.StatusConflict},
		{"an empty 417", "", "", http.StatusExpectationFailed},
		{"a gateway's JSON 403", "application/json", `{"message":"Forbidden"}`, http.StatusForbidden},
		{"a load balancer's 429 page", "text/html", "<html><body><h1>429 Too Many Requests</h1></body></html>", http.StatusTooManyRequests},
	} {
		t.Run(c.name, func(t *testing.T) {
			px, erp := behindProxy(t, s, func(w http.ResponseWriter, r *http.Request) {
				if c.contentType != "" {
					w.Header().Set("Content-Type", c.contentType)
				}
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			})
			p := mustPropose(t, px, allCompanies, "add_comment", map[string]any{"doctype": "Sales Order", "name": so.Name, "text": "Behind a proxy: " + c.name})
			_, err := p.execute(t)
			if err == nil {
				t.Fatal("the write succeeded through the proxy's answer")
			}
			if len(*erp) != 1 || (*erp)[0] != http.StatusOK {
				t.Fatalf("Frappe answered the forwarded writes %v, want one 200 (made)", *erp)
			}
			if toolerr.NothingWritten(err) {
				t.Errorf("a %d not in Frappe's shape, after Frappe made the change, is flagged as having written nothing (the approval would be kept): %v", c.status, err)
			}
			te := toolerr.Classify(err)
			if !strings.HasPrefix(string(te.Code), "UPSTREAM_") || strings.Contains(strings.ToLower(te.Message), "nothing was written") {
				t.Errorf("told as %v, want an outcome not known (UPSTREAM_*) that never says nothing was written", err)
			}
		})
	}
}

// TestAWriteIsNeverFollowedThroughARedirect: a write request answered
// with a redirect (a proxy in front of Frappe, after forwarding it, or
// Frappe itself) is not followed. A 303 would turn it into a GET of
// another address, whose answer (Frappe's 404 there) would be taken for
// Frappe's refusal of the write and keep the approval; a 307 would send
// the write again, making the approved change twice. The redirect is the
// answer to the write: an outcome not known, the write sent once.
func TestAWriteIsNeverFollowedThroughARedirect(t *testing.T) {
	s := writeSim(t)
	so := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool { return d.Int("docstatus") == 1 })
	for _, c := range []struct {
		name     string
		status   int
		location string
	}{
		{"303 to a document that does not exist", http.StatusSeeOther, "/api/resource/Sales%20Order/SAL-ORD-1999-00001"},
		{"307 to the same address", http.StatusTemporaryRedirect, ""},
		{"308 to the same address", http.StatusPermanentRedirect, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			redirected := false
			px, erp := behindProxy(t, s, func(w http.ResponseWriter, r *http.Request) {
				if redirected {
					// The write sent again: Frappe's answer passes.
					w.WriteHeader(http.StatusOK)
					_, _ = w.Write([]byte(`{"message":{"name":"again","doctype":"Comment"}}`))
					return
				}
				redirected = true
				loc := c.location
				if loc == "" {
					loc = r.URL.RequestURI()
				}
				http.Redirect(w, r, loc, c.status)
			})
			p := mustPropose(t, px, allCompanies, "add_comment", map[string]any{"doctype": "Sales Order", "name": so.Name, "text": "Redirected: " + c.name})
			_, err := p.execute(t)
			if len(*erp) != 1 || (*erp)[0] != http.StatusOK {
				t.Errorf("Frappe answered the forwarded writes %v, want the write sent once (one 200)", *erp)
			}
			if err == nil {
				t.Fatal("the write succeeded through the redirect")
			}
			if toolerr.NothingWritten(err) {
				t.Errorf("a write answered with a redirect after Frappe made it is flagged as having written nothing: %v", err)
			}
			if te := toolerr.Classify(err); !strings.HasPrefix(string(te.Code), "UPSTREAM_") || strings.Contains(strings.ToLower(te.Message), "nothing was written") {
				t.Errorf("told as %v, want an outcome not known (UPSTREAM_*)", err)
			}
		})
	}
}

// renewableKey is the API key of a simulator user as a credential that
// can be renewed (as a person's OAuth token is, authserver's
// userAuthorizer): the transport may mark it refused after a 401 and send
// the request again. Renewing it gives the same key; it counts renewals.
type renewableKey struct {
	key, secret string
	renewed     atomic.Int32
}

func (k *renewableKey) Authorize(r *http.Request) error {
	r.Header.Set("Authorization", "token "+k.key+":"+k.secret)
	return nil
}

func (k *renewableKey) RejectAuthorization(*http.Request) bool {
	k.renewed.Add(1)
	return true
}

// TestAWriteAnswered401NotInFrappesShapeIsNotSentAgain: a proxy or an SSO
// layer in front of Frappe forwards the approved write (Frappe makes it),
// then answers 401 in its own shape, not Frappe's (Frappe's 401 is its
// error body naming AuthenticationError). The transport renews a
// refused credential and sends the request again; for a write that would
// make the approved change twice. The write is sent once, and the failure
// is an outcome not known, never flagged as having written nothing. A
// 401 in Frappe's own shape (sent before the request ran) is still
// renewed and sent again, once, and the change made once.
func TestAWriteAnswered401NotInFrappesShapeIsNotSentAgain(t *testing.T) {
	s := writeSim(t)
	so := seededWhere(t, s, "Sales Order", func(d *frappetest.Doc) bool { return d.Int("docstatus") == 1 })
	run := func(t *testing.T, px *frappetest.Server, text string) (*renewableKey, error) {
		t.Helper()
		p := mustPropose(t, px, allCompanies, "add_comment", map[string]any{"doctype": "Sales Order", "name": so.Name, "text": text})
		u := px.User(allCompanies)
		auth := &renewableKey{key: u.APIKey, secret: u.APISecret}
		c := p.inv.newCall(t, p.raw)
		c.HTTP = factory.ToolClient(c.Site, auth, p.tool.Effect, New())
		c.Approved = &connector.Approved{ID: "test-approval", Preview: *p.preview, By: p.inv.role}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := p.tool.Handler(ctx, c)
		return auth, err
	}
	for _, c := range []struct {
		name, contentType, body string
	}{
		{"an SSO layer's JSON 401", "application/json", `{"message":"Unauthorized"}`},
		{"an nginx 401 page", "text/html", "<html><head><title>401 Authorization Required</title></head><body><center><h1>401 Authorization Required</h1></center><hr><center>nginx</center></body></html>"},
		{"an empty 401", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			px, erp := behindProxy(t, s, func(w http.ResponseWriter, r *http.Request) {
				if c.contentType != "" {
					w.Header().Set("Content-Type", c.contentType)
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="sso"`)
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(c.body))
			})
			_, err := run(t, px, "Behind an SSO layer: "+c.name)
			if len(*erp) != 1 {
				t.Fatalf("the approved write reached Frappe %d times (answers %v), want once", len(*erp), *erp)
			}
			if err == nil {
				t.Fatal("the write succeeded through the proxy's 401")
			}
			if toolerr.NothingWritten(err) {
				t.Errorf("a 401 not in Frappe's shape, after Frappe made the change, is flagged as having written nothing: %v", err)
			}
			te := toolerr.Classify(err)
			if !strings.HasPrefix(string(te.Code), "UPSTREAM_") || strings.Contains(strings.ToLower(te.Message), "nothing was written") {
				t.Errorf("told as %v, want an outcome not known (UPSTREAM_*) that never says nothing was written", err)
			}
		})
	}
	t.Run("Frappe's own 401 is renewed and the write sent again", func(t *testing.T) {
		refused := false
		var made []int
		px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && !refused {
				// Frappe refuses the credential before the request runs.
				refused = true
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"exception":"frappe.exceptions.AuthenticationError","exc_type":"AuthenticationError","exc":"[\"Traceback (most recent call last):\\nfrappe.exceptions.AuthenticationError\\n\"]"}`))
				return
			}
			if r.Method == http.MethodPost {
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, r)
				made = append(made, rec.Code)
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				_, _ = w.Write(rec.Body.Bytes())
				return
			}
			s.ServeHTTP(w, r)
		}))
		t.Cleanup(px.Close)
		auth, err := run(t, &frappetest.Server{Simulator: s.Simulator, URL: px.URL}, "Sent again after Frappe's own 401")
		if err != nil {
			t.Fatalf("the write failed after a renewable 401 in Frappe's shape: %v", err)
		}
		if len(made) != 1 || made[0] != http.StatusOK || auth.renewed.Load() != 1 {
			t.Errorf("Frappe answered the write %v after %d renewals, want one 200 after one", made, auth.renewed.Load())
		}
	})
}
