package erpadmin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/logbuffer"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/web/pagekit"
)

// The errors a Purpose's Done receives. Each names what went wrong in
// words a purpose may build its page on; the detail is logged here.
var (
	// ErrCancelled: the person cancelled the sign-in at the ERP, or the
	// ERP refused the authorization request for a reason other than the
	// client.
	ErrCancelled = errors.New("erpadmin: the sign-in at the ERP was cancelled")
	// ErrClientRefused: the ERP refused the OAuth client (an unknown
	// client id, a wrong secret, another redirect URI) or its code.
	ErrClientRefused = errors.New("erpadmin: the ERP refused the OAuth client")
	// ErrUnreachable: the ERP could not be reached, failed, or answered
	// unlike the kind of ERP the target is.
	ErrUnreachable = errors.New("erpadmin: the ERP could not be reached")
	// ErrNoIdentity: the sign-in worked but the ERP did not say who the
	// person is.
	ErrNoIdentity = errors.New("erpadmin: the ERP did not say who signed in")
	// ErrAdminCheck: the ERP's answer to the administrator check could not
	// be read (connector.AdminProof returned an error).
	ErrAdminCheck = errors.New("erpadmin: the administrator check could not be completed")
	// ErrState: the sign-in is unknown, was already used, has expired, was
	// opened in another browser than the one that started it, or its
	// target is gone (Target failed; the purpose's error is wrapped too).
	// With another browser, Done gets an empty ref: the sign-in is not
	// this browser's.
	ErrState = errors.New("erpadmin: this sign-in is unknown, used, expired or from another browser")
	// ErrInternal: erpgate itself failed (its database, a wiring mistake).
	ErrInternal = errors.New("erpadmin: internal error")
)

// Deps is what the service needs from the rest of erpgate.
type Deps struct {
	Pool     *pgxpool.Pool
	Keyring  *secrets.Keyring
	Registry *connector.Registry
	// HTTPClient returns the outbound client for site, authorised with
	// auth (nil for none). Every ERP request goes through it.
	HTTPClient func(site connector.Site, auth connector.Authorizer) *http.Client
	// PublicBaseURL is erpgate's public base URL; the redirect URI is
	// PublicBaseURL + /oauth/callback.
	PublicBaseURL string
	Logger        *zap.Logger
	// TTL is how long a sign-in may take; default 10 minutes.
	TTL time.Duration
	// Timeout bounds the ERP round trips of a callback; default 30 s.
	Timeout time.Duration
	// Now is the clock; nil is time.Now. Tests move it.
	Now func() time.Time
	// Lookups bounds, per source, the links naming nothing that the
	// callback looks up (shared with the doors that take tokens); nil: none.
	Lookups *sourcelimit.Lookups
}

// browserCookie binds a proof to the browser that began it (a pagekit
// cookie: __Host- over https, HttpOnly, SameSite=Lax so that the ERP's
// redirect back carries it).
const browserCookie = "erpgate_erpadmin"

// New returns the service. It panics when a required dependency is
// missing (a wiring mistake found at start-up).
func New(deps Deps) *Service {
	switch {
	case deps.Pool == nil || deps.Keyring == nil || deps.Registry == nil || deps.HTTPClient == nil:
		panic("erpadmin: New: Pool, Keyring, Registry and HTTPClient are required")
	case deps.PublicBaseURL == "":
		panic("erpadmin: New: PublicBaseURL is required")
	}
	if deps.Logger == nil {
		deps.Logger = zap.NewNop()
	}
	if deps.TTL <= 0 {
		deps.TTL = 10 * time.Minute
	}
	if deps.Timeout <= 0 {
		deps.Timeout = 30 * time.Second
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	kit, err := pagekit.New(deps.PublicBaseURL)
	if err != nil {
		panic("erpadmin: New: " + err.Error())
	}
	return &Service{
		deps:     deps,
		log:      deps.Logger.Named("erpadmin"),
		kit:      kit,
		store:    &store{pool: deps.Pool, keys: deps.Keyring, now: deps.Now},
		purposes: map[string]Purpose{},
		// Checked under every key of the ring, so that a sign-in begun
		// before a rotation comes back after it.
		stateKeys: deps.Keyring.DeriveKeys(stateKeyPurpose),
	}
}

// RedirectURI is the redirect URI whose path is callbackPath: the one an
// ERP administrator configures on the OAuth client.
func (s *Service) RedirectURI(callbackPath string) string { return s.kit.URL(callbackPath) }

// Handle registers a purpose. It panics on a duplicate or empty name, or a
// purpose without Target or Done (wiring mistakes).
func (s *Service) Handle(p Purpose) {
	if p.Name == "" || p.Target == nil || p.Done == nil {
		panic("erpadmin: Handle: a purpose needs a Name, Target and Done")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.purposes[p.Name]; dup {
		panic(fmt.Sprintf("erpadmin: Handle: purpose %q registered twice", p.Name))
	}
	s.purposes[p.Name] = p
}

func (s *Service) purpose(name string) (Purpose, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.purposes[name]
	return p, ok
}

// oauthOf returns the connector's sign-in and, unless identityOnly, its
// administrator check for kind.
func (s *Service) oauthOf(kind string, identityOnly bool) (connector.UpstreamOAuth, connector.AdminProof, error) {
	conn, ok := s.deps.Registry.Get(kind)
	if !ok {
		return nil, nil, fmt.Errorf("erpadmin: no connector for kind %q", kind)
	}
	oauth, ok := conn.(connector.UpstreamOAuth)
	if !ok {
		return nil, nil, fmt.Errorf("erpadmin: the %s connector has no OAuth sign-in", kind)
	}
	if identityOnly {
		return oauth, nil, nil
	}
	proof, ok := conn.(connector.AdminProof)
	if !ok {
		return nil, nil, fmt.Errorf("erpadmin: the %s connector cannot check administrators", kind)
	}
	return oauth, proof, nil
}

// Supports reports whether a site of kind can be proven administered here:
// its connector signs people in with OAuth and checks administrators.
func (s *Service) Supports(kind string) bool {
	_, _, err := s.oauthOf(kind, false)
	return err == nil
}

// Sweep removes expired proofs (making a proof sweeps too; a replica
// where none are made needs this). It returns how many went.
func (s *Service) Sweep(ctx context.Context) (int64, error) { return s.store.sweep(ctx) }

// Begin starts a proof for purpose and ref in this browser, and redirects
// it to the ERP's sign-in. An error means nothing was sent to the browser:
// the purpose was not registered, Target failed (its error is returned
// as is), the connector cannot prove administrators, or the database
// failed.
func (s *Service) Begin(w http.ResponseWriter, r *http.Request, purpose, ref string) error {
	p, ok := s.purpose(purpose)
	if !ok {
		return fmt.Errorf("erpadmin: Begin: purpose %q is not registered", purpose)
	}
	target, err := p.Target(r.Context(), ref)
	if err != nil {
		return err
	}
	oauth, _, err := s.oauthOf(target.Kind, p.IdentityOnly)
	if err != nil {
		return err
	}
	browser := s.kit.EnsureBinding(w, r, browserCookie, s.deps.TTL)
	state, err := secrets.NewTaggedToken(stateTokenPrefix, s.stateKeys[0])
	if err != nil {
		return fmt.Errorf("erpadmin: state: %w", err)
	}
	verifier, challenge := newPKCE()
	if err := s.store.create(r.Context(), pending{
		State: state.Value.Reveal(), Browser: browser, Purpose: purpose, Ref: ref,
		Verifier: verifier, ExpiresAt: s.deps.Now().Add(s.deps.TTL),
	}); err != nil {
		return err
	}
	if target.CallbackPath == "" {
		return errors.New("erpadmin: Begin: the target has no redirect URI")
	}
	to, err := oauth.AuthorizationURL(target.Site, target.Client, connector.AuthorizationRequest{
		RedirectURI: s.RedirectURI(target.CallbackPath), State: state.Value.Reveal(), CodeChallenge: challenge,
	})
	if err != nil {
		return fmt.Errorf("erpadmin: authorization URL: %w", err)
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// ServeCallback serves /oauth/callback for a state that begins with
// StatePrefix. The state is claimed once, whatever follows; then the code
// is exchanged, the person identified and (unless the purpose is
// IdentityOnly) the administrator check read, all as them, and the
// purpose's Done continues in the browser.
func (s *Service) ServeCallback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	state := q.Get("state")
	// A state erpgate made (its check value verifies) is looked up
	// however spent the source's bound on links that lead nowhere is,
	// uncharged: sources are shared (an office's NAT), and someone else
	// there sending made-up ones must not keep a person who signed in at
	// their ERP from coming back. One that finds nothing (used, expired)
	// is remembered and bounded from then on, like a made-up one.
	var charge func()
	if key := secrets.HashToken(state); secrets.TokenTagged(stateTokenPrefix, state, s.stateKeys) && !s.failedStates.Has(key) {
		charge = func() { s.failedStates.Add(key) }
	} else {
		var ok bool
		if charge, ok = s.admitLookup(w, r); !ok {
			return
		}
	}
	claimed, err := s.store.claim(ctx, state)
	switch {
	case errors.Is(err, errNoProof):
		charge()
		s.log.Info("erpadmin callback with an unknown or used state")
		s.unknownState(w)
		return
	case err != nil:
		ref := pagekit.NewReference()
		s.log.Error("erpadmin: claim proof", zap.String("reference", ref), zap.Error(err))
		_ = s.kit.RenderError(w, http.StatusInternalServerError, pagekit.ErrorPage{Title: "Something went wrong",
			Message: "erpgate could not finish this sign-in.", Next: "Start again in a moment.", Reference: ref})
		return
	}
	p, ok := s.purpose(claimed.Purpose)
	if !ok {
		s.log.Error("erpadmin: callback for a purpose this replica does not serve", zap.String("purpose", claimed.Purpose))
		s.unknownState(w)
		return
	}
	log := s.log.With(zap.String("purpose", claimed.Purpose), zap.String("ref", claimed.Ref))
	done := func(ref string, proof Proof, err error) {
		w.Header().Set("Cache-Control", "no-store")
		p.Done(w, r, ref, proof, err)
	}
	if browser, ok := s.browser(r); !ok || !secrets.ConstantTimeEqual(hashString(browser), claimed.BrowserHash) {
		// The state has left the browser that began the proof: it is
		// spent now, for every browser.
		log.Warn("erpadmin callback opened in another browser; the sign-in was ended")
		done("", Proof{}, ErrState)
		return
	}
	if !s.deps.Now().Before(claimed.ExpiresAt) {
		log.Info("erpadmin callback after the sign-in expired")
		done(claimed.Ref, Proof{}, ErrState)
		return
	}
	if e := q.Get("error"); e != "" || q.Get("code") == "" {
		log.Info("ERP refused or cancelled the sign-in", zap.String("erp_error", connector.OAuthErrorCode(e)))
		if e == "invalid_client" || e == "unauthorized_client" || e == "invalid_request" {
			done(claimed.Ref, Proof{}, ErrClientRefused)
			return
		}
		done(claimed.Ref, Proof{}, ErrCancelled)
		return
	}
	proof, err := s.prove(ctx, p, claimed, q.Get("code"), r.URL.Path, log)
	done(claimed.Ref, proof, err)
}

// prove exchanges the code, identifies the person and, unless the purpose
// is IdentityOnly, reads the administrator check.
func (s *Service) prove(ctx context.Context, p Purpose, claimed pending, code, path string, log *zap.Logger) (Proof, error) {
	target, err := p.Target(ctx, claimed.Ref)
	if err != nil {
		log.Info("erpadmin target is gone", zap.Error(err))
		return Proof{}, fmt.Errorf("%w: %w", ErrState, err)
	}
	if path != target.CallbackPath {
		// Another ERP sent this code back, with this sign-in's state: it
		// must not go to the target's ERP, which may be an attacker's.
		log.Warn("erpadmin callback at another redirect URI than its target's; the sign-in was ended", logbuffer.SentPath(path)...)
		return Proof{}, fmt.Errorf("%w: answered at another redirect URI", ErrState)
	}
	oauth, check, err := s.oauthOf(target.Kind, p.IdentityOnly)
	if err != nil {
		log.Error("erpadmin: connector", zap.Error(err))
		return Proof{}, ErrInternal
	}
	uctx, cancel := context.WithTimeout(ctx, s.deps.Timeout)
	defer cancel()
	tok, err := oauth.ExchangeCode(uctx, target.Site, target.Client, s.deps.HTTPClient(target.Site, nil),
		code, s.RedirectURI(target.CallbackPath), claimed.Verifier.Reveal())
	if err != nil {
		log.Info("ERP code exchange failed", zap.Error(err))
		return Proof{}, exchangeError(err)
	}
	authed := s.deps.HTTPClient(target.Site, oauth.TokenAuthorizer(tok.AccessToken))
	user, err := oauth.Identify(uctx, target.Site, authed)
	if err != nil || user.ID == "" {
		log.Info("ERP user lookup failed", zap.Error(err))
		if unreachable(err) {
			return Proof{}, ErrUnreachable
		}
		return Proof{}, ErrNoIdentity
	}
	if p.IdentityOnly {
		log.Info("erpadmin identity", zap.Bool("identity_only", true))
		return Proof{User: user}, nil
	}
	answer, err := check.CheckAdmin(uctx, target.Site, authed, user)
	if err != nil {
		log.Info("ERP administrator check failed", zap.Error(err))
		return Proof{User: user}, ErrAdminCheck
	}
	log.Info("erpadmin proof", zap.Bool("admin", answer.Admin), zap.String("evidence", answer.Evidence))
	proof := Proof{User: user, Check: answer, Token: tok.AccessToken, Refresh: tok.RefreshToken}
	if tok.ExpiresIn > 0 {
		// The ERP's clock, not the one Deps.Now moves in tests.
		proof.Expires = time.Now().Add(tok.ExpiresIn)
	}
	return proof, nil
}

// ErrTokenRefused: CheckAgain's ERP did not accept the person's token any
// more (revoked, expired: 401 or 403 to it).
var ErrTokenRefused = errors.New("erpadmin: the ERP no longer accepts the sign-in token")

// CheckAgain asks the ERP of site (of kind) once more, with token, the
// access token user signed in with, whether they administer it: the
// connector's administrator check, through the outbound transport, within
// Deps.Timeout. An ERP that refuses the token is ErrTokenRefused; one
// whose answer cannot be read (unreachable, 5xx, not the ERP's) is
// ErrUnreachable. Neither error carries the token or the ERP's words.
func (s *Service) CheckAgain(ctx context.Context, kind string, site connector.Site, user string, token secrets.Secret) (connector.AdminCheck, error) {
	oauth, check, err := s.oauthOf(kind, false)
	if err != nil {
		return connector.AdminCheck{}, err
	}
	uctx, cancel := context.WithTimeout(ctx, s.deps.Timeout)
	defer cancel()
	answer, err := check.CheckAdmin(uctx, site, s.deps.HTTPClient(site, oauth.TokenAuthorizer(token)), connector.UpstreamUser{ID: user})
	if err != nil {
		s.log.Info("ERP administrator check asked again failed", zap.String("site_slug", site.Slug), zap.Error(err))
		var te *toolerr.Error
		if errors.As(err, &te) && (te.Code == toolerr.AuthExpired || te.Code == toolerr.PermissionDenied) {
			return connector.AdminCheck{}, ErrTokenRefused
		}
		return connector.AdminCheck{}, ErrUnreachable
	}
	s.log.Info("erpadmin check asked again", zap.String("site_slug", site.Slug), zap.Bool("admin", answer.Admin), zap.String("evidence", answer.Evidence))
	return answer, nil
}

// exchangeError sorts a failed code exchange: the ERP refused the client
// or the code, or it could not be asked.
func exchangeError(err error) error {
	if errors.Is(err, connector.ErrRefreshTokenDead) {
		return ErrClientRefused
	}
	var te *toolerr.Error
	if errors.As(err, &te) && (te.Code == toolerr.AuthExpired || te.Code == toolerr.PermissionDenied) {
		return ErrClientRefused
	}
	return ErrUnreachable
}

// unreachable reports whether err says the ERP could not be asked.
func unreachable(err error) bool {
	var te *toolerr.Error
	if errors.As(err, &te) {
		switch te.Code {
		case toolerr.UpstreamUnavailable, toolerr.UpstreamTimeout, toolerr.RateLimited:
			return true
		}
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded)
}

// unknownState is the page of a callback whose state is unknown or used:
// no purpose can be named, so this package answers itself.
func (s *Service) unknownState(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	_ = s.kit.RenderError(w, http.StatusBadRequest, pagekit.ErrorPage{
		Title:   "This sign-in cannot be finished",
		Message: "erpgate does not know this sign-in: it was already finished, it expired, or the link was changed.",
		Next:    "Go back to the page where you started and start again.",
	})
}

func (s *Service) browser(r *http.Request) (string, bool) { return s.kit.Binding(r, browserCookie) }

// newPKCE returns a PKCE verifier and its S256 challenge.
func newPKCE() (secrets.Secret, string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	verifier := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return secrets.Secret(verifier), base64.RawURLEncoding.EncodeToString(sum[:])
}

// admitLookup lets a request look up what its link names within its
// source's bound of lookups that find nothing (Deps.Lookups): anyone may
// send a made-up link, and each costs a query. Over the bound it answers
// 429 and returns false; charge is to be called when nothing was found.
func (s *Service) admitLookup(w http.ResponseWriter, r *http.Request) (charge func(), ok bool) {
	charge, err := s.deps.Lookups.For(r)()
	var refused *sourcelimit.LookupsRefused
	if !errors.As(err, &refused) {
		return charge, true
	}
	if refused.First {
		s.log.Info("source rate limit", zap.String("endpoint", "erpadmin callback"), zap.String("source", refused.Source))
	}
	_ = s.kit.RenderTooManyLookups(w, refused.Wait)
	return nil, false
}
