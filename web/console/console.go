// Package console is the operator console at /console: sign-in with the
// admin token, a session, the navigation shared by its pages, and the
// guard that every console page sits behind (Guard). Its own pages are
// the sites (sites.go) and the live settings (settings.go); other
// packages add theirs with AddNav, Guard, Kit and Render.
//
// A session is a cookie signed with pagekit.Signer (purpose "console", 8
// hours) naming a session row in Postgres (platform/store/consolesession). Every
// request checks the row, so signing out ends the cookie on every replica,
// a stolen copy included. Every state-changing request (any method but GET
// and HEAD) under the guard must carry the session's CSRF token in the
// form field "csrf", so every form is protected by construction. Every
// action is an admin_events audit event naming the session
// (siteadmin.OperatorSession).
package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/consolesession"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// SessionLifetime is how long a console session lasts.
const SessionLifetime = 8 * time.Hour

// Purpose is the signer purpose of the session cookie. A value signed for
// any other purpose (a site owner's cookie) is refused.
const Purpose = "console"

// KeyPurpose names the key the session cookies are signed with, derived
// from the encryption keys (secrets.Keyring.DeriveKey) for this use only.
const KeyPurpose = "erpgate console session cookie"

// SigningKey is the key session cookies are signed with: sessionKey (the
// key derived for KeyPurpose) bound to the admin token the sessions are
// opened with, so that replacing a token that leaked ends every session
// opened with it.
func SigningKey(sessionKey []byte, adminToken secrets.Secret) []byte {
	token := sha256.Sum256([]byte(adminToken.Reveal()))
	m := hmac.New(sha256.New, sessionKey)
	m.Write([]byte("erpgate console session\x00"))
	m.Write(token[:])
	return m.Sum(nil)
}

// Cookie names (with __Host- over https).
const (
	sessionCookie = "erpgate_console"
	signInCookie  = "erpgate_console_signin"
)

// maxFormBytes bounds a console form's body.
const maxFormBytes = 256 << 10

// csrfField is the form field every console form carries.
const csrfField = "csrf"

// DefaultSignInLimit bounds sign-in attempts per source: 10 at once, then
// one every 6 seconds.
var DefaultSignInLimit = sourcelimit.Limit{Burst: 10, Every: 6 * time.Second}

// Deps is what the console needs from the rest of erpgate.
type Deps struct {
	// PublicBaseURL is the configured public base URL.
	PublicBaseURL string
	// AdminToken is the operator's token (ERPGATE_ADMIN_TOKEN); unset, no
	// one can sign in.
	AdminToken secrets.Secret
	// SessionKey signs the session cookies, bound to AdminToken
	// (SigningKey): at least 32 bytes, derived for this use only
	// (KeyPurpose).
	SessionKey []byte
	Sessions   *consolesession.Store
	// Admin records the audit events and carries out site actions and
	// settings changes.
	Admin *siteadmin.Service
	// Store lists the sites; Settings holds the live settings.
	Store    *sites.Store
	Settings *livesettings.Store
	// ClientIP tells where a request comes from (the trusted-proxy rule).
	ClientIP func(r *http.Request) string
	// ProxySightings is this replica's latest request of each kind that
	// makes every visitor one address: a forwarding header from an
	// address that is not a trusted proxy, or a trusted proxy naming the
	// client in a header erpgate does not read; nil or empty: none.
	ProxySightings func() []sourcelimit.Sighting
	// SignInLimit bounds sign-in attempts per source; zero fields take
	// DefaultSignInLimit's.
	SignInLimit sourcelimit.Limit
	Logger      *zap.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// NavItem is one link of the console's navigation.
type NavItem struct {
	Label, Path string
}

// Console serves the operator console.
type Console struct {
	deps    Deps
	kit     *pagekit.Kit
	signer  *pagekit.Signer
	limiter *sourcelimit.Limiter
	log     *zap.Logger
	nav     []NavItem
	pages   pages
}

//go:embed templates/*.html
var files embed.FS

type pages struct {
	signIn *pagekit.Page
	pageSet
}

// New builds the console. It panics on a wiring mistake.
func New(d Deps) *Console {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.SignInLimit.Burst <= 0 {
		d.SignInLimit.Burst = DefaultSignInLimit.Burst
	}
	if d.SignInLimit.Every <= 0 {
		d.SignInLimit.Every = DefaultSignInLimit.Every
	}
	if d.Sessions == nil || d.Admin == nil || d.ClientIP == nil || d.Store == nil || d.Settings == nil {
		panic("console: New: Sessions, Admin, Store, Settings and ClientIP are required")
	}
	base, err := pagekit.New(d.PublicBaseURL)
	if err != nil {
		panic(fmt.Sprintf("console: %v", err))
	}
	kit, err := base.WithPartials(files, "templates/partials.html")
	if err != nil {
		panic(err)
	}
	if len(d.SessionKey) < 32 {
		panic("console: New: SessionKey must be at least 32 bytes")
	}
	c := &Console{
		deps: d, kit: kit, signer: pagekit.NewSigner(SigningKey(d.SessionKey, d.AdminToken)),
		limiter: sourcelimit.New(d.SignInLimit, d.Now), log: d.Logger.Named("console"),
	}
	c.pages.signIn = kit.MustParse(files, "templates/sign_in.html")
	c.parsePages()
	return c
}

// AddNav adds a link to the console's navigation, after the console's own.
// Call it before the console serves.
func (c *Console) AddNav(label, path string) { c.nav = append(c.nav, NavItem{label, path}) }

// Kit is the page kit of console pages: its pages may use the console's
// partials ({{template "console_flash" .}}, and "nav"/"bodyclass" are
// defined), and are rendered with Render.
func (c *Console) Kit() *pagekit.Kit { return c.kit }

// Register mounts the console's routes on e.
func (c *Console) Register(e *echo.Echo) {
	e.GET("/console", echo.WrapHandler(http.HandlerFunc(c.home)))
	e.GET("/console/", echo.WrapHandler(http.HandlerFunc(c.home)))
	e.GET("/console/sign-in", echo.WrapHandler(http.HandlerFunc(c.signInForm)))
	e.POST("/console/sign-in", echo.WrapHandler(http.HandlerFunc(c.signIn)))
	e.POST("/console/sign-out", echo.WrapHandler(c.Guard(http.HandlerFunc(c.signOut))))
	c.registerPages(e)
}

func (c *Console) guardEcho(h echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		var err error
		c.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ec.SetRequest(r)
			err = h(ec)
		})).ServeHTTP(ec.Response(), ec.Request())
		return err
	}
}

// Session is the operator's console session of a request under Guard.
type Session struct {
	// Ref names the session in audit events.
	Ref string
	// csrf is the token the session's forms carry.
	csrf string
}

type sessionKey struct{}

// SessionOf returns the console session of a request under Guard.
func SessionOf(r *http.Request) (Session, bool) {
	s, ok := r.Context().Value(sessionKey{}).(Session)
	return s, ok
}

// Actor is the audit actor of a request under Guard: the operator, in
// its console session.
func Actor(r *http.Request) siteadmin.Actor {
	s, _ := SessionOf(r)
	return siteadmin.OperatorSession(s.Ref)
}

// CSRF is the token a console form under Guard carries in a hidden field
// named "csrf" ({{template "console_csrf" .}} writes it).
func CSRF(r *http.Request) string {
	s, _ := SessionOf(r)
	return s.csrf
}

// noticeQuery is q, the query of the redirect after an action, with the
// check value of its notice for this console session
// (pagekit.NoticeCheck): the page shows the notice (noticeChecked) only
// with it, so that a link anyone could send the operator cannot have the
// console say that something was done ("Site acme is deleted") when
// nothing was.
func noticeQuery(r *http.Request, q url.Values) string {
	q.Set("check", pagekit.NoticeCheck(CSRF(r), noticeOf(q)))
	return q.Encode()
}

// noticeChecked reports whether the notice q names carries this
// session's check value.
func noticeChecked(r *http.Request, q url.Values) bool {
	return pagekit.CheckNotice(CSRF(r), noticeOf(q), q.Get("check"))
}

// noticeOf is what a notice's check value covers: its action and what it
// names.
func noticeOf(q url.Values) string {
	return "console\x00" + q.Get("done") + "\x00" + q.Get("site") + "\x00" + q.Get("setting")
}

// Guard lets a request through only in an open console session: a
// session cookie signed for the console, not expired, whose session has
// not been ended. A page request without one is sent to the sign-in page;
// any other is refused. Any request but GET and HEAD must also carry the
// session's CSRF token in the form field "csrf".
func (c *Console) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, ok, err := c.checkSession(r)
		if err != nil {
			c.unavailable(w)
			return
		}
		if !ok {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				http.Redirect(w, r, c.kit.URL("/console/sign-in"), http.StatusSeeOther)
				return
			}
			c.renderError(w, http.StatusUnauthorized, pagekit.ErrorPage{
				Title:   "You are not signed in to the console",
				Message: "Your console session has ended or was never started, so nothing was changed.",
				Next:    "Sign in to the console again and repeat what you were doing.",
			})
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if !pagekit.CheckCSRF(sess.cookie, Purpose, r.PostFormValue(csrfField)) {
				c.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
					Title:   "This form cannot be accepted",
					Message: "The form did not come from your console session, so nothing was changed.",
					Next:    "Open the console page again and repeat what you were doing.",
				})
				return
			}
		}
		ctx := context.WithValue(r.Context(), sessionKey{}, Session{Ref: sess.Ref, csrf: pagekit.CSRFToken(sess.cookie, Purpose)})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// openSession is a checked session with the cookie value it came in.
type openSession struct {
	consolesession.Session
	cookie string
}

// session checks the request's session cookie: signature, purpose,
// expiry, and that the session is still open in Postgres.
func (c *Console) session(w http.ResponseWriter, r *http.Request) (openSession, bool) {
	sess, ok, _ := c.checkSession(r)
	return sess, ok
}

// checkSession is session, with the error when the session could not be
// checked (the database is unavailable).
func (c *Console) checkSession(r *http.Request) (openSession, bool, error) {
	raw, ok := c.kit.ReadCookie(r, sessionCookie)
	if !ok {
		return openSession{}, false, nil
	}
	id, ok := c.signer.Verify(Purpose, raw, c.deps.Now())
	if !ok {
		return openSession{}, false, nil
	}
	sess, err := c.deps.Sessions.Check(r.Context(), id)
	if errors.Is(err, consolesession.ErrEnded) {
		return openSession{}, false, nil
	}
	if err != nil {
		c.log.Warn("check console session", zap.Error(err))
		return openSession{}, false, err
	}
	return openSession{Session: sess, cookie: raw}, true, nil
}

func (c *Console) home(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.session(w, r); ok {
		http.Redirect(w, r, c.kit.URL(c.nav[0].Path), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, c.kit.URL("/console/sign-in"), http.StatusSeeOther)
}

// View is what every console page renders: the navigation, the session's
// CSRF token, a notice after an action, and the page's own data.
type View struct {
	Nav     []NavLink
	CSRF    string
	Session string
	Flash   string
	Data    any
}

// NavLink is a navigation link as rendered.
type NavLink struct {
	Label, URL string
	Current    bool
}

// Render writes a console page for a request under Guard: data is the
// page's own (.Data in the template); flash, if not empty, is a notice
// shown above it.
func (c *Console) Render(w http.ResponseWriter, r *http.Request, status int, page *pagekit.Page, flash string, data any) {
	s, _ := SessionOf(r)
	v := View{CSRF: s.csrf, Session: s.Ref, Flash: flash, Data: data}
	for _, n := range c.nav {
		v.Nav = append(v.Nav, NavLink{Label: n.Label, URL: c.kit.URL(n.Path), Current: r.URL.Path == n.Path || len(r.URL.Path) > len(n.Path) && r.URL.Path[:len(n.Path)+1] == n.Path+"/"})
	}
	if err := c.kit.Render(w, status, page, v, pagekit.Options{FormAction: []string{"'self'"}}); err != nil {
		c.log.Warn("render console page", zap.Error(err))
	}
}

func (c *Console) renderError(w http.ResponseWriter, status int, p pagekit.ErrorPage) {
	if err := c.kit.RenderError(w, status, p); err != nil {
		c.log.Warn("render console error page", zap.Error(err))
	}
}

// signInView is the sign-in page's data.
type signInView struct {
	CSRF, Error string
}

func (c *Console) signInForm(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.session(w, r); ok {
		http.Redirect(w, r, c.kit.URL(c.nav[0].Path), http.StatusSeeOther)
		return
	}
	c.renderSignIn(w, r, http.StatusOK, "")
}

// renderSignIn shows the sign-in form with a fresh pre-session cookie
// that its CSRF token is bound to.
func (c *Console) renderSignIn(w http.ResponseWriter, r *http.Request, status int, problem string) {
	value := uuid.NewString() + uuid.NewString()
	http.SetCookie(w, c.kit.Cookie(signInCookie, value, 15*time.Minute))
	if err := c.kit.Render(w, status, c.pages.signIn, View{Data: signInView{CSRF: pagekit.CSRFToken(value, "console sign-in"), Error: problem}},
		pagekit.Options{FormAction: []string{"'self'"}}); err != nil {
		c.log.Warn("render console sign-in", zap.Error(err))
	}
}

// signInAttempt names a sign-in that has no session yet in audit events.
var signInAttempt = siteadmin.Actor{Kind: siteadmin.ActorOperator, Name: "console_sign_in"}

func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	source := sourcelimit.Source(c.deps.ClientIP(r))
	if ok, wait, first := c.limiter.Allow(source); !ok {
		secs := sourcelimit.RetryAfter(w.Header(), wait)
		if first {
			c.log.Info("source rate limit", zap.String("endpoint", "console_sign_in"), zap.String("source", source))
			c.deps.Admin.RecordAnonymousRefusal(r.Context(), signInAttempt, uuid.Nil, "", siteadmin.ActionConsoleSignIn, "source_limit",
				map[string]any{"source": source}, siteadmin.Refusal(siteadmin.Invalid, "too many sign-in attempts from this source"))
		}
		c.renderError(w, http.StatusTooManyRequests, pagekit.ErrorPage{
			Title:   "Too many sign-in attempts",
			Message: "This address has tried to sign in to the console too often.",
			Next:    "Wait " + strconv.Itoa(secs) + " seconds, then try again with the admin token.",
		})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	pre, ok := c.kit.ReadCookie(r, signInCookie)
	if !ok || !pagekit.CheckCSRF(pre, "console sign-in", r.PostFormValue(csrfField)) {
		c.renderError(w, http.StatusForbidden, pagekit.ErrorPage{
			Title:   "This form cannot be accepted",
			Message: "The sign-in form did not come from this browser's visit to the console, or it is too old.",
			Next:    "Open the console's sign-in page again and sign in from there.",
		})
		return
	}
	token := r.PostFormValue("token")
	if !c.deps.AdminToken.IsSet() || !secrets.ConstantTimeEqual(token, c.deps.AdminToken.Reveal()) {
		// Anyone can guess, from many addresses: the guesses of a minute
		// are one row that counts them (each is logged with its source).
		c.deps.Admin.RecordAnonymousRefusal(r.Context(), signInAttempt, uuid.Nil, "", siteadmin.ActionConsoleSignIn, "wrong_token",
			map[string]any{"source": source}, siteadmin.Refusal(siteadmin.Invalid, "the admin token is not valid"))
		c.renderSignIn(w, r, http.StatusUnauthorized, "That is not the admin token. Check it and try again.")
		return
	}
	sess, err := c.deps.Sessions.Open(r.Context(), source, SessionLifetime)
	if err != nil {
		c.log.Error("open console session", zap.Error(err))
		c.renderError(w, http.StatusServiceUnavailable, pagekit.ErrorPage{
			Title:     "The console cannot sign you in right now",
			Message:   "erpgate could not start a console session.",
			Next:      "Try again in a moment. If it keeps happening, the server log has the details.",
			Reference: pagekit.NewReference(),
		})
		return
	}
	c.deps.Admin.Record(r.Context(), siteadmin.OperatorSession(sess.Ref), uuid.Nil, "", siteadmin.ActionConsoleSignIn,
		map[string]any{"source": source}, nil)
	http.SetCookie(w, c.kit.Cookie(signInCookie, "", 0))
	http.SetCookie(w, c.kit.Cookie(sessionCookie, c.signer.Sign(Purpose, sess.ID, sess.Expires), SessionLifetime))
	http.Redirect(w, r, c.kit.URL(c.nav[0].Path), http.StatusSeeOther)
}

func (c *Console) signOut(w http.ResponseWriter, r *http.Request) {
	sess, _ := c.session(w, r)
	if err := c.deps.Sessions.End(r.Context(), sess.ID); err != nil {
		c.log.Error("end console session", zap.Error(err))
		c.deps.Admin.Record(r.Context(), Actor(r), uuid.Nil, "", siteadmin.ActionConsoleSignOut, nil, err)
		c.renderError(w, http.StatusServiceUnavailable, pagekit.ErrorPage{
			Title:   "You are still signed in",
			Message: "erpgate could not end your console session.",
			Next:    "Try signing out again in a moment.",
		})
		return
	}
	c.deps.Admin.Record(r.Context(), Actor(r), uuid.Nil, "", siteadmin.ActionConsoleSignOut, nil, nil)
	http.SetCookie(w, c.kit.Cookie(sessionCookie, "", 0))
	http.Redirect(w, r, c.kit.URL("/console/sign-in"), http.StatusSeeOther)
}
