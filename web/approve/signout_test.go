package approve

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/connectors/frappe"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// database is a fresh database with a Frappe site, acme, and a change
// ana@example.com proposed there.
type database struct {
	pool   *pgxpool.Pool
	keys   *secrets.Keyring
	reg    *connector.Registry
	store  *sites.Store
	admin  *siteadmin.Service
	site   sites.Site
	action approval.Action
}

const approver = "ana@example.com"

func newDatabase(t *testing.T) *database {
	t.Helper()
	d := &database{pool: pgtest.NewPool(t), reg: connector.NewRegistry()}
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	if d.keys, err = secrets.ParseKeyring(spec); err != nil {
		t.Fatal(err)
	}
	d.reg.MustRegister(frappe.New())
	d.store = sites.NewStore(d.pool, d.keys)
	d.admin = siteadmin.New(siteadmin.Deps{Store: d.store, Registry: d.reg,
		HTTPClient: func(connector.Site, connector.Authorizer) *http.Client { return http.DefaultClient }})
	if d.site, err = d.admin.CreateSite(t.Context(), siteadmin.Operator, siteadmin.NewSite{Slug: "acme", Kind: "frappe", DisplayName: "Acme",
		BaseURL: "http://127.0.0.1:8001", Settings: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	digest, err := approval.Digest(json.RawMessage(`{"credit_limit":2}`))
	if err != nil {
		t.Fatal(err)
	}
	d.action, err = approval.NewStore(d.pool, nil).Propose(t.Context(), approval.Action{
		Key:      approval.Key{SiteID: d.site.ID, AuthType: "oauth", Principal: approver, Tool: "update_customer", ArgsDigest: digest},
		SiteSlug: "acme", Kind: "frappe", ClientID: "client-1", Approver: approver,
		Preview: connector.Preview{Operation: "update", DocType: "Customer", DocName: "ACME", Summary: "Update ACME.",
			Fields: []connector.PreviewField{{Name: "credit_limit", Label: "Credit limit", Before: "1", HasBefore: true, After: "2"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// replica serves the approval page on d as one replica does: a handler
// and server of its own, nothing shared with another replica in memory.
func (d *database) replica(t *testing.T) (*Handler, string) {
	t.Helper()
	return d.replicaWithEnds(t, pagesession.New(d.pool))
}

// replicaWithEnds is replica, checking ended sessions in ends.
func (d *database) replicaWithEnds(t *testing.T, ends pagekit.SessionEnds) (*Handler, string) {
	t.Helper()
	e := echo.New()
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	kit, err := pagekit.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	hc := func(connector.Site, connector.Authorizer) *http.Client { return http.DefaultClient }
	h := New(Deps{Kit: kit, Actions: approval.NewStore(d.pool, nil), Sites: d.store, Admin: d.admin, Registry: d.reg,
		Proofs: erpadmin.New(erpadmin.Deps{Pool: d.pool, Keyring: d.keys, Registry: d.reg, HTTPClient: hc, PublicBaseURL: srv.URL}),
		Signer: pagekit.NewSigner(d.keys.DeriveKey("approval session signing")), Ends: ends})
	h.Register(e)
	return h, srv.URL
}

// send sends a request to base+path with form (a POST when form is not
// nil) and cookies, following no redirect.
func send(t *testing.T, base, path string, form url.Values, cookies ...*http.Cookie) (int, string, http.Header) {
	t.Helper()
	method, body := http.MethodGet, ""
	if form != nil {
		method, body = http.MethodPost, form.Encode()
	}
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// The approver can sign out of the approval page, and someone who copied
// their cookies (a shared computer, a proxy's log) then can neither see
// the change nor approve it, on any replica.
func TestSignedOutApprovalSessionIsRefusedOnEveryReplica(t *testing.T) {
	d := newDatabase(t)
	a, baseA := d.replica(t)
	_, baseB := d.replica(t)
	rec := httptest.NewRecorder()
	if err := a.startSession(rec, httptest.NewRequest(http.MethodGet, "/", nil), d.site, approver); err != nil {
		t.Fatal(err)
	}
	copied := rec.Result().Cookies()[0]
	binding := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("b", 43)}
	csrf := pagekit.CSRFToken(binding.Value, csrfPurpose(d.action.ID))
	page := "/approve/" + d.action.ID.String()
	const signedIn = "Signed in as <strong>" + approver
	for _, base := range []string{baseA, baseB} {
		if _, body, _ := send(t, base, page, nil, copied, binding); !strings.Contains(body, signedIn) || !strings.Contains(body, `/approve/`+d.action.ID.String()+`/sign-out"`) {
			t.Fatalf("before the sign-out, at %s, the page offers no sign-out: %s", base, body)
		}
	}
	status, _, header := send(t, baseA, page+"/sign-out", url.Values{"csrf": {csrf}}, copied, binding)
	if status != http.StatusSeeOther || !strings.HasSuffix(header.Get("Location"), page) {
		t.Fatalf("sign-out: HTTP %d to %q", status, header.Get("Location"))
	}
	for _, base := range []string{baseA, baseB} {
		if _, body, _ := send(t, base, page, nil, copied, binding); strings.Contains(body, "Signed in as") || !strings.Contains(body, "Sign in to decide") {
			t.Errorf("the copied cookie after the sign-out, at %s: %s", base, body)
		}
		form := url.Values{"csrf": {csrf}, "decision": {"approve"}}
		if status, body, _ := send(t, base, page+"/decide", form, copied, binding); status != http.StatusForbidden || !strings.Contains(body, "Sign in to decide") {
			t.Errorf("Approve with the copied cookie after the sign-out, at %s: HTTP %d: %s", base, status, body)
		}
	}
	got, err := approval.NewStore(d.pool, nil).Get(t.Context(), d.site.ID, d.action.ID)
	if err != nil || got.Status != approval.Proposed {
		t.Errorf("the change after the refused approvals: %q, %v", got.Status, err)
	}
}

// When whether an approval session was signed out cannot be checked (the
// database does not answer), the approver is told that erpgate could not
// finish, and nothing is decided: not that their sign-in ended, nor the
// page as if no one were signed in.
func TestUncheckedApprovalSessionIsRefusedWithAPlainSentence(t *testing.T) {
	d := newDatabase(t)
	down, err := pgxpool.New(t.Context(), "postgres://erpgate@127.0.0.1:1/erpgate?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(down.Close)
	_, base := d.replicaWithEnds(t, pagesession.New(down))
	// The session began while the database answered (on another replica:
	// a sign-in takes a mark from it).
	up, _ := d.replica(t)
	rec := httptest.NewRecorder()
	if err := up.startSession(rec, httptest.NewRequest(http.MethodGet, "/", nil), d.site, approver); err != nil {
		t.Fatal(err)
	}
	cookie := rec.Result().Cookies()[0]
	binding := &http.Cookie{Name: csrfCookie, Value: strings.Repeat("b", 43)}
	csrf := pagekit.CSRFToken(binding.Value, csrfPurpose(d.action.ID))
	page := "/approve/" + d.action.ID.String()
	for _, c := range []struct {
		path string
		form url.Values
	}{{page, nil}, {page + "/decide", url.Values{"csrf": {csrf}, "decision": {"approve"}}}, {page + "/withdraw", url.Values{"csrf": {csrf}}}} {
		status, body, _ := send(t, base, c.path, c.form, cookie, binding)
		if status != http.StatusInternalServerError || !strings.Contains(body, "erpgate could not finish this") || strings.Contains(body, "has ended") {
			t.Errorf("%s with the check failing: HTTP %d: %s", c.path, status, body)
		}
	}
	got, err := approval.NewStore(d.pool, nil).Get(t.Context(), d.site.ID, d.action.ID)
	if err != nil || got.Status != approval.Proposed {
		t.Errorf("the change after the refused decision: %q, %v", got.Status, err)
	}
}
