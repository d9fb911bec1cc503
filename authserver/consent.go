package authserver

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/web/pagekit"
)

// serveConsentPage shows the consent page of a flow that is waiting for
// it, to the browser that started it.
func (s *Server) serveConsentPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	flowID := r.URL.Query().Get("flow")
	browser, ok := s.browserID(r)
	if !ok {
		s.flowError(w, storage.ErrFlowWrongBrowser)
		return
	}
	charge, ok := s.admitFlowLookup(w, r, flowID)
	if !ok {
		return
	}
	flow, err := s.deps.Store.PeekFlow(ctx, flowID, browser, storage.StageConsent)
	if err != nil {
		chargeFlowRefusal(charge, err)
		s.flowError(w, err)
		return
	}
	site, err := s.deps.Sites.GetSite(ctx, flow.SiteID)
	if err != nil {
		s.pageError(w, "load site for consent", err)
		return
	}
	redirect := s.flowRedirectURI(r, flow)
	userName := plainName(flow.ERPUserName)
	if userName == "" {
		userName = plainName(flow.ERPUser)
	}
	// The form's answer redirects to the client's redirect URI.
	formAction := []string{"'self'"}
	if src := cspSource(redirect); src != "" {
		formAction = append(formAction, src)
	}
	// The script holds the consent button for a moment (data-hold).
	s.render(w, http.StatusOK, s.pages.consent, pagekit.Options{FormAction: formAction, Script: true}, consentPage{
		FlowID: flowID, CSRF: csrfToken(browser, flowID),
		ClientName:    s.clientName(ctx, flow.ClientID),
		RedirectHost:  hostOf(redirect),
		SiteName:      site.DisplayName,
		UserName:      userName,
		ConsentAction: s.publicURL("/oauth/consent"),
	})
}

// serveConsent takes the user's answer. Accepting records the consent (an
// auth event), keeps the user's ERP token and sends the client its code.
func (s *Server) serveConsent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	flowID, browser, ok := s.checkForm(w, r)
	if !ok {
		return
	}
	charge, ok := s.admitFlowLookup(w, r, flowID)
	if !ok {
		return
	}
	flow, err := s.deps.Store.StepFlow(ctx, flowID, browser, storage.FlowStep{From: storage.StageConsent, To: storage.StageDone})
	if err != nil {
		chargeFlowRefusal(charge, err)
		s.flowError(w, err)
		return
	}
	if r.PostForm.Get("decision") != "accept" || flow.Token == nil {
		s.recordEvent(ctx, storage.AuthEvent{SiteID: flow.SiteID, Kind: storage.EventLoginDenied, ERPUser: flow.ERPUser, ClientID: flow.ClientID, Reason: "consent_declined"})
		s.denyToClient(w, r, flow, "The user declined to let this client use erpgate.")
		return
	}
	site, err := s.loadSignInSite(ctx, flow.SiteID)
	if err != nil {
		s.pageError(w, "load site for consent", err)
		return
	}
	// The consent covers the host the page named, not the client's other
	// redirect URIs.
	if err := s.deps.Store.SaveConsent(ctx, flow.SiteID, flow.ERPUser, flow.ClientID, consentHost(s.flowRedirectURI(r, flow))); err != nil {
		s.pageError(w, "save consent", err)
		return
	}
	s.recordEvent(ctx, storage.AuthEvent{SiteID: flow.SiteID, Kind: storage.EventConsent, ERPUser: flow.ERPUser, ClientID: flow.ClientID})
	s.grant(w, r, flow, site, flow.ERPUser, flow.ERPUserName, *flow.Token)
}

// flowRedirectURI is where a flow's answer goes: the request's
// redirect_uri or, when the request left it to the registration, the
// client's only registered redirect URI, as fosite chooses it. It is ""
// when the request no longer parses (the client is gone).
func (s *Server) flowRedirectURI(r *http.Request, flow *storage.Flow) string {
	query, _ := url.ParseQuery(flow.AuthorizeQuery)
	if redirect := query.Get("redirect_uri"); redirect != "" {
		return redirect
	}
	if ar, err := s.replayAuthorizeRequest(r, flow); err == nil {
		return ar.GetRedirectURI().String()
	}
	return ""
}

// clientName is what the consent page calls a client: its registered or
// published name (shownName: a client registered before names were kept
// that way, or a metadata document, may still carry controls, and a
// document's name is as long as its publisher made it), else its id.
func (s *Server) clientName(ctx context.Context, clientID string) string {
	if strings.Contains(clientID, "://") {
		if name := shownName(s.cimd.ClientName(ctx, clientID)); name != "" {
			return name
		}
		return clientID
	}
	if c, err := s.deps.Store.Client(ctx, clientID); err == nil && shownName(c.Name) != "" {
		return shownName(c.Name)
	}
	return clientID
}

// shownName is a client's name as the consent page shows it: plainName,
// and at most maxClientNameLength characters, as registration keeps
// them. The page names the client twice before the host that receives
// the answers; a metadata document's name of thousands of characters
// would bury that host under its publisher's text.
func shownName(name string) string {
	name = plainName(name)
	n := 0
	for i := range name {
		if n == maxClientNameLength {
			return strings.TrimSpace(name[:i]) + "…"
		}
		n++
	}
	return name
}

// cspSource is the CSP source expression that allows a redirect URI:
// its origin, or its scheme for a private-use scheme.
func cspSource(redirect string) string {
	u, err := url.Parse(redirect)
	if err != nil || u.Scheme == "" {
		return ""
	}
	if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return u.Scheme + ":"
	}
	return u.Scheme + "://" + u.Host
}
