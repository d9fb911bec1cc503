// Package register is self-service site registration, /register: a
// company's ERP administrator registers their ERP with erpgate without an
// operator. The steps:
//
//  1. Start: the ERP's kind and address (and its tenant and endpoint, or
//     default company), checked by the site-administration layer's rules.
//     Whether the address is registered already is not said here, to
//     anyone: only step 3 refuses it, to the ERP's proven administrator.
//  2. The OAuth client: exact instructions to create it in the ERP, then
//     its client id and secret.
//  3. Proof of ownership (web/erpadmin, purpose "register"): a sign-in at
//     the ERP with that client, and the connector's administrator check
//     as the signed-in person. Only then is the site created.
//  4. The result: the site's MCP URL, the set-up of AI clients, and
//     optionally a fixed API credential (verified before it is saved) with
//     a service token shown once.
//
// A registration in progress lives in pending_registrations, bound to its
// browser by a cookie, and expires (30 minutes) leaving nothing active.
// The pages never list or confirm other sites, and posts are rate-limited
// per source. The registrations waiting to be finished are bounded for the
// whole deployment (Deps.MaxPending), and those of one source network
// (Deps.MaxPendingPerNetwork) within that, counted in Postgres: the
// per-source limits are each replica's, and do not hold against many
// addresses. A start holds its place before erpgate contacts the ERP, and
// keeps it for a few minutes when the address did not answer as one, so
// that every start that makes erpgate send a request counts. Every step is an audit event
// of platform/front/siteadmin.
package register

import (
	"context"
	"embed"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/erpadmin"
	"github.com/erpgate/erpgate/web/pagekit"
)

// Purpose is the erpadmin purpose of a registration's proof.
const Purpose = "register"

// LinkKeyPurpose is the secrets.Keyring.DeriveKey purpose of the key that
// tags a registration's address (Handler.link).
const LinkKeyPurpose = "registration link"

// Deps is what registration needs from the rest of erpgate.
type Deps struct {
	Admin    *siteadmin.Service
	Proofs   *erpadmin.Service
	Sites    *sites.Store
	Registry *connector.Registry
	Pool     *pgxpool.Pool
	Keyring  *secrets.Keyring
	// Tokens keeps, sealed, the ERP token the registrant proved
	// themselves with, for as long as the registration stays open: its
	// last step (an API credential, a service token) changes the site as
	// its owner does, and first asks the ERP again with it whether they
	// still administer it, as the owner's page does.
	Tokens *pagesession.Tokens
	// PublicBaseURL is the base of every URL the pages show.
	PublicBaseURL string
	Logger        *zap.Logger
	// ClientIP returns the address a request comes from (the trusted
	// proxies setting decides it); nil: the connection's address.
	ClientIP func(*http.Request) string
	// Lookups bounds, per source, the links naming nothing that the
	// pages look up (shared with the doors that take tokens); nil: none.
	Lookups *sourcelimit.Lookups
	// Limit bounds the posts of one source; default 20 at once, then one
	// every 30 s.
	Limit sourcelimit.Limit
	// TTL is how long a registration may stay open; default 30 minutes.
	TTL time.Duration
	// MaxPending bounds the registrations waiting to be finished in the
	// whole deployment (counted in Postgres); default 200.
	MaxPending int
	// MaxPendingPerNetwork bounds, in the whole deployment, those started
	// from one network (an IPv4 /24, an IPv6 /48), so that a handful of
	// one network's addresses cannot fill MaxPending; default 5.
	MaxPendingPerNetwork int
}

// browserCookie binds a registration to its browser; the CSRF token of
// every form is keyed by it.
const browserCookie = "erpgate_register"

// maxFormBytes bounds the body of a registration form: anyone may post
// one, and the largest (an OAuth client, an API credential) is a few
// hundred bytes.
const maxFormBytes = 64 << 10

// Handler serves the registration pages.
type Handler struct {
	deps  Deps
	log   *zap.Logger
	kit   *pagekit.Kit
	store *store
	limit *sourcelimit.Limiter
	pages pages
	mux   *http.ServeMux
	// linkKeys tag and check registrations' addresses (link, parseID).
	linkKeys [][]byte
	// failedLinks holds the hashes of tagged addresses that found no
	// registration open in the browser: bounded again, like made-up ones.
	failedLinks sourcelimit.TokenSet
	// atBound is set while starts are refused for Deps.MaxPending, so
	// that the operator is told once per run of refusals.
	atBound atomic.Bool
}

//go:embed templates/*.html
var pageFiles embed.FS

type pages struct {
	start, client, result, message *pagekit.Page
}

// New builds the handler and registers its proof purpose with
// deps.Proofs. It panics on a missing dependency (a wiring mistake).
func New(deps Deps) *Handler {
	if deps.Admin == nil || deps.Proofs == nil || deps.Sites == nil || deps.Registry == nil || deps.Pool == nil || deps.Keyring == nil || deps.Tokens == nil {
		panic("register: New: Admin, Proofs, Sites, Registry, Pool, Keyring and Tokens are required")
	}
	if deps.Logger == nil {
		deps.Logger = zap.NewNop()
	}
	if deps.ClientIP == nil {
		deps.ClientIP = sourcelimit.DirectIP
	}
	if deps.TTL <= 0 {
		deps.TTL = 30 * time.Minute
	}
	if deps.MaxPending <= 0 {
		deps.MaxPending = 200
	}
	if deps.MaxPendingPerNetwork <= 0 {
		deps.MaxPendingPerNetwork = 5
	}
	deps.Limit = deps.Limit.WithDefault(sourcelimit.Limit{Burst: 20, Every: 30 * time.Second})
	kit, err := pagekit.New(deps.PublicBaseURL)
	if err != nil {
		panic("register: " + err.Error())
	}
	h := &Handler{
		deps:  deps,
		log:   deps.Logger.Named("register"),
		kit:   kit,
		store: &store{pool: deps.Pool, keys: deps.Keyring},
		limit: sourcelimit.New(deps.Limit, time.Now),
		// A key of its own: an approval link's check value is no
		// registration's.
		linkKeys: deps.Keyring.DeriveKeys(LinkKeyPurpose),
	}
	h.pages = pages{
		start:   kit.MustParse(pageFiles, "templates/start.html"),
		client:  kit.MustParse(pageFiles, "templates/client.html"),
		result:  kit.MustParse(pageFiles, "templates/result.html"),
		message: kit.MustParse(pageFiles, "templates/message.html"),
	}
	deps.Proofs.Handle(erpadmin.Purpose{Name: Purpose, Target: h.target, Done: h.proofDone})
	m := http.NewServeMux()
	m.HandleFunc("GET /register", h.serveStart)
	m.HandleFunc("POST /register", h.postStart)
	m.HandleFunc("GET /register/{id}", h.serveRegistration)
	m.HandleFunc("POST /register/{id}/client", h.postClient)
	m.HandleFunc("POST /register/{id}/prove", h.postProve)
	m.HandleFunc("POST /register/{id}/api", h.postAPI)
	// A refused step shows at its form's address; opened again with a GET
	// (history, another tab) it is the registration's page, which shows
	// the step the registration is at.
	m.HandleFunc("GET /register/{id}/{step}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, h.kit.URL("/register/"+url.PathEscape(r.PathValue("id"))), http.StatusSeeOther)
	})
	h.mux = m
	return h
}

// Paths lists the paths the handler answers, in echo's route syntax.
func Paths() []string {
	return []string{"/register", "/register/:id", "/register/:id/client", "/register/:id/prove", "/register/:id/api"}
}

// ServeHTTP serves the paths Paths lists.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// Sweep removes expired registrations and returns how many went. Reads
// refuse them anyway; this keeps the table small.
func (h *Handler) Sweep(ctx context.Context) (int64, error) { return h.store.sweep(ctx) }

// browser returns the binding cookie's value, or "".
func (h *Handler) browser(r *http.Request) string {
	v, _ := h.kit.Binding(r, browserCookie)
	return v
}

// ensureBrowser returns the binding value, setting a new cookie if needed.
func (h *Handler) ensureBrowser(w http.ResponseWriter, r *http.Request) string {
	return h.kit.EnsureBinding(w, r, browserCookie, h.deps.TTL)
}

// checkPost guards every form post: same origin (when the browser says),
// the CSRF token of purpose for this browser's cookie, and the per-source
// limit. It answers itself and returns "" when the post is refused.
func (h *Handler) checkPost(w http.ResponseWriter, r *http.Request, purpose string) string {
	if ok, wait, first := h.limit.Allow(sourcelimit.Source(h.deps.ClientIP(r))); !ok {
		secs := sourcelimit.RetryAfter(w.Header(), wait)
		if first {
			h.log.Info("source rate limit", zap.String("endpoint", "register"), zap.String("source", sourcelimit.Source(h.deps.ClientIP(r))))
		}
		h.message(w, http.StatusTooManyRequests, message{Title: "Too many attempts",
			Message: "This address has sent erpgate too many registration steps in a short time.",
			Next:    "Wait " + seconds(secs) + ", then try again."})
		return ""
	}
	browser := h.browser(r)
	if h.kit.CrossOrigin(r) {
		h.message(w, http.StatusForbidden, message{Title: "This form came from another site",
			Message: "erpgate accepts the registration's forms only from its own pages.",
			Next:    "Open the registration page again and use its form.", Link: h.kit.URL("/register"), LinkText: "Start a registration"})
		return ""
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	err := r.ParseForm()
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		h.message(w, http.StatusRequestEntityTooLarge, message{Title: "This form is too large",
			Message: "erpgate's registration forms are far smaller than what was sent, so it was not read.",
			Next:    "Open the registration page again and use its form.", Link: h.kit.URL("/register"), LinkText: "Start a registration"})
		return ""
	}
	if err != nil || browser == "" || !pagekit.CheckCSRF(browser, purpose, r.PostForm.Get("csrf")) {
		h.message(w, http.StatusForbidden, message{Title: "This form has expired",
			Message: "erpgate could not match this form to your browser: its cookie is missing or the form is from an older page.",
			Next:    "Allow cookies for erpgate, open the registration page again and use its form.", Link: h.kit.URL("/register"), LinkText: "Start a registration"})
		return ""
	}
	return browser
}

// refuseFull answers a start refused because Deps.MaxPending registrations
// are waiting to be finished (full's *errFull): 503, since it is not this
// visitor's doing, with Retry-After until the first of them expires. The
// operator is told once per run of refusals; nothing of the visitor is
// stored (an audit row per refusal is what the bound keeps from growing).
func (h *Handler) refuseFull(w http.ResponseWriter, full *errFull) {
	wait := full.wait
	if wait <= 0 || wait > h.deps.TTL {
		wait = time.Minute
	}
	secs := sourcelimit.RetryAfter(w.Header(), wait)
	if h.atBound.CompareAndSwap(false, true) {
		h.log.Warn("registrations waiting to be finished are at their bound; new ones are refused until some finish or expire",
			zap.Int("waiting", full.waiting), zap.Int("bound", h.deps.MaxPending), zap.String("setting", "ERPGATE_REGISTRATION_MAX_PENDING"))
	}
	h.message(w, http.StatusServiceUnavailable, message{Title: "Too many registrations are waiting",
		Message: "Too many registrations are waiting to be finished on this erpgate, so yours could not begin. Nothing was saved.",
		Next:    "Try again in " + minutes(secs) + ". If this keeps happening, tell your erpgate operator.",
		Link:    h.kit.URL("/register"), LinkText: "Start a registration"})
}

// refuseNetwork answers a start refused because Deps.MaxPendingPerNetwork
// registrations started from its network are waiting to be finished, or
// hold their places (for failedStartHold) though their address did not
// answer as an ERP (full's *errNetworkFull): 429, with Retry-After until the first of them
// expires. Nothing of the visitor is stored, nor logged: the bound is the
// network's own doing.
func (h *Handler) refuseNetwork(w http.ResponseWriter, full *errNetworkFull) {
	wait := full.wait
	if wait <= 0 || wait > h.deps.TTL {
		wait = time.Minute
	}
	secs := sourcelimit.RetryAfter(w.Header(), wait)
	if full.unanswered > 0 {
		// Some of the network's places are held by starts whose address
		// did not answer as an ERP: nothing of them can be finished.
		h.message(w, http.StatusTooManyRequests, message{Title: "Too many registrations from your network",
			Message: "Too many registrations were started from your network, counting those of the last " + minutes(int(failedStartHold/time.Second)) + " whose address did not answer as an ERP, so yours could not begin. Nothing was saved.",
			Next:    "Check the ERP's address, then try again in " + minutes(secs) + ". If this keeps happening, tell your erpgate operator.",
			Link:    h.kit.URL("/register"), LinkText: "Start a registration"})
		return
	}
	h.message(w, http.StatusTooManyRequests, message{Title: "Too many registrations from your network",
		Message: "Too many registrations started from your network are waiting to be finished, so yours could not begin. Nothing was saved.",
		Next:    "Finish a registration already started from your network, or try again in " + minutes(secs) + ". If this keeps happening, tell your erpgate operator.",
		Link:    h.kit.URL("/register"), LinkText: "Start a registration"})
}

// minutes says secs in whole minutes, rounded up.
func minutes(secs int) string {
	if n := (secs + 59) / 60; n > 1 {
		return strconv.Itoa(n) + " minutes"
	}
	return "a minute"
}

func seconds(n int) string {
	if n == 1 {
		return "1 second"
	}
	return strconv.Itoa(n) + " seconds"
}

// message is the page of a step that cannot go on (or a plain notice),
// with a link to go on from.
type message struct {
	Title    string
	Message  string
	Causes   []string
	Next     string
	Link     string
	LinkText string
	// Form, when set, is a button that posts to FormAction (retrying the
	// proof) with CSRF.
	FormAction string
	FormButton string
	CSRF       string
	// FormTo is the form-action of the page when it has a form: erpgate,
	// and the ERP its answer redirects to.
	FormTo []string
	OK     bool
}

func (h *Handler) message(w http.ResponseWriter, status int, m message) {
	w.Header().Set("Cache-Control", "no-store")
	formTo := m.FormTo
	if formTo == nil {
		formTo = []string{"'self'"}
	}
	if err := h.kit.Render(w, status, h.pages.message, m, pagekit.Options{FormAction: formTo}); err != nil {
		h.log.Error("render registration page", zap.Error(err))
	}
}

// internal answers a failure of erpgate itself, with a reference the log
// carries too.
func (h *Handler) internal(w http.ResponseWriter, what string, err error) {
	ref := pagekit.NewReference()
	h.log.Error("registration failed", zap.String("step", what), zap.String("reference", ref), zap.Error(err))
	_ = h.kit.RenderError(w, http.StatusInternalServerError, pagekit.ErrorPage{Title: "Something went wrong",
		Message: "erpgate could not complete this step of the registration.",
		Next:    "Try again in a moment. If it keeps happening, tell your erpgate operator.", Reference: ref})
}

// unknown is the page of a registration that is not open in this browser:
// never existed, expired, or is another browser's. It says the same in
// each case, so a page never confirms that a registration exists.
func (h *Handler) unknown(w http.ResponseWriter) {
	h.message(w, http.StatusNotFound, message{Title: "This registration is not open",
		Message: "erpgate has no open registration at this address in this browser. A registration stays open for " + h.ttlText() + ", in the browser where it was started; nothing of one that expired was kept or activated.",
		Next:    "Start the registration again.", Link: h.kit.URL("/register"), LinkText: "Start a registration"})
}

// formActionTo is the form-action of a page whose form sends the browser
// on to the registration's ERP (CSP checks the redirect that answers a
// post against form-action too): erpgate and the ERP's origin.
func (h *Handler) formActionTo(p pendingReg) []string {
	u, err := url.Parse(p.BaseURL)
	if err != nil {
		return []string{"'self'"}
	}
	return []string{"'self'", u.Scheme + "://" + u.Host}
}

// ttlText says how long a registration stays open, in words.
func (h *Handler) ttlText() string {
	d := h.deps.TTL.Round(time.Minute)
	switch {
	case d == time.Hour:
		return "1 hour"
	case d > time.Hour && d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + " hours"
	}
	return strconv.Itoa(int(d/time.Minute)) + " minutes"
}

// linkID is how a registration's address names it: its id with a check
// value erpgate made (secrets.TagText), so that the address passes a
// source whose bound on links that lead nowhere someone else at a shared
// address spent.
func (h *Handler) linkID(id uuid.UUID) string { return secrets.TagText(id.String(), h.linkKeys[0]) }

// link is the address of registration id, or of one of its steps (step
// "/client"; "" for its page).
func (h *Handler) link(id uuid.UUID, step string) string {
	return h.kit.URL("/register/" + h.linkID(id) + step)
}

// parseID reads the registration id of the path, with its check value
// (tagged: it verified) or without (an address made before there were
// any, or whose check value verifies under no key configured now: one
// made under a key dropped since, right after a rotation, as the key
// rotation allows, while the registration is still open). An untagged id
// is looked up within the source's bound, as a made-up one is.
func (h *Handler) parseID(r *http.Request) (id uuid.UUID, tagged, ok bool) {
	text, tagged := secrets.TaggedText(r.PathValue("id"), h.linkKeys)
	id, err := uuid.Parse(text)
	if err != nil {
		return uuid.Nil, false, false
	}
	return id, tagged, true
}

// openRegistration loads the path's registration for this browser, or
// answers with the unknown page.
//
// An address whose check value erpgate made is looked up however spent
// its source's bound on links that lead nowhere is, and not charged:
// sources are shared (an office's NAT), and someone else there sending
// made-up links must not keep an administrator from their registration.
// One that finds nothing open in this browser is remembered and bounded
// from then on; addresses without a check value, and made-up ones, are
// looked up within the bound.
func (h *Handler) openRegistration(w http.ResponseWriter, r *http.Request, browser string) (pendingReg, bool) {
	id, tagged, ok := h.parseID(r)
	if !ok {
		h.unknown(w)
		return pendingReg{}, false
	}
	var charge func()
	if key := secrets.HashToken(r.PathValue("id")); tagged && !h.failedLinks.Has(key) {
		charge = func() { h.failedLinks.Add(key) }
	} else if charge, ok = h.admitLookup(w, r); !ok {
		return pendingReg{}, false
	}
	p, err := h.store.get(r.Context(), id, browser)
	if errors.Is(err, errUnknown) {
		charge()
		h.unknown(w)
		return pendingReg{}, false
	}
	if err != nil {
		h.internal(w, "load registration", err)
		return pendingReg{}, false
	}
	return p, true
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
		h.log.Info("source rate limit", zap.String("endpoint", "registration"), zap.String("source", refused.Source))
	}
	_ = h.kit.RenderTooManyLookups(w, refused.Wait)
	return nil, false
}
