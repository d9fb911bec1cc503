package authserver

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"github.com/ory/fosite"

	"github.com/erpgate/erpgate/authserver/storage"
)

// replayAuthorizeRequest parses the MCP client's authorization request
// again, as stored in the flow, so that the client and redirect URI are
// checked once more when the flow completes.
func (s *Server) replayAuthorizeRequest(r *http.Request, flow *storage.Flow) (fosite.AuthorizeRequester, error) {
	query, err := url.ParseQuery(flow.AuthorizeQuery)
	if err != nil {
		return nil, fmt.Errorf("replay authorization request: %w", err)
	}
	return s.newAuthorizeRequest(r, query)
}

// grant keeps the user's ERP token and answers the MCP client's
// authorization request with a code (and iss, RFC 9207). The token's
// audience is the MCP URL the client asked for.
func (s *Server) grant(w http.ResponseWriter, r *http.Request, flow *storage.Flow, site signInSite, user, userName string, tok storage.PendingToken) {
	ctx := r.Context()
	ar, err := s.replayAuthorizeRequest(r, flow)
	if err != nil {
		s.refuseAuthorize(w, err, "")
		return
	}
	if err := s.deps.Store.PutUpstreamToken(ctx, storage.UpstreamToken{
		SiteID: site.site.ID, ERPUser: user, DisplayName: userName,
		Access: tok.Access, Refresh: tok.Refresh, ExpiresAt: tok.ExpiresAt,
		// The sign-in has just passed the access gate, if the site has one.
		GateCheckedAt: time.Now(),
	}); err != nil {
		s.pageError(w, "store ERP token", err)
		return
	}
	for _, scope := range ar.GetRequestedScopes() {
		ar.GrantScope(scope)
	}
	// The resource indicator becomes the audience, recorded as requested
	// too so that a token request's resource can be checked against it.
	ar.SetRequestedAudience(fosite.Arguments{flow.Resource})
	ar.GrantAudience(flow.Resource)
	resp, err := s.provider.NewAuthorizeResponse(ctx, ar, &storage.Session{SiteID: site.site.ID, Subject: user, DisplayName: userName})
	if err != nil {
		s.redirectError(w, ar, err)
		return
	}
	resp.AddParameter("iss", s.issuer)
	if ar.GetState() == "" {
		// fosite adds "state=" even when the client sent none (RFC 6749
		// §4.1.2: state is returned only if it was in the request).
		resp.GetParameters().Del("state")
	}
	s.provider.WriteAuthorizeResponse(ctx, w, ar, resp)
}

// denyToClient ends a flow with access_denied. After the consent page
// (the user declined), or for a client this user has already approved at
// this site, the answer goes back to the client; otherwise (the ERP
// refused or the user cancelled there, before erpgate knows who they are)
// it is shown on a page, since the client's redirect URI may be anyone's
// (RFC 9700 §4.11.2).
func (s *Server) denyToClient(w http.ResponseWriter, r *http.Request, flow *storage.Flow, hint string) {
	approved := flow.Stage == storage.StageConsent
	if !approved && flow.ERPUser != "" && flow.SiteID != uuid.Nil {
		ok, err := s.deps.Store.HasConsent(r.Context(), flow.SiteID, flow.ERPUser, flow.ClientID, consentHost(s.flowRedirectURI(r, flow)))
		if err != nil {
			s.pageError(w, "read consent", err)
			return
		}
		approved = ok
	}
	if !approved {
		s.renderMessage(w, http.StatusBadRequest, messagePage{
			Title:   "Sign-in cancelled",
			Message: hint,
			Next:    "Go back to your AI client and connect again.",
		})
		return
	}
	ar, err := s.replayAuthorizeRequest(r, flow)
	if err != nil {
		s.refuseAuthorize(w, err, "")
		return
	}
	s.redirectError(w, ar, fosite.ErrAccessDenied.WithHint(hint))
}
