package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/store/approval"
)

// approvals is the approval store of a gateway's database, as the engine
// would use it to propose.
type approvals struct {
	store *approval.Store
	pool  *pgxpool.Pool
}

func newApprovals(t *testing.T, gw *gateway) *approvals {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), gw.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &approvals{store: approval.NewStore(pool, nil), pool: pool}
}

// customerUpdate is the preview of an update of a customer, with values
// that would be markup if the page did not escape them: they stand for
// what an ERP (or a model's arguments) could hold.
func customerUpdate(docName string) connector.Preview {
	return connector.Preview{
		Operation: "update", DocType: "Customer", DocName: docName,
		Summary: "Update the customer " + docName + ": credit limit and e-mail.",
		Fields: []connector.PreviewField{
			{Name: "credit_limit", Label: "Credit limit", Before: "5,000.00", HasBefore: true, After: "12,500.00"},
			{Name: "email_id", Label: "E-mail", Before: "", HasBefore: true, After: `ap@acme.example"><script>alert(1)</script>`},
			{Name: "customer_group", Label: "Customer group", Before: "Commercial", HasBefore: true, After: "Commercial"},
			{Name: "notes", Label: "Notes", Before: "<b>old</b>", HasBefore: true, After: "<img src=x onerror=alert(2)>\nSecond  line"},
		},
		Warnings: []string{"The new credit limit lets the customer order up to 12,500.00 without a hold."},
	}
}

func salesOrderCreate() connector.Preview {
	return connector.Preview{
		Operation: "create", DocType: "Sales Order",
		Summary: "Create a draft Sales Order for Acme Corp, 2 lines, total 1,250.00 USD.",
		Fields: []connector.PreviewField{
			{Name: "customer", Label: "Customer", After: "Acme Corp"},
			{Name: "delivery_date", Label: "Delivery date", After: "2026-12-20"},
		},
		Tables: []connector.PreviewTable{{Title: "Items", Columns: []string{"Item", "Quantity", "Rate", "Amount"},
			Rows: [][]string{{"WIDGET-01", "10", "100.00", "1,000.00"}, {"GADGET-02", "5", "50.00", "250.00"}}}},
	}
}

// propose stores a pending action of tool on the site, proposed by user
// through an OAuth client, as the engine does.
func (ap *approvals) propose(t *testing.T, siteID, slug, kind, user, tool string, p connector.Preview) approval.Action {
	t.Helper()
	digest, err := approval.Digest(json.RawMessage(`{"n":"` + uuid.NewString() + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	a, err := ap.store.Propose(context.Background(), approval.Action{
		Key:      approval.Key{SiteID: uuid.MustParse(siteID), AuthType: "oauth", Principal: user, Tool: tool, ArgsDigest: digest},
		SiteSlug: slug, Kind: kind, ClientID: "erpgate-chromium-client", Approver: user, Preview: p,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (ap *approvals) status(t *testing.T, a approval.Action) approval.Status {
	t.Helper()
	got, err := ap.store.Get(context.Background(), a.Key.SiteID, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got.Status
}

func siteIDOf(t *testing.T, gw *gateway, slug string) string {
	t.Helper()
	var id string
	pool, err := pgxpool.New(context.Background(), gw.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pool.QueryRow(context.Background(), `SELECT id::text FROM sites WHERE slug = $1`, slug).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// The approval page in real Chromium against the Frappe simulator: the
// link alone shows no preview; a sign-in as another ERP user is refused
// (audited, the action still proposed); the approver signs in, sees
// erpgate's rendering of the preview with every value as text, and
// approves; a second change on the site needs no second sign-in and is
// rejected; an expired, an executed and a failed action say so; a post
// without the form token or from another origin decides nothing; an
// unknown id looks like a malformed one.
func TestChromiumApprovalPageFrappe(t *testing.T) {
	needChromium(t)
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	ap := newApprovals(t, gw)
	approver := userWithRole(t, sim, "all-companies")
	other := userWithRole(t, sim, "one-company")
	update := ap.propose(t, site.ID, "acme", "frappe", approver.Email, "update_customer", customerUpdate("ACME-CORP"))
	pageURL := gw.URL + "/approve/" + update.ID.String()

	ctx := newChromiumWithin(t, 120*time.Second)
	docs := recordDocumentResponses(t, ctx)

	t.Run("the link alone shows no preview", func(t *testing.T) {
		navigate(t, ctx, "open the approval page", chromedp.Navigate(pageURL))
		waitForNewTitle(t, ctx, "Approve a change on Test acme")
		text := pageBody(t, ctx)
		for _, want := range []string{"This change waits for your approval. Nothing has been written to Frappe/ERPNext yet.", "Time left to decide: 9 minutes", "Sign in with Frappe/ERPNext to decide"} {
			if !strings.Contains(text, want) {
				t.Errorf("page lacks %q: %s", want, text)
			}
		}
		for _, secret := range []string{"ACME-CORP", "12,500.00", approver.Email, "erpgate-chromium-client"} {
			if strings.Contains(text, secret) {
				t.Errorf("the page shows %q before a sign-in: %s", secret, text)
			}
		}
		h, _ := docs.last("/approve/" + update.ID.String())
		// The one script is erpgate's own file (it holds Approve for a
		// moment); nothing inline.
		if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self' "+sim.URL) || !strings.Contains(csp, "script-src 'self' "+gw.URL+";") {
			t.Errorf("CSP %q", csp)
		}
		saveScreenshot(t, ctx, "approval-signin.png")
	})

	t.Run("another ERP user is refused", func(t *testing.T) {
		clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, other, "You cannot approve this change")
		text := pageBody(t, ctx)
		if !strings.Contains(text, "You are signed in to Test acme as "+other.Email+"; this change must be approved by the person who asked for it") || strings.Contains(text, " "+approver.Email) {
			t.Errorf("refusal page says: %s", text)
		}
		if h, _ := docs.last("/sites/acme/oauth/callback"); h.status != http.StatusForbidden {
			t.Errorf("refusal HTTP %d", h.status)
		}
		saveScreenshot(t, ctx, "approval-wrong-user.png")
		if s := ap.status(t, update); s != approval.Proposed {
			t.Errorf("after the refusal the action is %s", s)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE site_slug = 'acme' AND action = 'write_refused'
			AND actor_kind = 'erp_user' AND actor = $1 AND outcome = 'refused' AND details->>'action_id' = $2`, other.Email, update.ID.String()); n != 1 {
			t.Errorf("%d refusal events for %s", n, other.Email)
		}
		// The refused person holds no session: the page still asks to sign in.
		navigate(t, ctx, "open the approval page again", chromedp.Navigate(pageURL))
		waitForNewTitle(t, ctx, "Approve a change on Test acme")
		if text := pageBody(t, ctx); !strings.Contains(text, "Sign in with Frappe/ERPNext to decide") || strings.Contains(text, "12,500.00") {
			t.Errorf("after a refused sign-in: %s", text)
		}
		clearCookies(t, ctx) // sign out of the ERP
	})

	t.Run("the approver signs in and sees the preview as text", func(t *testing.T) {
		navigate(t, ctx, "open the approval page", chromedp.Navigate(pageURL))
		waitForNewTitle(t, ctx, "Approve a change on Test acme")
		clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, approver, "Approve a change on Test acme")
		text := pageBody(t, ctx)
		for _, want := range []string{
			"Customer ACME-CORP", "Change a document", "Update the customer ACME-CORP: credit limit and e-mail.",
			"5,000.00", "12,500.00", `ap@acme.example"><script>alert(1)</script>`, "<img src=x onerror=alert(2)>", "<b>old</b>",
			"(unchanged)", "The new credit limit lets the customer order", approver.Email + ", through their AI assistant",
			"erpgate-chromium-client", "Signed in as " + approver.Email,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("page lacks %q: %s", want, text)
			}
		}
		markup := browserResult(t, ctx, "count markup from values", chromedp.Evaluate[int](`document.querySelectorAll("script:not([src$='/assets/erpgate.js']):not([src*='/assets/erpgate.js?']), img, main b").length`))
		if markup != 0 {
			t.Errorf("%d elements came from preview values", markup)
		}
		// A value shows as it is: its line breaks and runs of spaces too.
		notes := browserResult(t, ctx, "read the new notes as shown", chromedp.Evaluate[string](
			`[...document.querySelectorAll("table.preview tr")].find(r => r.querySelector("th").textContent.startsWith("Notes")).querySelectorAll("td")[1].innerText`))
		if want := "<img src=x onerror=alert(2)>\nSecond  line"; notes != want {
			t.Errorf("the new notes show as %q, want %q", notes, want)
		}
		for _, c := range browserCookies(t, ctx, gw.URL) {
			if c.Name == "erpgate_approve" && (!c.HTTPOnly || c.Expires-float64(time.Now().Unix()) > 31*60) {
				t.Errorf("session cookie %+v", c)
			}
		}
		saveScreenshot(t, ctx, "approval-awaiting.png")
	})

	t.Run("hidden characters and lookalike letters are shown and warned of", func(t *testing.T) {
		p := customerUpdate("ACME-CORP")
		p.Summary, p.Warnings = "Update the customer ACME-CORP: name and group.", nil
		p.Fields = []connector.PreviewField{
			{Name: "customer_name", Label: "Customer name", Before: "Acme Corp", HasBefore: true, After: "Acme\u200b Corp\u202e"},
			// "Commercial" with a Cyrillic С and о.
			{Name: "customer_group", Label: "Customer group", Before: "Commercial", HasBefore: true, After: "\u0421\u043emmercial"},
			// A no-break space: drawn as a space, another territory.
			{Name: "territory", Label: "Territory", Before: "All Territories", HasBefore: true, After: "All\u00a0Territories"},
		}
		hidden := ap.propose(t, site.ID, "acme", "frappe", approver.Email, "update_customer", p)
		navigate(t, ctx, "open the page of a change with hidden characters", chromedp.Navigate(gw.URL+"/approve/"+hidden.ID.String()))
		waitForNewTitle(t, ctx, "Approve a change on Test acme")
		text := pageBody(t, ctx)
		for _, want := range []string{
			"Acme[U+200B] Corp[U+202E]", "\u0421\u043emmercial",
			"Some values of this change hold characters a browser does not show as themselves",
			"Some values mix letters of scripts that look alike", "Cyrillic",
			"All[U+00A0]Territories", "Some values of this change hold spaces other than the ordinary one",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("page lacks %q: %s", want, text)
			}
		}
		saveScreenshot(t, ctx, "approval-hidden-characters.png")
		// Back to the first change, whose form the next steps read.
		navigate(t, ctx, "open the approval page", chromedp.Navigate(pageURL))
		waitForNewTitle(t, ctx, "Approve a change on Test acme")
	})

	var decideCookies, decideCSRF string
	t.Run("posts without the form token or from another origin decide nothing", func(t *testing.T) {
		cookies := cookieHeader(browserCookies(t, ctx, gw.URL))
		csrf := browserResult(t, ctx, "read the form token", chromedp.Evaluate[string](`document.querySelector('input[name="csrf"]').value`))
		decideCookies, decideCSRF = cookies, csrf
		other := ap.propose(t, site.ID, "acme", "frappe", approver.Email, "add_comment", salesOrderCreate())
		for _, c := range []struct {
			name, path, origin string
			form               url.Values
		}{
			{"no form token", "/approve/" + update.ID.String() + "/decide", "", url.Values{"decision": {"approve"}}},
			{"a wrong form token", "/approve/" + update.ID.String() + "/decide", "", url.Values{"decision": {"approve"}, "csrf": {flipFirst(csrf)}}},
			{"another action's form token", "/approve/" + other.ID.String() + "/decide", "", url.Values{"decision": {"approve"}, "csrf": {csrf}}},
			{"another origin", "/approve/" + update.ID.String() + "/decide", "https://attacker.example", url.Values{"decision": {"approve"}, "csrf": {csrf}}},
		} {
			status, body := postForm(t, gw.URL+c.path, cookies, c.origin, c.form)
			if status != http.StatusForbidden || !strings.Contains(body, "This form cannot be sent") {
				t.Errorf("%s: HTTP %d: %s", c.name, status, pageText(body))
			}
		}
		// A forged approval session (its value changed, its MAC kept).
		forged := strings.Replace(cookies, "erpgate_approve=", "erpgate_approve=AAAA", 1)
		if status, body := postForm(t, gw.URL+"/approve/"+update.ID.String()+"/decide", forged, "", url.Values{"decision": {"approve"}, "csrf": {csrf}}); status != http.StatusForbidden || !strings.Contains(body, "Sign in to decide") {
			t.Errorf("a forged session: HTTP %d: %s", status, pageText(body))
		}
		// The same post without the session cookie: no decision either.
		if status, body := postForm(t, gw.URL+"/approve/"+update.ID.String()+"/decide", onlyCookie(cookies, "erpgate_approve_csrf"), "", url.Values{"decision": {"approve"}, "csrf": {csrf}}); status != http.StatusForbidden || !strings.Contains(body, "Sign in to decide") {
			t.Errorf("without a session: HTTP %d: %s", status, pageText(body))
		}
		if s, o := ap.status(t, update), ap.status(t, other); s != approval.Proposed || o != approval.Proposed {
			t.Errorf("after the attacks: %s and %s", s, o)
		}
	})

	t.Run("approve", func(t *testing.T) {
		navigate(t, ctx, "approve", chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
		waitForNewTitle(t, ctx, "Change approved on Test acme")
		text := pageBody(t, ctx)
		if !strings.Contains(text, "This change is approved.") || !strings.Contains(text, "Go back to your AI assistant. It will continue on its own, or you can ask it to try again.") {
			t.Errorf("after approving: %s", text)
		}
		if s := ap.status(t, update); s != approval.Approved {
			t.Errorf("the store says %s", s)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'write_approved' AND actor = $1 AND details->>'action_id' = $2`, approver.Email, update.ID.String()); n != 1 {
			t.Errorf("%d approval events", n)
		}
		waitFor(t, 10*time.Second, "the approved usage event", func() bool {
			return queryInt(t, gw.DBURL, `SELECT count(*) FROM usage_events WHERE method = 'approval' AND approval = 'approved' AND tool = 'update_customer'
				AND erp_user = $1 AND client_id = 'erpgate-chromium-client'`, approver.Email) == 1
		})
		saveScreenshot(t, ctx, "approval-approved.png")
		// The same decision posted again (a reload, another tab) decides
		// nothing more: the page says where the change stands.
		status, body := postForm(t, gw.URL+"/approve/"+update.ID.String()+"/decide", decideCookies, "", url.Values{"decision": {"reject"}, "csrf": {decideCSRF}})
		if status != http.StatusConflict || !strings.Contains(body, "This change is approved.") {
			t.Errorf("a second decision: HTTP %d: %s", status, pageText(body))
		}
		if s := ap.status(t, update); s != approval.Approved {
			t.Errorf("after a second decision the store says %s", s)
		}
	})

	t.Run("a second change needs no second sign-in, and is rejected", func(t *testing.T) {
		order := ap.propose(t, site.ID, "acme", "frappe", approver.Email, "create_sales_order", salesOrderCreate())
		navigate(t, ctx, "open the second approval page", chromedp.Navigate(gw.URL+"/approve/"+order.ID.String()))
		waitForNewTitle(t, ctx, "Approve a change on Test acme")
		text := pageBody(t, ctx)
		for _, want := range []string{"Create a document", "Sales Order (a new one)", "WIDGET-01", "1,250.00", "Acme Corp"} {
			if !strings.Contains(text, want) {
				t.Errorf("page lacks %q: %s", want, text)
			}
		}
		saveScreenshot(t, ctx, "approval-create.png")
		navigate(t, ctx, "reject", chromedp.Click(chromedp.CSS(`button[value="reject"]`)))
		waitForNewTitle(t, ctx, "Change rejected on Test acme")
		if text := pageBody(t, ctx); !strings.Contains(text, "This change was rejected. Nothing was written to Frappe/ERPNext.") {
			t.Errorf("after rejecting: %s", text)
		}
		if s := ap.status(t, order); s != approval.Rejected {
			t.Errorf("the store says %s", s)
		}
		waitFor(t, 10*time.Second, "the rejected usage event", func() bool {
			return queryInt(t, gw.DBURL, `SELECT count(*) FROM usage_events WHERE method = 'approval' AND approval = 'rejected' AND tool = 'create_sales_order'`) == 1
		})
		saveScreenshot(t, ctx, "approval-rejected.png")
	})

	t.Run("expired, executed and failed actions say so", func(t *testing.T) {
		old := approval.NewStore(ap.pool, nil)
		old.SetNow(func() time.Time { return time.Now().Add(-11 * time.Minute) })
		expired := (&approvals{store: old}).propose(t, site.ID, "acme", "frappe", approver.Email, "update_customer", customerUpdate("ACME-OLD"))
		navigate(t, ctx, "open an expired approval", chromedp.Navigate(gw.URL+"/approve/"+expired.ID.String()))
		waitForNewTitle(t, ctx, "Approval expired on Test acme")
		if text := pageBody(t, ctx); !strings.Contains(text, "This change expired before it was carried out") {
			t.Errorf("expired: %s", text)
		}
		if n := browserResult(t, ctx, "count buttons", chromedp.Evaluate[int](`document.querySelectorAll("button").length`)); n != 0 {
			t.Errorf("an expired approval shows %d buttons", n)
		}
		saveScreenshot(t, ctx, "approval-expired.png")

		// The executed one: update was approved above; the engine claims and
		// finishes it.
		bg := context.Background()
		if _, err := ap.store.Claim(bg, update.Key, update.ID); err != nil {
			t.Fatal(err)
		}
		navigate(t, ctx, "open the executing approval", chromedp.Navigate(pageURL))
		waitForNewTitle(t, ctx, "Change being carried out on Test acme")
		saveScreenshot(t, ctx, "approval-executing.png")
		if err := ap.store.Finish(bg, update.Key.SiteID, update.ID, json.RawMessage(`{"name":"ACME-CORP"}`), "", ""); err != nil {
			t.Fatal(err)
		}
		navigate(t, ctx, "open the executed approval", chromedp.Navigate(pageURL))
		waitForNewTitle(t, ctx, "Change carried out on Test acme")
		if text := pageBody(t, ctx); !strings.Contains(text, "This change was approved and carried out in Frappe/ERPNext on 20") {
			t.Errorf("executed: %s", text)
		}
		saveScreenshot(t, ctx, "approval-executed.png")

		failing := ap.propose(t, site.ID, "acme", "frappe", approver.Email, "update_customer", customerUpdate("ACME-FAIL"))
		if _, err := ap.store.Decide(bg, failing.Key.SiteID, failing.ID, approver.Email, true); err != nil {
			t.Fatal(err)
		}
		if _, err := ap.store.Claim(bg, failing.Key, failing.ID); err != nil {
			t.Fatal(err)
		}
		if err := ap.store.Fail(bg, failing.Key.SiteID, failing.ID, "INVALID_ARGUMENT", "the ERP refused the change (ValidationError): Credit limit cannot be lower",
			"Credit limit cannot be lower than the outstanding amount <b>4,000.00</b>."); err != nil {
			t.Fatal(err)
		}
		navigate(t, ctx, "open the failed approval", chromedp.Navigate(gw.URL+"/approve/"+failing.ID.String()))
		waitForNewTitle(t, ctx, "Change not carried out on Test acme")
		if text := pageBody(t, ctx); !strings.Contains(text, "Frappe/ERPNext refused the change, so nothing was written. It said: “Credit limit cannot be lower than the outstanding amount <b>4,000.00</b>.”") ||
			strings.Contains(text, "ValidationError") {
			t.Errorf("failed: %s", text)
		}
		saveScreenshot(t, ctx, "approval-failed.png")
	})

	t.Run("an unknown id looks like a malformed one", func(t *testing.T) {
		var bodies []string
		for _, id := range []string{uuid.NewString(), "not-an-id", uuid.Nil.String()} {
			navigate(t, ctx, "open an unknown approval", chromedp.Navigate(gw.URL+"/approve/"+id))
			waitForNewTitle(t, ctx, "This approval link is not valid")
			if h, _ := docs.last("/approve/" + id); h.status != http.StatusNotFound {
				t.Errorf("%s: HTTP %d", id, h.status)
			}
			bodies = append(bodies, pageBody(t, ctx))
		}
		if bodies[0] != bodies[1] || bodies[1] != bodies[2] {
			t.Errorf("unknown ids answer differently: %q", bodies)
		}
		saveScreenshot(t, ctx, "approval-invalid.png")
		// Deciding an unknown action: the same page.
		status, body := postForm(t, gw.URL+"/approve/"+uuid.NewString()+"/decide", "", "", url.Values{"decision": {"approve"}})
		if status != http.StatusNotFound || !strings.Contains(body, "This approval link is not valid") {
			t.Errorf("deciding an unknown action: HTTP %d: %s", status, pageText(body))
		}
	})

	// Last, since it spends this source's allowance: starting sign-ins
	// (20 at once) and deciding (30 at once) are limited per source.
	t.Run("per-source limits", func(t *testing.T) {
		for _, path := range []string{"/sign-in", "/decide"} {
			limited := 0
			for range 40 {
				status, body := postForm(t, gw.URL+"/approve/"+uuid.NewString()+path, "", "", url.Values{"decision": {"approve"}})
				if status == http.StatusTooManyRequests {
					if !strings.Contains(pageText(body), "too many requests to erpgate's approval pages") {
						t.Errorf("%s limited: %s", path, pageText(body))
					}
					limited++
				}
			}
			if limited == 0 {
				t.Errorf("40 posts to %s from one source were never limited", path)
			}
		}
	})
}

// Withdrawing an approval on the page, in real Chromium against the
// Frappe simulator: the approver approves and sees a Withdraw button;
// withdrawing leaves the change withdrawn (audited, a usage event, no
// buttons); an approval the engine claimed meanwhile cannot be withdrawn,
// and the page says plainly that the change is being carried out; the
// approver can come back in another browser, sign in and withdraw; the
// withdrawal form checks its token and origin; a proposal still awaiting
// has a Reject button (declining).
func TestChromiumApprovalWithdrawFrappe(t *testing.T) {
	needChromium(t)
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	ap := newApprovals(t, gw)
	approver := userWithRole(t, sim, "all-companies")
	other := userWithRole(t, sim, "one-company")
	update := ap.propose(t, site.ID, "acme", "frappe", approver.Email, "update_customer", customerUpdate("ACME-CORP"))
	pageURL := gw.URL + "/approve/" + update.ID.String()
	ctx := newChromiumWithin(t, 120*time.Second)
	docs := recordDocumentResponses(t, ctx)
	buttons := func(t *testing.T) []string {
		t.Helper()
		return browserResult(t, ctx, "read the buttons", chromedp.Evaluate[[]string](`[...document.querySelectorAll("button")].map(b => b.textContent.trim())`))
	}

	t.Run("a proposal awaiting has Approve and Reject", func(t *testing.T) {
		navigate(t, ctx, "open the approval page", chromedp.Navigate(pageURL))
		waitForNewTitle(t, ctx, "Approve a change on Test acme")
		clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, approver, "Approve a change on Test acme")
		if got := strings.Join(buttons(t), ","); got != "Approve,Reject,Sign out,Sign out everywhere" {
			t.Errorf("buttons %q", got)
		}
	})

	t.Run("the approver approves, and may withdraw until it runs", func(t *testing.T) {
		navigate(t, ctx, "approve", chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
		waitForNewTitle(t, ctx, "Change approved on Test acme")
		text := pageBody(t, ctx)
		for _, want := range []string{"This change is approved.", "Until your AI assistant carries it out, you can withdraw your approval: then nothing is written."} {
			if !strings.Contains(text, want) {
				t.Errorf("page lacks %q: %s", want, text)
			}
		}
		if got := strings.Join(buttons(t), ","); got != "Withdraw approval,Sign out,Sign out everywhere" {
			t.Errorf("buttons %q", got)
		}
		saveScreenshot(t, ctx, "approval-approved-withdrawable.png")
	})

	t.Run("posts without the form token or from another origin withdraw nothing", func(t *testing.T) {
		cookies := cookieHeader(browserCookies(t, ctx, gw.URL))
		csrf := browserResult(t, ctx, "read the form token", chromedp.Evaluate[string](`document.querySelector('form[action$="/withdraw"] input[name="csrf"]').value`))
		for name, c := range map[string]struct {
			origin string
			form   url.Values
		}{
			"no form token":      {"", url.Values{}},
			"a wrong form token": {"", url.Values{"csrf": {flipFirst(csrf)}}},
			"another origin":     {"https://attacker.example", url.Values{"csrf": {csrf}}},
		} {
			status, body := postForm(t, pageURL+"/withdraw", cookies, c.origin, c.form)
			if status != http.StatusForbidden || !strings.Contains(body, "This form cannot be sent") {
				t.Errorf("%s: HTTP %d: %s", name, status, pageText(body))
			}
		}
		if status, body := postForm(t, pageURL+"/withdraw", onlyCookie(cookies, "erpgate_approve_csrf"), "", url.Values{"csrf": {csrf}}); status != http.StatusForbidden || !strings.Contains(body, "Sign in to withdraw") {
			t.Errorf("without a session: HTTP %d: %s", status, pageText(body))
		}
		if s := ap.status(t, update); s != approval.Approved {
			t.Errorf("after the attacks: %s", s)
		}
	})

	t.Run("withdraw", func(t *testing.T) {
		navigate(t, ctx, "withdraw", chromedp.Click(chromedp.CSS(`form[action$="/withdraw"] button`)))
		waitForNewTitle(t, ctx, "Approval withdrawn on Test acme")
		if text := pageBody(t, ctx); !strings.Contains(text, "The approval of this change was withdrawn before it was carried out. Nothing was written to Frappe/ERPNext.") {
			t.Errorf("after withdrawing: %s", text)
		}
		if n := len(buttons(t)); n != 0 {
			t.Errorf("a withdrawn approval shows %d buttons", n)
		}
		if s := ap.status(t, update); s != approval.Withdrawn {
			t.Errorf("the store says %s", s)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'write_withdrawn' AND actor_kind = 'erp_user' AND actor = $1 AND details->>'action_id' = $2`, approver.Email, update.ID.String()); n != 1 {
			t.Errorf("%d withdrawal events", n)
		}
		waitFor(t, 10*time.Second, "the withdrawn usage event", func() bool {
			return queryInt(t, gw.DBURL, `SELECT count(*) FROM usage_events WHERE method = 'approval' AND approval = 'withdrawn' AND tool = 'update_customer' AND erp_user = $1`, approver.Email) == 1
		})
		saveScreenshot(t, ctx, "approval-withdrawn.png")
	})

	t.Run("a change already being carried out cannot be withdrawn, and the page says so", func(t *testing.T) {
		order := ap.propose(t, site.ID, "acme", "frappe", approver.Email, "create_sales_order", salesOrderCreate())
		navigate(t, ctx, "open the second approval page", chromedp.Navigate(gw.URL+"/approve/"+order.ID.String()))
		waitForNewTitle(t, ctx, "Approve a change on Test acme")
		navigate(t, ctx, "approve", chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
		waitForNewTitle(t, ctx, "Change approved on Test acme")
		// The AI assistant's retry claims it while the page is open.
		if _, err := ap.store.Claim(context.Background(), order.Key, order.ID); err != nil {
			t.Fatal(err)
		}
		navigate(t, ctx, "withdraw too late", chromedp.Click(chromedp.CSS(`form[action$="/withdraw"] button`)))
		waitForNewTitle(t, ctx, "Change being carried out on Test acme")
		text := pageBody(t, ctx)
		if !strings.Contains(text, "Your approval could not be withdrawn: erpgate had already begun carrying out this change.") {
			t.Errorf("withdrawn too late: %s", text)
		}
		if h, _ := docs.last("/approve/" + order.ID.String() + "/withdraw"); h.status != http.StatusConflict {
			t.Errorf("withdrawn too late: HTTP %d", h.status)
		}
		if n := len(buttons(t)); n != 0 {
			t.Errorf("a change being carried out shows %d buttons", n)
		}
		if s := ap.status(t, order); s != approval.Executing {
			t.Errorf("the store says %s", s)
		}
		saveScreenshot(t, ctx, "approval-withdraw-too-late.png")
		if err := ap.store.Finish(context.Background(), order.Key.SiteID, order.ID, json.RawMessage(`{"name":"SO-1"}`), "", ""); err != nil {
			t.Fatal(err)
		}
		navigate(t, ctx, "open the executed approval", chromedp.Navigate(gw.URL+"/approve/"+order.ID.String()))
		waitForNewTitle(t, ctx, "Change carried out on Test acme")
		if n := len(buttons(t)); n != 0 {
			t.Errorf("a change carried out shows %d buttons", n)
		}
	})

	t.Run("in another browser the approver signs in to withdraw", func(t *testing.T) {
		third := ap.propose(t, site.ID, "acme", "frappe", approver.Email, "update_customer", customerUpdate("ACME-THIRD"))
		if _, err := ap.store.Decide(context.Background(), third.Key.SiteID, third.ID, approver.Email, true); err != nil {
			t.Fatal(err)
		}
		clearCookies(t, ctx)
		navigate(t, ctx, "open the approved page signed out", chromedp.Navigate(gw.URL+"/approve/"+third.ID.String()))
		waitForNewTitle(t, ctx, "Change approved on Test acme")
		text := pageBody(t, ctx)
		if strings.Contains(text, "ACME-THIRD") || !strings.Contains(text, "Sign in with Frappe/ERPNext to withdraw") {
			t.Errorf("signed out: %s", text)
		}
		saveScreenshot(t, ctx, "approval-approved-signin.png")
		// Another ERP user signs in: refused, audited, nothing withdrawn.
		clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, other, "You cannot withdraw this approval")
		if text := pageBody(t, ctx); !strings.Contains(text, "You are signed in to Test acme as "+other.Email+"; only the person who approved this change can withdraw the approval. Nothing was withdrawn.") {
			t.Errorf("another user: %s", text)
		}
		saveScreenshot(t, ctx, "approval-withdraw-wrong-user.png")
		if s := ap.status(t, third); s != approval.Approved {
			t.Errorf("after another user's sign-in: %s", s)
		}
		if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM admin_events WHERE action = 'write_refused' AND actor_kind = 'erp_user' AND actor = $1 AND details->>'action_id' = $2`, other.Email, third.ID.String()); n != 1 {
			t.Errorf("%d refusal events for %s", n, other.Email)
		}
		clearCookies(t, ctx)
		navigate(t, ctx, "open the approved page again", chromedp.Navigate(gw.URL+"/approve/"+third.ID.String()))
		waitForNewTitle(t, ctx, "Change approved on Test acme")
		clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, approver, "Change approved on Test acme")
		navigate(t, ctx, "withdraw", chromedp.Click(chromedp.CSS(`form[action$="/withdraw"] button`)))
		waitForNewTitle(t, ctx, "Approval withdrawn on Test acme")
		if s := ap.status(t, third); s != approval.Withdrawn {
			t.Errorf("the store says %s", s)
		}
	})
}

// The approval page with the Acumatica simulator's sign-in: the approver
// (login@tenant, as Acumatica's OIDC subject names them) approves.
func TestChromiumApprovalPageAcumatica(t *testing.T) {
	needChromium(t)
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	acumaticaOAuthSite(t, gw, "acu", sim)
	ap := newApprovals(t, gw)
	user := sim.User(acumaticatest.RoleFull)
	userID := user.Username + "@" + sim.Tenant()
	a := ap.propose(t, siteIDOf(t, gw, "acu"), "acu", "acumatica", userID, "acumatica_add_note", connector.Preview{
		Operation: "comment", DocType: "Customer", DocName: "ABCSTUDIO", Summary: "Add a note to the customer ABCSTUDIO.",
		Fields: []connector.PreviewField{{Name: "note", Label: "Note", After: "Called about the overdue invoice."}},
	})
	ctx := newChromium(t)
	navigate(t, ctx, "open the approval page", chromedp.Navigate(gw.URL+"/approve/"+a.ID.String()))
	waitForNewTitle(t, ctx, "Approve a change on Acumatica acu")
	navigate(t, ctx, "start the sign-in", chromedp.Click(chromedp.CSS(`form[action$="/sign-in"] button`)))
	finishAcumaticaSignIn(t, ctx, user, "Approve a change on Acumatica acu")
	if text := pageBody(t, ctx); !strings.Contains(text, "Add a comment to a document") || !strings.Contains(text, "Called about the overdue invoice.") || !strings.Contains(text, "Signed in as "+userID) {
		t.Errorf("page: %s", text)
	}
	saveScreenshot(t, ctx, "approval-acumatica.png")
	navigate(t, ctx, "approve", chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
	waitForNewTitle(t, ctx, "Change approved on Acumatica acu")
	if s := ap.status(t, a); s != approval.Approved {
		t.Errorf("the store says %s", s)
	}
}

// onlyCookie keeps the cookie name of a Cookie header.
func onlyCookie(header, name string) string {
	for _, p := range strings.Split(header, "; ") {
		if strings.HasPrefix(p, name+"=") {
			return p
		}
	}
	return ""
}

// approvalURL finds the approval page's address in an APPROVAL_REQUIRED
// tool error's message.
var approvalURL = regexp.MustCompile(`https?://[^\s"]+/approve/[0-9a-f-]{36}(\.[A-Za-z0-9_-]{14})?`)

// The whole flow through the engine, with the official SDK client signed
// in over OAuth: a write tool's call is refused with APPROVAL_REQUIRED and
// the page's address; the person opens it in Chromium, signs in through
// Frappe as themselves and approves; the same call then writes once, and
// the page says the change was carried out.
func TestChromiumApprovalThroughMCPFrappe(t *testing.T) {
	f := newFrappeWrite(t, "update_customer")
	gw, user, client := f.gw, f.user, f.client
	rows := mustSucceed(t, callTool(t, client.cs, "list_customers", map[string]any{"limit": 1}), "list_customers")["data"].([]any)
	customer := rows[0].(map[string]any)["name"].(string)
	args := map[string]any{"customer": customer, "email_id": "approved@chromium.example"}

	first := callTool(t, client.cs, "update_customer", args)
	if !first.IsError || first.errorCode() != "APPROVAL_REQUIRED" {
		t.Fatalf("the first call: %s", first.Text)
	}
	link := approvalURL.FindString(first.Text)
	if !strings.HasPrefix(link, gw.URL+"/approve/") {
		t.Fatalf("no approval URL of erpgate's in %s", first.Text)
	}

	ctx := newChromium(t)
	navigate(t, ctx, "open the approval link", chromedp.Navigate(link))
	waitForNewTitle(t, ctx, "Approve a change on Test acme")
	clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, user, "Approve a change on Test acme")
	text := pageBody(t, ctx)
	for _, want := range []string{"Update a customer", "Customer " + customer, "approved@chromium.example", user.Email + ", through their AI assistant", "“erpgate e2e client” (the name it registered with) egc_"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page lacks %q: %s", want, text)
		}
	}
	saveScreenshot(t, ctx, "approval-mcp-awaiting.png")
	navigate(t, ctx, "approve", chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
	waitForNewTitle(t, ctx, "Change approved on Test acme")

	again := callTool(t, client.cs, "update_customer", args)
	if again.IsError {
		t.Fatalf("the call after approval: %s", again.Text)
	}
	if n := queryInt(t, gw.DBURL, `SELECT count(*) FROM pending_actions WHERE status = 'executed' AND tool = 'update_customer' AND principal = $1`, user.Email); n != 1 {
		t.Errorf("%d executed actions, want 1", n)
	}
	navigate(t, ctx, "open the approval link again", chromedp.Navigate(link))
	waitForNewTitle(t, ctx, "Change carried out on Test acme")
	saveScreenshot(t, ctx, "approval-mcp-executed.png")
}

// flipFirst returns token with its first character replaced by another
// one, so it is never the token itself (a fixed "x" was, for a token that
// began with x).
func flipFirst(token string) string {
	if token == "" || token[0] == 'x' {
		return "y" + token[min(1, len(token)):]
	}
	return "x" + token[1:]
}

// A write a service token proposed is approved by the site's named
// approver, who has no AI assistant in it: the page names the program and
// its token, never "your AI assistant", and does not call the token an AI
// client.
func TestChromiumApprovalOfAServiceTokenWriteFrappe(t *testing.T) {
	needChromium(t)
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	ap := newApprovals(t, gw)
	approver := userWithRole(t, sim, "all-companies")
	tokenID := uuid.NewString()
	a := ap.proposeAsService(t, site.ID, "acme", tokenID, approver.Email)
	ctx := newChromiumWithin(t, 120*time.Second)
	navigate(t, ctx, "open the approval page", chromedp.Navigate(gw.URL+"/approve/"+a.ID.String()))
	waitForNewTitle(t, ctx, "Approve a change on Test acme")
	clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, approver, "Approve a change on Test acme")
	check := func(what string, wants ...string) {
		t.Helper()
		text := browserResult(t, ctx, "read the page's main part", chromedp.Text(chromedp.CSS("main"))) // the footer speaks of AI assistants in general
		for _, bad := range []string{"AI assistant", "AI client"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s: the page says %q of a service token's write: %s", what, bad, text)
			}
		}
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s: the page lacks %q: %s", what, want, text)
			}
		}
	}
	check("awaiting", "a program using a service token of the site (token id "+tokenID+")",
		"Approving lets the program make exactly this change, once, before it expires.")
	navigate(t, ctx, "approve", chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
	waitForNewTitle(t, ctx, "Change approved on Test acme")
	check("approved", "This change is approved. The program carries it out when it calls again; nothing has been written yet.",
		"Until the program carries it out, you can withdraw your approval")
}

// proposeAsService stores a pending update_customer on the site, proposed
// with the service token tokenID and awaiting approver, as the engine does.
func (ap *approvals) proposeAsService(t *testing.T, siteID, slug, tokenID, approver string) approval.Action {
	t.Helper()
	digest, err := approval.Digest(json.RawMessage(`{"n":"` + uuid.NewString() + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	a, err := ap.store.Propose(context.Background(), approval.Action{
		Key:      approval.Key{SiteID: uuid.MustParse(siteID), AuthType: "service_token", Principal: tokenID, Tool: "update_customer", ArgsDigest: digest},
		SiteSlug: slug, Kind: "frappe", ClientID: tokenID, Approver: approver, Preview: customerUpdate("ACME-CORP"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// clickAsItOpens makes every page opened from now on in ctx press the
// button sel the moment it is shown (DOMContentLoaded, after the page's
// deferred script), as the second click of a double-click does when the
// first opened the page in a pop-up under the pointer. The page records
// in window.erpgateHeldAtOpen whether the button was held.
func clickAsItOpens(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	js := `document.addEventListener("DOMContentLoaded", function () {
		var b = document.querySelector(` + strconv.Quote(sel) + `);
		if (!b) { return; }
		window.erpgateHeldAtOpen = b.disabled;
		b.click();
	});`
	var id page.ScriptIdentifier
	browserDo(t, ctx, "press the button as pages open", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		res, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: js})
		id = res.Identifier
		return chromedp.Void{}, err
	})
	// Until the end of the (sub)test only.
	t.Cleanup(func() {
		_ = chromedp.Do(ctx, func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := cdp.Call(ctx, tg, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: id})
			return chromedp.Void{}, err
		})
	})
}

// TestChromiumApprovalIgnoresAClickAsItOpens: clickjacking by double-click.
// A page the model points the person to opens the approval page in a
// pop-up under the pointer on the first click; the second lands on
// Approve. Framing is refused, but a pop-up is not framing: the Approve
// button is held for a moment whenever the page is shown or made visible
// again, so a click meant for another page presses nothing, and a
// person who reads the change can approve it.
func TestChromiumApprovalIgnoresAClickAsItOpens(t *testing.T) {
	ap, update, pageURL, ctx := signedInAtAnApproval(t)

	clickAsItOpens(t, ctx, `button[value="approve"]`)
	navigate(t, ctx, "open the approval page again", chromedp.Navigate(pageURL))
	waitForNewTitle(t, ctx, "Approve a change on Test acme", "Change approved on Test acme")
	saveScreenshot(t, ctx, "approval-held.png")
	if held := browserResult(t, ctx, "read whether Approve was held", chromedp.Evaluate[bool](`window.erpgateHeldAtOpen === true`)); !held {
		t.Error("the Approve button was not held as the page opened")
	}
	if s := ap.status(t, update); s != approval.Proposed {
		t.Fatalf("a click as the page opened: the change is %s", s)
	}
	// Read, then approve: the button is let go.
	navigate(t, ctx, "approve", chromedp.WaitEnabled(chromedp.CSS(`button[value="approve"]`)), chromedp.Click(chromedp.CSS(`button[value="approve"]`)))
	waitForNewTitle(t, ctx, "Change approved on Test acme")
	if s := ap.status(t, update); s != approval.Approved {
		t.Errorf("after reading and approving: the change is %s", s)
	}
}

// The approver signs out of the approval page in Chromium: the page
// offers the sign-in again, and the cookie the browser held decides
// nothing any more (web/approve's tests replay it on two replicas).
func TestChromiumApprovalSignOut(t *testing.T) {
	ap, update, _, ctx := signedInAtAnApproval(t)
	saveScreenshot(t, ctx, "approval-sign-out.png")
	navigate(t, ctx, "sign out", chromedp.Click(chromedp.CSS(`form[action$="/sign-out"] button`)))
	waitForNewTitle(t, ctx, "Approve a change on Test acme")
	text := pageBody(t, ctx)
	if strings.Contains(text, "Signed in as") || strings.Contains(text, "You are signed in") || !strings.Contains(text, "Sign in to decide") {
		t.Errorf("after signing out: %s", text)
	}
	saveScreenshot(t, ctx, "approval-signed-out.png")
	if s := ap.status(t, update); s != approval.Proposed {
		t.Errorf("after signing out: the change is %s", s)
	}
}

// signedInAtAnApproval proposes an update of a customer on a Frappe site
// and opens its approval page in Chromium, signed in at the ERP as the
// approver: the page with Approve on it.
func signedInAtAnApproval(t *testing.T) (ap *approvals, update approval.Action, pageURL string, ctx context.Context) {
	t.Helper()
	needChromium(t)
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	ap = newApprovals(t, gw)
	approver := userWithRole(t, sim, "all-companies")
	update = ap.propose(t, site.ID, "acme", "frappe", approver.Email, "update_customer", customerUpdate("ACME-CORP"))
	pageURL = gw.URL + "/approve/" + update.ID.String()
	ctx = newChromiumWithin(t, 120*time.Second)
	navigate(t, ctx, "open the approval page", chromedp.Navigate(pageURL))
	waitForNewTitle(t, ctx, "Approve a change on Test acme")
	clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, approver, "Approve a change on Test acme")
	return ap, update, pageURL, ctx
}
