package authserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/logbuffer"
)

// upstreamTimeout bounds the ERP round trips of one sign-in step.
const upstreamTimeout = 30 * time.Second

// defaultUpstreamLifetime is assumed when an ERP states no token lifetime;
// both Frappe and Acumatica issue one-hour tokens.
const defaultUpstreamLifetime = time.Hour

func connectorAuthorizationRequest(redirectURI, state, challenge string) connector.AuthorizationRequest {
	return connector.AuthorizationRequest{RedirectURI: redirectURI, State: state, CodeChallenge: challenge}
}

// serveCallback is where the ERP sends the user back. The state is claimed
// once (it is single-use, bound to this browser and expires with the
// flow); then the code is exchanged, the user identified and the access
// gate read, all as the user.
func (s *Server) serveCallback(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	flowID := q.Get("state")
	charge, ok := s.admitFlowLookup(w, r, flowID)
	if !ok {
		return
	}
	browser, ok := s.browserID(r)
	if !ok {
		s.burnFlow(ctx, w, flowID, charge)
		return
	}
	flow, err := s.deps.Store.StepFlow(ctx, flowID, browser, storage.FlowStep{From: storage.StageERP, To: storage.StageConsent,
		ERPCode: q.Get("code")})
	if errors.Is(err, storage.ErrFlowWrongBrowser) {
		s.burnFlow(ctx, w, flowID, charge)
		return
	}
	if errors.Is(err, storage.ErrERPCodeReused) {
		// Another sign-in was given this code: on the shared redirect URI
		// another site's ERP may have been handed it, and brings it back
		// here to finish a sign-in of its own as the person it was for.
		s.endFlow(ctx, flowID)
		s.recordEvent(ctx, storage.AuthEvent{Kind: storage.EventLoginDenied, Reason: "code_reused"})
		s.log.Warn("sign-in answered with an ERP code another sign-in was given; ended")
		s.renderMessage(w, http.StatusBadRequest, messagePage{Title: "This sign-in code was already used",
			Message: "The ERP's sign-in code in this link was already used for another sign-in, so erpgate has ended this one.",
			Next:    "Go back to your AI client and connect again. If you did not start this sign-in yourself, tell your administrator."})
		return
	}
	if err != nil {
		chargeFlowRefusal(charge, err)
		s.flowError(w, err)
		return
	}
	site, err := s.loadSignInSite(ctx, flow.SiteID)
	if err != nil {
		s.endFlow(ctx, flowID)
		s.pageError(w, "load site for callback", err)
		return
	}
	if r.URL.Path != site.site.CallbackPath() {
		// The answer came back at another site's redirect URI: another
		// ERP sent it, with this sign-in's state. Its code must not go to
		// this site's ERP, which may be an attacker's (the mix-up attack).
		s.endFlow(ctx, flowID)
		s.recordEvent(ctx, storage.AuthEvent{SiteID: flow.SiteID, Kind: storage.EventLoginDenied, ClientID: flow.ClientID, Reason: "wrong_callback"})
		s.log.Warn("sign-in answered at another site's redirect URI; ended", append(logbuffer.SentPath(r.URL.Path), zap.String("site_slug", site.site.Slug))...)
		s.renderMessage(w, http.StatusBadRequest, messagePage{Title: "The sign-in came back from another ERP",
			Message: "This sign-in was sent to one ERP, but the answer came back from another ERP, so erpgate has ended it. The sign-in link may not have been your own.",
			Next:    "Go back to your AI client and connect again. If you did not start this sign-in yourself, tell your administrator."})
		return
	}
	if q.Get("error") != "" || q.Get("code") == "" {
		// The user declined at the ERP (or the ERP refused the request).
		s.endFlow(ctx, flowID)
		s.recordEvent(ctx, storage.AuthEvent{SiteID: flow.SiteID, Kind: storage.EventLoginDenied, ClientID: flow.ClientID, Reason: s.erpRefusalReason(q.Get("error"))})
		s.denyToClient(w, r, flow, "The sign-in at the ERP was cancelled or refused.")
		return
	}
	uctx, cancel := context.WithTimeout(ctx, upstreamTimeout)
	defer cancel()
	tok, err := site.oauth.ExchangeCode(uctx, site.csite, site.client, s.deps.HTTPClient(site.csite, nil),
		q.Get("code"), s.publicURL(site.site.CallbackPath()), flow.Verifier.Reveal())
	if err != nil {
		s.endFlow(ctx, flowID)
		s.log.Warn("ERP code exchange failed", zap.String("site_slug", site.site.Slug), zap.Error(err))
		s.renderMessage(w, http.StatusBadGateway, messagePage{Title: "The ERP did not complete the sign-in",
			Message: "erpgate could not exchange the ERP's sign-in code for a token.",
			Causes:  []string{"The site's OAuth client in the ERP is missing, disabled or has another redirect URI than " + s.publicURL(site.site.CallbackPath()) + ".", "The ERP could not be reached."},
			Next:    "Go back to your AI client and connect again; if it happens again, tell your administrator."})
		return
	}
	authed := s.deps.HTTPClient(site.csite, site.oauth.TokenAuthorizer(tok.AccessToken))
	user, err := site.oauth.Identify(uctx, site.csite, authed)
	if err != nil || user.ID == "" {
		s.endFlow(ctx, flowID)
		s.log.Warn("ERP user lookup failed", zap.String("site_slug", site.site.Slug), zap.Error(err))
		s.renderMessage(w, http.StatusBadGateway, messagePage{Title: "The ERP did not say who you are",
			Message: "erpgate signed you in but could not read your user profile from the ERP.",
			Next:    "Go back to your AI client and connect again; if it happens again, tell your administrator."})
		return
	}
	if gate, ok := site.gate(); ok {
		if !s.passGate(ctx, w, gate, site, authed, flow, user, flowID) {
			return
		}
	}
	s.recordEvent(ctx, storage.AuthEvent{SiteID: site.site.ID, Kind: storage.EventSignIn, ERPUser: user.ID, ClientID: flow.ClientID})
	pending := storage.PendingToken{Access: tok.AccessToken, Refresh: tok.RefreshToken, ExpiresAt: upstreamExpiry(tok)}
	consented, err := s.deps.Store.HasConsent(ctx, site.site.ID, user.ID, flow.ClientID, consentHost(s.flowRedirectURI(r, flow)))
	if err != nil {
		s.endFlow(ctx, flowID)
		s.pageError(w, "read consent", err)
		return
	}
	if consented {
		// Consent is kept per (user, client, redirect host): a returning
		// user goes straight back to their client at a host they approved.
		if err := s.deps.Store.EndFlow(ctx, flowID); err != nil {
			s.pageError(w, "finish sign-in", err)
			return
		}
		s.grant(w, r, flow, site, user.ID, user.DisplayName, pending)
		return
	}
	if err := s.deps.Store.HoldFlowToken(ctx, flowID, user.ID, user.DisplayName, pending); err != nil {
		s.endFlow(ctx, flowID)
		s.flowError(w, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, s.publicURL("/oauth/consent")+"?"+url.Values{"flow": {flowID}}.Encode(), http.StatusSeeOther)
}

// burnFlow answers a callback that arrived in a browser without the flow's
// cookie. The state and code in its URL have left the browser that
// started the sign-in (a leaked URL, or one planted to sign the victim in
// as someone else), so the flow is ended for every browser: the original
// one gets flowBurnedPage when it comes back. Unknown, expired or
// finished flows are refused as before and leave no event. Either way the
// request is refused for the flow it named: charge is called.
func (s *Server) burnFlow(ctx context.Context, w http.ResponseWriter, flowID string, charge func()) {
	burned, ok, err := s.deps.Store.BurnFlow(context.WithoutCancel(ctx), flowID)
	if err != nil {
		s.pageError(w, "end sign-in opened in another browser", err)
		return
	}
	charge()
	if !ok {
		s.flowError(w, storage.ErrFlowWrongBrowser)
		return
	}
	s.recordEvent(ctx, storage.AuthEvent{SiteID: burned.SiteID, Kind: storage.EventLoginDenied, ClientID: burned.ClientID, Reason: "wrong_browser"})
	s.renderMessage(w, http.StatusBadRequest, messagePage{Title: "Sign-in started in another browser",
		Message: "This sign-in link was opened in another browser than the one where the sign-in started, so erpgate has ended that sign-in.",
		Next:    "Go back to your AI client and connect again, and finish signing in in the browser it opens, with cookies enabled."})
}

// flowBurnedPage tells the browser that started a sign-in that it was
// ended because its link was opened elsewhere.
func (s *Server) flowBurnedPage(w http.ResponseWriter) {
	s.renderMessage(w, http.StatusBadRequest, messagePage{Title: "This sign-in was ended",
		Message: "The link of this sign-in was opened in another browser, so erpgate ended the sign-in to protect your account. It cannot be finished.",
		Next:    "Go back to your AI client and connect again to start a new sign-in."})
}

// passGate reads the connector's access gate and, unless it lets the user
// in, answers with the page that says why. It reports whether to go on.
func (s *Server) passGate(ctx context.Context, w http.ResponseWriter, gate connector.UpstreamAccessGate, site signInSite,
	authed *http.Client, flow *storage.Flow, user connector.UpstreamUser, flowID string) bool {
	gctx, cancel := context.WithTimeout(ctx, upstreamTimeout)
	defer cancel()
	check, err := gate.CheckAccess(gctx, site.csite, authed)
	if err != nil {
		check = connector.AccessCheck{Decision: connector.AccessMisconfigured, Detail: "the access check could not be completed"}
	}
	switch check.Decision {
	case connector.AccessAllowed:
		return true
	case connector.AccessDenied:
		s.endFlow(ctx, flowID)
		s.recordEvent(ctx, storage.AuthEvent{SiteID: site.site.ID, Kind: storage.EventLoginDenied, ERPUser: user.ID, ClientID: flow.ClientID, Reason: "access_denied"})
		s.log.Info("login denied by access gate", zap.String("site_slug", site.site.Slug), zap.String("detail", check.Detail))
		s.renderMessage(w, http.StatusForbidden, messagePage{Title: "Access denied",
			Message: "You signed in to " + site.site.DisplayName + ", but your account is not allowed to use AI assistants with it.",
			Next:    "Ask your ERP administrator to give you access to AI assistants (erpgate)."})
		return false
	default:
		s.endFlow(ctx, flowID)
		s.recordEvent(ctx, storage.AuthEvent{SiteID: site.site.ID, Kind: storage.EventLoginDenied, ERPUser: user.ID, ClientID: flow.ClientID, Reason: "access_check_misconfigured"})
		s.log.Warn("access check misconfigured", zap.String("site_slug", site.site.Slug), zap.String("detail", check.Detail))
		s.renderMessage(w, http.StatusBadGateway, messagePage{Title: "Configuration error",
			Message: "erpgate could not check whether you may use AI assistants with " + site.site.DisplayName + " (" + check.Detail + "). This is a set-up problem, not a problem with your account.",
			Causes:  check.LikelyCauses,
			Next:    "Tell your ERP administrator; the event was logged as access_check_misconfigured."})
		return false
	}
}

// upstreamExpiry is when an ERP token expires.
func upstreamExpiry(tok connector.UpstreamToken) time.Time {
	life := tok.ExpiresIn
	if life <= 0 {
		life = defaultUpstreamLifetime
	}
	return time.Now().Add(life)
}

func (s *Server) endFlow(ctx context.Context, flowID string) {
	if err := s.deps.Store.EndFlow(context.WithoutCancel(ctx), flowID); err != nil {
		s.log.Warn("end sign-in flow", zap.Error(err))
	}
}

// recordEvent logs e and stores it. A sign-in refused before anyone
// signed in (no ERP user) is counted in its minute's row instead
// (CountAnonymousRefusal): anyone may start a sign-in to a site and end it
// so, from many addresses.
func (s *Server) recordEvent(ctx context.Context, e storage.AuthEvent) {
	store := s.deps.Store.RecordAuthEvent
	if e.Kind == storage.EventLoginDenied && e.ERPUser == "" {
		store = s.deps.Store.CountAnonymousRefusal
	}
	if err := store(context.WithoutCancel(ctx), e); err != nil {
		s.log.Error("record auth event", zap.String("event", string(e.Kind)), zap.Error(err))
	}
	s.deps.Metrics.SignIn(string(e.Kind), e.Reason)
	s.log.Info("auth_event", zap.String("event", string(e.Kind)), zap.String("site_id", e.SiteID.String()),
		zap.String("client_id", e.ClientID), zap.String("reason", e.Reason))
}

// erpRefusals are the error codes an ERP may send back to the callback
// (RFC 6749 section 4.1.2.1 and OpenID Connect Core 3.1.2.6), and "error"
// for an answer without one: a denied sign-in's reason is erp_ and one of
// these.
var erpRefusals = map[string]bool{
	"error": true, "invalid_request": true, "unauthorized_client": true, "access_denied": true,
	"unsupported_response_type": true, "invalid_scope": true, "server_error": true, "temporarily_unavailable": true,
	"interaction_required": true, "login_required": true, "account_selection_required": true, "consent_required": true,
	"invalid_request_uri": true, "invalid_request_object": true, "request_not_supported": true,
	"request_uri_not_supported": true, "registration_not_supported": true,
}

// erpRefusalReason is the reason of a sign-in the ERP's callback answered
// with the error code sent (anyone can send one): erp_ and the code, or
// erp_other for a code no standard defines, logged as sent.
func (s *Server) erpRefusalReason(sent string) string {
	code := connector.OAuthErrorCode(sent)
	if erpRefusals[code] {
		return "erp_" + code
	}
	s.log.Info("ERP callback with an error code no standard defines", zap.String("erp_error", code))
	return "erp_other"
}
