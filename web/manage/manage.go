// Package manage is the site owner's page, /sites/{slug}/manage: where an
// administrator of a site's ERP manages the site on erpgate without an
// operator. They sign in at their ERP with the site's own OAuth client
// (web/erpadmin), and only when the connector's administrator check says
// so do they get an owner session: a cookie signed for the "owner" purpose
// naming the site's id and their ERP user, for SessionLifetime. Every
// action goes through platform/front/siteadmin, which checks it, verifies what
// it must against the ERP and records an audit event naming the ERP user.
//
// A change that must be proven at the ERP before it is saved (a new OAuth
// client secret; a move to another tenant) waits in siteadmin while the
// owner signs in again with it.
package manage

import (
	"context"
	"embed"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

// SessionLifetime is how long an owner session lasts after the sign-in at
// the ERP. It is short: the session is a bearer of the ERP administrator's
// say over the site.
const SessionLifetime = 30 * time.Minute

// The proof purposes this package registers with erpadmin.
const (
	// PurposeSignIn signs an owner in; its ref is the site's id.
	PurposeSignIn = "manage"
	// PurposeChange proves a pending change; its ref is
	// "<site id>/<change id>".
	PurposeChange = "manage-change"
)

// sessionPurpose is what owner session cookies are signed for.
const sessionPurpose = "owner"

const (
	sessionCookie = "erpgate_owner"
	csrfCookie    = "erpgate_owner_csrf"
	// csrfLifetime: the CSRF cookie outlives sessions, so that a form
	// shown before a sign-in still posts after it.
	csrfLifetime = 12 * time.Hour
)

//go:embed templates/*.html
var pageFiles embed.FS

// Deps is what the owner's page needs.
type Deps struct {
	Kit      *pagekit.Kit
	Admin    *siteadmin.Service
	Store    *sites.Store
	Registry *connector.Registry
	Proofs   *erpadmin.Service
	// Signer signs owner sessions; its key is derived for this use only.
	Signer *pagekit.Signer
	// Ends holds the owner sessions that were signed out, for every
	// replica (platform/store/pagesession).
	Ends pagekit.SessionEnds
	// Tokens keeps, sealed, the ERP token each owner session signed in
	// with, with which every change asks the ERP again whether the owner
	// still administers it.
	Tokens *pagesession.Tokens
	// Settings are the live settings, where the site's write settings
	// are read (and saved, through Admin.ChangeSetting); nil leaves the
	// Writes section out.
	Settings *livesettings.Store
	Logger   *zap.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ClientIP tells where a request comes from (echo's IP extractor), for
	// the per-source limit on starting sign-ins; nil is the connection's
	// address.
	ClientIP func(*http.Request) string
	// Lookups bounds, per source, the links naming nothing that the
	// pages look up (shared with the doors that take tokens); nil: none.
	Lookups *sourcelimit.Lookups
	// SignInLimit bounds the sign-ins one source may start; zero is 20 at
	// once, then one every 30 s.
	SignInLimit sourcelimit.Limit
}

// Handler serves the owner's pages.
type Handler struct {
	deps    Deps
	log     *zap.Logger
	now     func() time.Time
	signIn  *pagekit.Page
	manage  *pagekit.Page
	token   *pagekit.Page
	deleted *pagekit.Page
	limit   *sourcelimit.Limiter
	// sessions are the owner sessions.
	sessions pagekit.UserSession
	// failedSessions holds the hashes of signed sessions that were not
	// the site's they were shown on (see lookupSite): bounded again.
	failedSessions sourcelimit.TokenSet
}

// New builds the owner's pages and registers their proof purposes with
// deps.Proofs. It panics on a missing dependency (a wiring mistake).
func New(deps Deps) *Handler {
	switch {
	case deps.Kit == nil, deps.Admin == nil, deps.Store == nil, deps.Registry == nil, deps.Proofs == nil, deps.Signer == nil, deps.Ends == nil, deps.Tokens == nil:
		panic("manage: New: a dependency is missing")
	}
	h := &Handler{deps: deps, log: deps.Logger, now: deps.Now, sessions: pagekit.UserSession{
		Kit: deps.Kit, Signer: deps.Signer, Cookie: sessionCookie, Purpose: sessionPurpose, Lifetime: SessionLifetime, Ends: deps.Ends}}
	if h.log == nil {
		h.log = zap.NewNop()
	}
	h.log = h.log.Named("manage")
	if h.now == nil {
		h.now = time.Now
	}
	if h.deps.ClientIP == nil {
		h.deps.ClientIP = sourcelimit.DirectIP
	}
	h.limit = sourcelimit.New(deps.SignInLimit.WithDefault(sourcelimit.Limit{Burst: 20, Every: 30 * time.Second}), time.Now)
	h.signIn = deps.Kit.MustParse(pageFiles, "templates/signin.html")
	h.manage = deps.Kit.MustParse(pageFiles, "templates/manage.html")
	h.token = deps.Kit.MustParse(pageFiles, "templates/token.html")
	h.deleted = deps.Kit.MustParse(pageFiles, "templates/deleted.html")
	deps.Proofs.Handle(erpadmin.Purpose{Name: PurposeSignIn, Target: h.signInTarget, Done: h.signInDone})
	deps.Proofs.Handle(erpadmin.Purpose{Name: PurposeChange, Target: h.changeTarget, Done: h.changeDone})
	return h
}

// Register mounts the pages on e.
func (h *Handler) Register(e *echo.Echo) {
	e.GET("/sites/:slug/manage", h.page)
	// A refused action shows the page at its form's address; opened again
	// with a GET (history, another tab), that address is the page.
	reopened := func(c echo.Context) error {
		http.Redirect(c.Response(), c.Request(), h.manageURL(c.Param("slug"), ""), http.StatusSeeOther)
		return nil
	}
	// post mounts a form's action. A change (action, the admin_events
	// action it is, shown in section of the page when refused) first asks
	// the ERP again whether the owner still administers it (stillAdmin);
	// action "" is no change (signing out) or one that asks the ERP itself.
	post := func(path, action, section string, fn func(w http.ResponseWriter, r *http.Request, o owner)) {
		e.POST("/sites/:slug/manage"+path, func(c echo.Context) error {
			h.action(c, func(w http.ResponseWriter, r *http.Request, o owner) {
				if action != "" && !h.stillAdmin(w, r, o, action, section) {
					return
				}
				fn(w, r, o)
			})
			return nil
		})
		e.GET("/sites/:slug/manage"+path, reopened)
	}
	e.POST("/sites/:slug/manage/sign-in", func(c echo.Context) error { h.beginSignIn(c); return nil })
	e.GET("/sites/:slug/manage/sign-in", reopened)
	post("/sign-out", "", "", h.signOut)
	// Taking access away asks the ERP nothing: it must work when the ERP
	// is down, or no longer lists the owner.
	post("/sign-out-everywhere", "", "", h.signOutEverywhere)
	// Settings ask the ERP in changeSettings: a move to another tenant is
	// proven by a sign-in there. A new client secret is proven so too.
	post("/settings", "", "", h.changeSettings)
	post("/oauth-secret", "", "", h.rotateSecret)
	post("/writes", siteadmin.ActionChangeSetting, "writes", h.changeWrites)
	post("/rows", siteadmin.ActionChangeSetting, "rows", h.changeRows)
	post("/api-credential", siteadmin.ActionPutAPIConnection, "api", h.putAPICredential)
	post("/tokens", siteadmin.ActionIssueServiceToken, "tokens", h.issueToken)
	post("/tokens/revoke", siteadmin.ActionRevokeServiceToken, "tokens", h.revokeToken)
	post("/people/revoke", siteadmin.ActionRevokePerson, "people", h.revokePerson)
	post("/status", siteadmin.ActionUpdateSite, "status", h.setStatus)
	post("/delete", siteadmin.ActionDeleteSite, "delete", h.deleteSite)
}

// owner is a signed-in owner acting on their site.
type owner struct {
	site sites.Site
	user string
	csrf string // the form token of this browser and site
}

func (o owner) actor() siteadmin.Actor { return siteadmin.ERPAdmin(o.user) }

// manageURL is the owner's page of slug, with an optional notice code.
func (h *Handler) manageURL(slug, done string) string {
	u := h.deps.Kit.URL("/sites/" + url.PathEscape(slug) + "/manage")
	if done != "" {
		u += "?done=" + url.QueryEscape(done)
	}
	return u
}

// noticeURL is the owner's page of site with the notice code, checked
// for this browser (pagekit.NoticeCheck): the page shows a notice only
// with its browser's check, never from a link alone.
func (h *Handler) noticeURL(r *http.Request, site sites.Site, code string) string {
	key, _ := h.deps.Kit.Binding(r, csrfCookie)
	return h.manageURL(site.Slug, code) + "&check=" + url.QueryEscape(pagekit.NoticeCheck(key, noticePurpose(site, code)))
}

// notice is the notice the page's address names, when its check is this
// browser's (key) for site; "" otherwise.
func notice(r *http.Request, key string, site sites.Site) string {
	q := r.URL.Query()
	code := q.Get("done")
	if code == "" || !pagekit.CheckNotice(key, noticePurpose(site, code), q.Get("check")) {
		return ""
	}
	return notices[code]
}

func noticePurpose(site sites.Site, code string) string {
	return "owner\x00" + site.ID.String() + "\x00" + code
}

// loadSite finds the site the path names. An unknown slug gets the same
// plain page whatever the reason, so the page confirms nothing about
// sites that do not exist.
func (h *Handler) loadSite(w http.ResponseWriter, r *http.Request, slug string) (sites.Site, bool) {
	site, _, ok := h.lookupSite(w, r, slug)
	return site, ok
}

// lookupSite is loadSite, also returning the function that charges the
// lookup to its source (Deps.Lookups): the address is public, so a
// request by anyone but the site's signed-in owner is to be charged like
// one for a site that does not exist.
//
// A request with an owner session erpgate signed (of any site) is let
// through even when its source is spent, uncharged: sources are shared
// (an office's NAT), and whoever else there sends made-up links must not
// lock an owner out of their page. A session that turns out not to be the
// site's is remembered for that site (charge), and bounded there from then
// on, so that an owner of two sites who looks at the other one's page
// keeps their own; one that named a site that does not exist is bounded
// everywhere. Sessions are only made by a sign-in at an ERP, so this is a
// lookup per sign-in and site.
func (h *Handler) lookupSite(w http.ResponseWriter, r *http.Request, slug string) (sites.Site, func(), bool) {
	var site sites.Site
	err := sites.ErrNotFound
	charge := func() {}
	if sites.ValidateSlug(slug) == nil {
		raw, signed := h.sessions.Signed(r, h.now())
		whole, onSite := secrets.HashToken(raw), secrets.HashToken(raw+"\x00"+slug)
		unknown := charge
		if signed && !h.failedSessions.Has(whole) && !h.failedSessions.Has(onSite) {
			charge = func() { h.failedSessions.Add(onSite) }
			unknown = func() { h.failedSessions.Add(whole) }
		} else {
			var ok bool
			if charge, ok = h.admitLookup(w, r); !ok {
				return sites.Site{}, nil, false
			}
			unknown = charge
		}
		site, err = h.deps.Store.GetSiteBySlug(r.Context(), slug)
		if errors.Is(err, sites.ErrNotFound) {
			unknown()
		}
	}
	switch {
	case errors.Is(err, sites.ErrNotFound):
		h.renderError(w, http.StatusNotFound, pagekit.ErrorPage{
			Title:   "No site to manage here",
			Message: "erpgate has no site at this address.",
			Next:    "Check the address your erpgate operator or the registration page gave you.",
		})
		return sites.Site{}, nil, false
	case err != nil:
		h.internalError(w, "load site", err)
		return sites.Site{}, nil, false
	}
	return site, charge, true
}

// session returns the ERP user of the request's owner session for site.
// A session of another site, an expired, a signed-out or a forged one
// gives nothing; so does one that could not be checked (err: the caller
// says erpgate could not finish, as signing in again would not help).
func (h *Handler) session(r *http.Request, site sites.Site) (string, bool, error) {
	return h.sessions.User(r, site.SessionScope(), h.now())
}

// csrfKey returns this browser's CSRF cookie value, setting one when it
// has none.
func (h *Handler) csrfKey(w http.ResponseWriter, r *http.Request) string {
	return h.deps.Kit.EnsureBinding(w, r, csrfCookie, csrfLifetime)
}

func csrfPurpose(site sites.Site) string { return "owner\x00" + site.ID.String() }

// checkForm refuses a post another origin sent, or one without this
// browser's token for site.
func (h *Handler) checkForm(w http.ResponseWriter, r *http.Request, site sites.Site) bool {
	if h.deps.Kit.CrossOrigin(r) {
		h.formExpired(w, site)
		return false
	}
	key, _ := h.deps.Kit.Binding(r, csrfCookie)
	if !pagekit.CheckCSRF(key, csrfPurpose(site), r.PostFormValue("csrf")) {
		h.formExpired(w, site)
		return false
	}
	return true
}

func (h *Handler) formExpired(w http.ResponseWriter, site sites.Site) {
	h.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
		Title:   "This form cannot be sent",
		Message: "erpgate did not accept this form: it was not sent from the site's owner page in this browser, or it is too old. Nothing was changed.",
		Next:    "Open the owner page again (" + h.manageURL(site.Slug, "") + ") and repeat what you did.",
	})
}

// action runs fn for a signed-in owner's form post.
func (h *Handler) action(c echo.Context, fn func(w http.ResponseWriter, r *http.Request, o owner)) {
	w, r := c.Response(), c.Request()
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	site, charge, ok := h.lookupSite(w, r, c.Param("slug"))
	if !ok || !h.checkForm(w, r, site) {
		return
	}
	user, ok, err := h.session(r, site)
	if err != nil {
		h.internalError(w, "check the owner session", err)
		return
	}
	if !ok {
		charge()
		h.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
			Title:   "Sign in to manage this site",
			Message: "Your sign-in on this site's owner page has ended, or you have not signed in in this browser. Nothing was changed.",
			Next:    "Open the owner page (" + h.manageURL(site.Slug, "") + "), sign in through your ERP, and repeat what you did.",
		})
		return
	}
	key, _ := h.deps.Kit.Binding(r, csrfCookie)
	fn(w, r, owner{site: site, user: user, csrf: pagekit.CSRFToken(key, csrfPurpose(site))})
}

func (h *Handler) render(w http.ResponseWriter, status int, p *pagekit.Page, data any, site sites.Site) {
	if err := h.deps.Kit.Render(w, status, p, data, pagekit.Options{FormAction: pagekit.FormActionWith(site.BaseURL)}); err != nil {
		h.log.Error("owner page not rendered", zap.Error(err))
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
	h.log.Error("owner page failed", zap.String("step", what), zap.String("reference", ref), zap.Error(err))
	h.renderError(w, http.StatusInternalServerError, pagekit.ErrorPage{
		Title:     "Something went wrong",
		Message:   "erpgate could not finish this. Nothing more was changed.",
		Next:      "Try again in a moment. If it keeps happening, tell your erpgate operator.",
		Reference: ref,
	})
}

// siteOfRef loads the site a proof's ref names.
func (h *Handler) siteOfRef(ctx context.Context, ref string) (sites.Site, error) {
	id, err := uuid.Parse(ref)
	if err != nil {
		return sites.Site{}, sites.ErrNotFound
	}
	return h.deps.Store.GetSite(ctx, id)
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
		h.log.Info("source rate limit", zap.String("endpoint", "owner page"), zap.String("source", refused.Source))
	}
	_ = h.deps.Kit.RenderTooManyLookups(w, refused.Wait)
	return nil, false
}
