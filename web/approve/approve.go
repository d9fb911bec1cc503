// Package approve is the approval page, /approve/{id}: where the person a
// write waits for sees erpgate's rendering of the change (the preview the
// connector read from the ERP, never text a model wrote) and approves or
// rejects it (docs/writes.md), and where the person who approved it can
// withdraw the approval until the change begins.
//
// To decide, the person signs in at the site's ERP through its own OAuth
// client (web/erpadmin, an identity-only purpose: no administrator check)
// and must come back as the action's approver: the ERP user who proposed
// it, or, for a service token's write, the user the site's owner named.
// Then they hold an approval session: a cookie signed for the "approve"
// purpose naming the site's id and their ERP user, for SessionLifetime,
// so a second change on the same site needs no second sign-in. Decisions
// are CSRF-protected form posts; the store (platform/store/approval) makes each
// single-use, checks the approver and the expiry in one conditional
// update and writes the audit row.
//
// Nothing is kept in memory: any replica serves any step.
package approve

import (
	"context"
	"embed"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/platform/store/usage"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

// Purpose is the erpadmin purpose of the sign-in that identifies the
// person deciding; its ref is the action's id.
const Purpose = "approve"

// SessionLifetime is how long an approval session lasts after the
// sign-in at the ERP.
const SessionLifetime = 30 * time.Minute

// sessionPurpose is what approval session cookies are signed for.
const sessionPurpose = "approve"

const (
	sessionCookie = "erpgate_approve"
	csrfCookie    = "erpgate_approve_csrf"
	// csrfLifetime: the CSRF cookie outlives sessions, so that a page
	// shown before a sign-in still posts after it.
	csrfLifetime = 12 * time.Hour
)

//go:embed templates/*.html
var pageFiles embed.FS

// Actions is the part of the approval store (approval.Store) the page
// uses.
type Actions interface {
	// Lookup returns the action with id, on whatever site:
	// approval.ErrNotFound when there is none.
	Lookup(ctx context.Context, id uuid.UUID) (approval.Action, error)
	// Decide approves or rejects a proposed action as erpUser:
	// approval.ErrWrongUser, ErrDecided, ErrExpired or ErrNotFound when it
	// cannot. It writes the audit row.
	Decide(ctx context.Context, siteID, id uuid.UUID, erpUser string, approve bool) (approval.Action, error)
	// Withdraw withdraws the approval erpUser gave, before a call claimed
	// it: approval.ErrWrongUser, ErrNotApproved, ErrDecided, ErrWithdrawn,
	// ErrUsed, ErrExpired or ErrNotFound when it cannot. It writes the
	// audit row.
	Withdraw(ctx context.Context, siteID, id uuid.UUID, erpUser string) (approval.Action, error)
}

// UsageRecorder records usage events (usage.Recorder).
type UsageRecorder interface{ Record(usage.Event) }

// Deps is what the approval page needs.
type Deps struct {
	Kit     *pagekit.Kit
	Actions Actions
	Sites   *sites.Store
	// Admin gives the site's OAuth client and records the audit rows of
	// refusals the store does not see (a sign-in as another user).
	Admin    *siteadmin.Service
	Registry *connector.Registry
	Proofs   *erpadmin.Service
	// Signer signs approval sessions; its key is derived for this use
	// only.
	Signer *pagekit.Signer
	// Ends holds the approval sessions that were signed out, for every
	// replica (platform/store/pagesession).
	Ends pagekit.SessionEnds
	// Usage records the approved and rejected usage events; nil records
	// none.
	Usage  UsageRecorder
	Logger *zap.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ClientIP tells where a request comes from (echo's IP extractor), for
	// the per-source limits; nil is the connection's address.
	ClientIP func(*http.Request) string
	// Lookups bounds, per source, the links naming nothing that the
	// pages look up (shared with the doors that take tokens); nil: none.
	Lookups *sourcelimit.Lookups
	// LinkKeys check the check values of approval links
	// (secrets.Keyring.DeriveKeys(approval.LinkKeyPurpose)): a link whose
	// value verifies is looked up however spent its source's Lookups are,
	// uncharged, until it once finds nothing. Nil: none verifies.
	LinkKeys [][]byte
	// SignInLimit bounds the sign-ins one source may start; zero is 20 at
	// once, then one every 30 s. PostLimit bounds its decisions; zero is
	// 30 at once, then one every 10 s.
	SignInLimit, PostLimit sourcelimit.Limit
}

// Handler serves the approval page.
type Handler struct {
	deps    Deps
	log     *zap.Logger
	now     func() time.Time
	page    *pagekit.Page
	signIns *sourcelimit.Limiter
	posts   *sourcelimit.Limiter
	// sessions are the approval sessions.
	sessions pagekit.UserSession
	// failedLinks holds the hashes of tagged links that found nothing
	// (their action removed): bounded again, like made-up ones.
	failedLinks sourcelimit.TokenSet
}

// New builds the page and registers its sign-in purpose with deps.Proofs.
// It panics on a missing dependency (a wiring mistake).
func New(deps Deps) *Handler {
	switch {
	case deps.Kit == nil, deps.Actions == nil, deps.Sites == nil, deps.Admin == nil, deps.Registry == nil, deps.Proofs == nil, deps.Signer == nil, deps.Ends == nil:
		panic("approve: New: a dependency is missing")
	}
	h := &Handler{deps: deps, log: deps.Logger, now: deps.Now, sessions: pagekit.UserSession{
		Kit: deps.Kit, Signer: deps.Signer, Cookie: sessionCookie, Purpose: sessionPurpose, Lifetime: SessionLifetime, Ends: deps.Ends}}
	if h.log == nil {
		h.log = zap.NewNop()
	}
	h.log = h.log.Named("approve")
	if h.now == nil {
		h.now = time.Now
	}
	if h.deps.ClientIP == nil {
		h.deps.ClientIP = sourcelimit.DirectIP
	}
	h.signIns = sourcelimit.New(deps.SignInLimit.WithDefault(sourcelimit.Limit{Burst: 20, Every: 30 * time.Second}), time.Now)
	h.posts = sourcelimit.New(deps.PostLimit.WithDefault(sourcelimit.Limit{Burst: 30, Every: 10 * time.Second}), time.Now)
	h.page = deps.Kit.MustParse(pageFiles, "templates/approve.html")
	deps.Proofs.Handle(erpadmin.Purpose{Name: Purpose, IdentityOnly: true, Target: h.signInTarget, Done: h.signInDone})
	return h
}

// Register mounts the page on e.
func (h *Handler) Register(e *echo.Echo) {
	e.GET("/approve/:id", func(c echo.Context) error { h.show(c.Response(), c.Request(), c.Param("id")); return nil })
	e.POST("/approve/:id/sign-in", func(c echo.Context) error { h.beginSignIn(c.Response(), c.Request(), c.Param("id")); return nil })
	e.POST("/approve/:id/decide", func(c echo.Context) error { h.decide(c.Response(), c.Request(), c.Param("id")); return nil })
	e.POST("/approve/:id/withdraw", func(c echo.Context) error { h.withdraw(c.Response(), c.Request(), c.Param("id")); return nil })
	e.POST("/approve/:id/sign-out", func(c echo.Context) error { h.signOut(c.Response(), c.Request(), c.Param("id")); return nil })
	e.POST("/approve/:id/sign-out-everywhere", func(c echo.Context) error {
		h.signOutEverywhere(c.Response(), c.Request(), c.Param("id"))
		return nil
	})
	// A refusal shows at the form's address; opened again with a GET
	// (history, another tab), that address is the approval page.
	for _, step := range []string{"sign-in", "decide", "withdraw", "sign-out", "sign-out-everywhere"} {
		e.GET("/approve/:id/"+step, func(c echo.Context) error {
			http.Redirect(c.Response(), c.Request(), h.deps.Kit.URL("/approve/"+url.PathEscape(c.Param("id"))), http.StatusSeeOther)
			return nil
		})
	}
}

// pageURL is the approval page of p, named as the link it was opened by
// named it (with its check value, or without for a link made before
// there were any).
func (h *Handler) pageURL(p pending) string {
	return h.deps.Kit.URL("/approve/" + url.PathEscape(p.linkID()))
}

// pending is an action with its site, as the page found them.
type pending struct {
	action approval.Action
	site   sites.Site
	// clientName is the OAuth client's registered name, read for the
	// approver's page only.
	clientName string
	// link is the action's id as the link names it: with the check value
	// that verified (approval.LinkID), or bare.
	link string
}

// linkID is how the page's own links name p's action: as the link that
// opened it did.
func (p pending) linkID() string {
	if p.link == "" {
		return p.action.ID.String()
	}
	return p.link
}

// load finds the action the path names and its site. An id that is not
// one, an unknown action and one whose site is gone get the same page, so
// the page confirms nothing about actions it does not show.
//
// A link whose check value erpgate made (approval.LinkID) is looked up
// however spent its source's bound on links that lead nowhere is, and not
// charged: sources are shared (an office's NAT), and someone else there
// sending made-up links must not keep a person from the change waiting
// for them. One that finds nothing is remembered and bounded from then
// on. Links without a check value (made before there were any) and
// made-up ones are looked up within the bound.
func (h *Handler) load(w http.ResponseWriter, r *http.Request, raw string) (pending, bool) {
	var charge func()
	if _, tagged, _ := approval.ParseLinkID(raw, h.deps.LinkKeys); tagged && !h.failedLinks.Has(secrets.HashToken(raw)) {
		key := secrets.HashToken(raw)
		charge = func() { h.failedLinks.Add(key) }
	} else {
		var ok bool
		if charge, ok = h.admitLookup(w, r); !ok {
			return pending{}, false
		}
	}
	p, err := h.lookup(r.Context(), raw)
	switch {
	case errors.Is(err, approval.ErrNotFound), errors.Is(err, sites.ErrNotFound):
		charge()
		h.invalidLink(w)
		return pending{}, false
	case err != nil:
		h.internalError(w, "load pending action", err)
		return pending{}, false
	}
	return p, true
}

// lookup finds the action raw (a link's id, or a sign-in's ref) names.
func (h *Handler) lookup(ctx context.Context, raw string) (pending, error) {
	id, tagged, ok := approval.ParseLinkID(raw, h.deps.LinkKeys)
	if !ok {
		return pending{}, approval.ErrNotFound
	}
	link := id.String()
	if tagged {
		link = raw
	}
	a, err := h.deps.Actions.Lookup(ctx, id)
	if err != nil {
		return pending{}, err
	}
	site, err := h.deps.Sites.GetSite(ctx, a.Key.SiteID)
	if err != nil {
		return pending{}, err
	}
	return pending{action: a, site: site, link: link}, nil
}

func (h *Handler) invalidLink(w http.ResponseWriter) {
	h.renderError(w, http.StatusNotFound, pagekit.ErrorPage{
		Title:   "This approval link is not valid",
		Message: "erpgate has no change waiting for approval at this address. The link may be incomplete, or the change was removed a day after it expired.",
		Next:    "Go back to your AI assistant and ask it to propose the change again; it gives you a new link.",
	})
}

// session returns the ERP user of the request's approval session for site.
// A session of another site, an expired, a signed-out or a forged one
// gives nothing; so does one that could not be checked (err: the caller
// says erpgate could not finish, as signing in again would not help).
func (h *Handler) session(r *http.Request, site sites.Site) (string, bool, error) {
	return h.sessions.User(r, site.SessionScope(), h.now())
}

// startSession sets the approval session cookie for user on site; when
// it cannot (err), none is set.
func (h *Handler) startSession(w http.ResponseWriter, r *http.Request, site sites.Site, user string) error {
	_, err := h.sessions.Start(w, r, site.SessionScope(), user, h.now())
	return err
}

// csrfPurpose binds a form's token to the action it decides.
func csrfPurpose(id uuid.UUID) string { return "approve\x00" + id.String() }

// checkForm refuses a post another origin sent, or one without this
// browser's token for p's action.
func (h *Handler) checkForm(w http.ResponseWriter, r *http.Request, p pending) bool {
	if h.deps.Kit.CrossOrigin(r) {
		h.formExpired(w, p)
		return false
	}
	key, _ := h.deps.Kit.Binding(r, csrfCookie)
	if !pagekit.CheckCSRF(key, csrfPurpose(p.action.ID), r.PostFormValue("csrf")) {
		h.formExpired(w, p)
		return false
	}
	return true
}

func (h *Handler) formExpired(w http.ResponseWriter, p pending) {
	h.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
		Title:   "This form cannot be sent",
		Message: "erpgate did not accept this form: it was not sent from the approval page in this browser, or it is too old. Nothing was approved, rejected or withdrawn.",
		Next:    "Open the approval page again (" + h.pageURL(p) + ") and decide there.",
	})
}

// limited answers a request over its source's limit.
func (h *Handler) limited(w http.ResponseWriter, r *http.Request, l *sourcelimit.Limiter, what string) bool {
	source := sourcelimit.Source(h.deps.ClientIP(r))
	ok, wait, first := l.Allow(source)
	if ok {
		return false
	}
	secs := sourcelimit.RetryAfter(w.Header(), wait)
	if first {
		h.log.Info("source rate limit", zap.String("endpoint", "approval "+what), zap.String("source", source))
	}
	h.renderError(w, http.StatusTooManyRequests, pagekit.ErrorPage{
		Title:   "Too many requests",
		Message: "This address has sent too many requests to erpgate's approval pages in a short time.",
		Next:    "Wait " + strconv.Itoa(secs) + " seconds, then open the approval page again.",
	})
	return true
}

func (h *Handler) render(w http.ResponseWriter, status int, p *pagekit.Page, data any, site sites.Site) {
	// The script holds the Approve button for a moment (data-hold).
	if err := h.deps.Kit.Render(w, status, p, data, pagekit.Options{FormAction: pagekit.FormActionWith(site.BaseURL), Script: true}); err != nil {
		h.log.Error("approval page not rendered", zap.Error(err))
	}
}

func (h *Handler) renderError(w http.ResponseWriter, status int, p pagekit.ErrorPage) {
	if err := h.deps.Kit.RenderError(w, status, p); err != nil {
		h.log.Error("error page not rendered", zap.Error(err))
	}
}

// internalError logs err under a reference and shows the reference.
func (h *Handler) internalError(w http.ResponseWriter, what string, err error) {
	ref := pagekit.NewReference()
	h.log.Error("approval page failed", zap.String("step", what), zap.String("reference", ref), zap.Error(err))
	h.renderError(w, http.StatusInternalServerError, pagekit.ErrorPage{
		Title:     "Something went wrong",
		Message:   "erpgate could not finish this. Nothing was approved or rejected.",
		Next:      "Try again in a moment. If it keeps happening, tell your erpgate operator.",
		Reference: ref,
	})
}

// admitLookup lets a request look up what its link names within its
// source's bound of lookups that find nothing (Deps.Lookups): anyone may
// send a made-up link, and each costs a query. Over the bound it answers
// 429 and returns false; charge is to be called when nothing was found.
func (h *Handler) admitLookup(w http.ResponseWriter, r *http.Request) (charge func(), ok bool) {
	charge, err := h.deps.Lookups.For(r)()
	var refused *sourcelimit.LookupsRefused
	if !errors.As(err, &refused) {
		return charge, true
	}
	if refused.First {
		h.log.Info("source rate limit", zap.String("endpoint", "approval page"), zap.String("source", refused.Source))
	}
	_ = h.deps.Kit.RenderTooManyLookups(w, refused.Wait)
	return nil, false
}
