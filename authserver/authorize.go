package authserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ory/fosite"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/sites"
	"github.com/erpgate/erpgate/web/pagekit"
)

// serveAuthorize is the authorization endpoint. It checks the MCP client's
// request completely before anything is shown to the user, then starts a
// sign-in flow: straight to the ERP for a site's MCP URL, or to the page
// where the user types their ERP's address for /mcp.
func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if secs, ok := s.limited(w, r, s.authorizeLimit, "authorize"); !ok {
		s.tooManyRequests(w, secs)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxAuthorizeBodyBytes)
	if err := r.ParseForm(); err != nil {
		s.renderMessage(w, http.StatusBadRequest, messagePage{Title: "Invalid request", Message: "The authorization request could not be read."})
		return
	}
	if name, limit, ok := oversizedAuthorizeParameter(r.Form); !ok {
		s.refuseAuthorize(w, fosite.ErrInvalidRequest, fmt.Sprintf("The AI client's request has a %s parameter longer than %d bytes, more than erpgate accepts.", name, limit))
		return
	}
	if name, ok := repeatedAuthorizeParameter(r.Form); ok {
		err := fosite.ErrInvalidRequest
		if name == "resource" {
			err = errInvalidTarget("more than one resource")
		}
		s.refuseAuthorize(w, err, fmt.Sprintf("The AI client's request names %s more than once, so erpgate cannot tell which one it means.", name))
		return
	}
	query := normalizedAuthorizeQuery(r.Form)
	// A URL client id is checked first, so that a document that cannot be
	// fetched or is wrong gives a clean OAuth error rather than fosite's
	// generic "client does not exist".
	if clientID := query.Get("client_id"); strings.Contains(clientID, "://") {
		if _, err := s.cimd.ResolveClient(ctx, clientID); err != nil {
			s.clientError(w, err)
			return
		}
	}
	ar, err := s.newAuthorizeRequest(r, query)
	if err != nil {
		s.refuseAuthorize(w, err, "")
		return
	}
	// A client registered before the redirect-URI policy (or a cached
	// document) may still list a URI the policy refuses.
	if err := checkRedirectURI(ar.GetRedirectURI().String()); err != nil {
		reason := err.Error()
		if im := (*errInvalidMetadata)(nil); errors.As(err, &im) {
			reason = im.description
		}
		s.renderMessage(w, http.StatusBadRequest, messagePage{
			Title:   "This AI client cannot be used",
			Message: "erpgate does not send sign-in answers to this client's address: " + reason + ".",
			Next:    "Tell the client's vendor or your administrator; the client must register again with an allowed redirect URI.",
		})
		return
	}
	// OAuth 2.1 and the MCP spec: PKCE with S256 for every client. fosite
	// would reject a missing or plain challenge only after the user had
	// signed in; refusing here spares them a pointless sign-in.
	if query.Get("code_challenge") == "" {
		s.refuseAuthorize(w, fosite.ErrInvalidRequest, "The AI client did not protect its request with PKCE (code_challenge), which erpgate requires.")
		return
	}
	if query.Get("code_challenge_method") != "S256" {
		s.refuseAuthorize(w, fosite.ErrInvalidRequest, "The AI client protected its request with a PKCE method other than S256, the only one erpgate accepts.")
		return
	}
	res, ok := s.parseResource(query.Get("resource"))
	if !ok {
		s.refuseAuthorize(w, errInvalidTarget(""), "The AI client did not name an MCP address of this erpgate (the resource parameter).")
		return
	}
	browser, err := s.ensureBrowserID(w, r)
	if err != nil {
		s.pageError(w, "start sign-in", err)
		return
	}
	flowID, err := s.newFlowID()
	if err != nil {
		s.pageError(w, "start sign-in", err)
		return
	}
	flow := storage.NewFlow{
		ID: flowID, Browser: browser, AuthorizeQuery: query.Encode(), ClientID: ar.GetClient().GetID(),
		Resource: res.URL, TTL: s.deps.SignInTimeout,
	}
	if res.generic() {
		flow.Stage = storage.StageChooseSite
		if err := s.deps.Store.CreateFlow(ctx, flow); err != nil {
			s.pageError(w, "start sign-in", err)
			return
		}
		s.renderChooseSite(w, http.StatusOK, chooseSitePage{FlowID: flowID, CSRF: csrfToken(browser, flowID)})
		return
	}
	site, err := s.loadSignInSiteBySlug(ctx, res.Slug)
	if err != nil {
		if errors.Is(err, sites.ErrNotFound) || errors.Is(err, errNoSignIn) {
			s.refuseAuthorize(w, errInvalidTarget(""), "This MCP address does not offer sign-in: the site is unknown, disabled or has no OAuth connection.")
			return
		}
		s.pageError(w, "load site", err)
		return
	}
	verifier, challenge, err := newPKCE()
	if err != nil {
		s.pageError(w, "start sign-in", err)
		return
	}
	flow.Stage, flow.SiteID, flow.Verifier = storage.StageERP, site.site.ID, verifier
	if err := s.deps.Store.CreateFlow(ctx, flow); err != nil {
		s.pageError(w, "start sign-in", err)
		return
	}
	s.redirectToERP(w, r, site, flowID, challenge)
}

// redirectToERP sends the browser to the ERP's sign-in.
func (s *Server) redirectToERP(w http.ResponseWriter, r *http.Request, site signInSite, flowID, challenge string) {
	target, err := site.oauth.AuthorizationURL(site.csite, site.client, connectorAuthorizationRequest(s.publicURL(site.site.CallbackPath()), flowID, challenge))
	if err != nil {
		s.pageError(w, "build ERP authorization URL", err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// maxAuthorizeBodyBytes bounds an authorization request sent as a form.
const maxAuthorizeBodyBytes = 64 << 10

// authorizeParameterLimits bound the parameters erpgate reads from an
// authorization request and keeps in a sign-in flow: an unauthenticated
// request must not store much (issue 14).
var authorizeParameterLimits = []struct {
	name  string
	limit int
}{
	{"state", 1024},
	{"client_id", 2048},
	{"redirect_uri", maxRedirectURILength},
	{"resource", 2048},
	{"scope", 1024},
	{"code_challenge", 128},
	{"code_challenge_method", 64},
	{"response_type", 64},
	{"response_mode", 64},
}

// oversizedAuthorizeParameter returns the first parameter longer than its
// limit, with the limit, and false; or true when all fit.
func oversizedAuthorizeParameter(form url.Values) (string, int, bool) {
	for _, p := range authorizeParameterLimits {
		for _, v := range form[p.name] {
			if len(v) > p.limit {
				return p.name, p.limit, false
			}
		}
	}
	return "", 0, true
}

// tooManyRequests answers a source over its limit on a sign-in page.
func (s *Server) tooManyRequests(w http.ResponseWriter, secs int) {
	s.renderMessage(w, http.StatusTooManyRequests, messagePage{
		Title:   "Too many sign-in attempts",
		Message: "erpgate has had too many sign-in requests from your network in a short time. Try again " + inSeconds(secs) + ".",
		Next:    "If many people share your network's address, ask your erpgate operator.",
	})
}

// repeatedAuthorizeParameter returns the first of the parameters erpgate
// reads (authorizeParameterLimits names them all) that form carries more
// than once (in the query, the body, or both). RFC 6749
// §3.1 forbids it and §4.1.2.1 makes it invalid_request; taking the first
// value would let two parties read one request two ways. Frappe's
// oauthlib refuses such requests too. A resource, which RFC 8707 lets a
// client repeat, names the one MCP address a token is for here, so more
// than one is refused as well.
func repeatedAuthorizeParameter(form url.Values) (string, bool) {
	for _, p := range authorizeParameterLimits {
		if len(form[p.name]) > 1 {
			return p.name, true
		}
	}
	return "", false
}

// normalizedAuthorizeQuery keeps the parameters erpgate understands and
// narrows the requested scopes to those it issues, so that a client asking
// for, say, "openid profile erp:read" is not refused outright (RFC 6749
// §3.3 lets a server grant less than requested). erp:read is always
// granted: without it no tool can be called.
func normalizedAuthorizeQuery(form url.Values) url.Values {
	q := url.Values{}
	for _, k := range []string{"response_type", "client_id", "redirect_uri", "state", "code_challenge",
		"code_challenge_method", "resource", "response_mode"} {
		if v := form.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	// query is the code flow's default mode, the one the metadata
	// advertises; fosite refuses any response_mode a client names, so
	// the default is left unnamed. Other modes stay, to be refused.
	if q.Get("response_mode") == "query" {
		q.Del("response_mode")
	}
	scopes := []string{ScopeRead}
	for _, sc := range strings.Fields(form.Get("scope")) {
		if slices.Contains(supportedScopes, sc) && !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	q.Set("scope", strings.Join(scopes, " "))
	return q
}

// newAuthorizeRequest has fosite parse and check the authorization request
// whose normalized query is query, then checks that its redirect URI is a
// registered one exactly (isRegisteredRedirectURI).
//
// OAuth 2.1 (§4.1.1) makes state optional for a client that uses PKCE,
// which erpgate requires, and the MCP TypeScript SDK leaves it out when its
// provider has no state(). fosite v0.49 refuses a state shorter than 8
// characters, a missing one included, and no setting turns that off (a
// MinParameterEntropy of 0 or less means 8). So a request without state is
// checked with a placeholder, which is taken out of the parsed request
// again: the answer carries no state, as RFC 6749 §4.1.2 wants. A state
// the client did send keeps fosite's minimum, and erpgate's 1 KiB bound.
func (s *Server) newAuthorizeRequest(r *http.Request, query url.Values) (fosite.AuthorizeRequester, error) {
	ar, err := s.parseAuthorizeRequest(r, query)
	if err != nil {
		return ar, err
	}
	if raw := query.Get("redirect_uri"); raw != "" && !isRegisteredRedirectURI(raw, ar.GetClient().GetRedirectURIs()) {
		return nil, fosite.ErrInvalidRequest.WithHint("The 'redirect_uri' parameter does not match any of the OAuth 2.0 Client's pre-registered redirect urls.")
	}
	return ar, nil
}

// parseAuthorizeRequest is fosite's parse of the request, with the
// placeholder state described at newAuthorizeRequest.
func (s *Server) parseAuthorizeRequest(r *http.Request, query url.Values) (fosite.AuthorizeRequester, error) {
	if query.Get("state") != "" {
		return s.provider.NewAuthorizeRequest(r.Context(), authorizeRequestFor(r, query))
	}
	withPlaceholder := maps.Clone(query)
	withPlaceholder.Set("state", absentStatePlaceholder)
	ar, err := s.provider.NewAuthorizeRequest(r.Context(), authorizeRequestFor(r, withPlaceholder))
	req, ok := ar.(*fosite.AuthorizeRequest)
	if !ok || req == nil {
		return nil, fmt.Errorf("authorize request without state: fosite returned %T", ar)
	}
	req.State = ""
	req.Form.Del("state")
	return req, err
}

// absentStatePlaceholder stands in for a missing state while fosite checks
// a request; it never leaves newAuthorizeRequest.
const absentStatePlaceholder = "erpgate-no-state"

// authorizeRequestFor is r as a GET with the normalised query, which is
// what fosite parses (and what is replayed when the flow completes).
func authorizeRequestFor(r *http.Request, query url.Values) *http.Request {
	r2 := r.Clone(r.Context())
	r2.Method = http.MethodGet
	u := *r.URL
	u.RawQuery = query.Encode()
	r2.URL = &u
	r2.Body, r2.ContentLength = http.NoBody, 0
	r2.Form, r2.PostForm, r2.MultipartForm = nil, nil, nil
	r2.Header = r.Header.Clone()
	r2.Header.Del("Content-Type")
	return r2
}

func errInvalidTarget(hint string) *fosite.RFC6749Error {
	return &fosite.RFC6749Error{
		ErrorField:       "invalid_target",
		DescriptionField: "The requested resource is invalid, unknown or malformed.",
		HintField:        hint,
		CodeField:        http.StatusBadRequest,
	}
}

// refuseAuthorize shows a failed authorization request on an erpgate page.
// Registration is open, so the client's redirect URI may be anyone's site:
// before the user has approved the client, an error must not send them
// there from an erpgate link (RFC 9700 §4.11.2). message is a plain
// sentence saying what was wrong; empty, one is chosen for the error code.
func (s *Server) refuseAuthorize(w http.ResponseWriter, err error, message string) {
	rfc := fosite.ErrorToRFC6749Error(err)
	if rfc.CodeField >= 500 {
		s.pageError(w, "authorization request", err)
		return
	}
	if message == "" {
		message = authorizeErrorSentence(rfc.ErrorField)
	}
	// The OAuth error and fosite's wording are for the operator's log; the
	// person gets the sentence and a reference to quote (issue 16).
	ref := pagekit.NewReference()
	s.log.Info("authorization request refused", zap.String("reference", ref), zap.String("error", rfc.ErrorField),
		zap.String("description", rfc.GetDescription()))
	s.renderMessage(w, http.StatusBadRequest, messagePage{
		Title:     "This connection request cannot be used",
		Message:   message,
		Next:      "Go back to your AI client and connect again. If this keeps happening, the client's set-up does not match this erpgate: tell your erpgate operator.",
		Reference: ref,
	})
}

// authorizeErrorSentence says in a plain sentence what an OAuth error code
// means for an authorization request (fosite's own descriptions are for
// developers).
func authorizeErrorSentence(code string) string {
	switch code {
	case "invalid_client":
		return "erpgate does not know this AI client; its registration may have been removed after a long time unused. Remove the connection in your AI client and add it again."
	case "invalid_scope":
		return "The AI client asked for permissions that erpgate does not offer."
	case "unsupported_response_type", "unsupported_response_mode":
		return "The AI client asked for a kind of answer that erpgate does not give; erpgate supports only the authorization code flow."
	case "invalid_state":
		return "The AI client's request has a state value that is too short."
	case "invalid_target":
		return "The AI client did not name an MCP address of this erpgate."
	case "access_denied":
		return "The sign-in was cancelled or refused."
	default:
		return "The AI client sent an incomplete or malformed connection request, or one whose return address does not match its registration."
	}
}

// redirectError answers a failed authorization request back to the client
// with error, state and iss (RFC 9207). Only for a client this user has
// approved at this site, or after the consent page; and only when its
// redirect URI is known to be registered, otherwise on a page, since an
// unverified redirect URI must never receive anything.
func (s *Server) redirectError(w http.ResponseWriter, ar fosite.AuthorizeRequester, err error) {
	rfc := fosite.ErrorToRFC6749Error(err)
	if rfc.CodeField >= 500 {
		s.log.Error("authorization request failed", zap.Error(err))
	}
	if ar == nil || !ar.IsRedirectURIValid() {
		s.refuseAuthorize(w, err, "")
		return
	}
	u := *ar.GetRedirectURI()
	q := u.Query()
	q.Set("error", rfc.ErrorField)
	q.Set("error_description", rfc.GetDescription())
	if st := ar.GetState(); st != "" {
		q.Set("state", st)
	}
	q.Set("iss", s.issuer)
	u.RawQuery, u.Fragment = q.Encode(), ""
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Location", u.String())
	w.WriteHeader(http.StatusSeeOther)
}

// clientError shows why a URL client id could not be used.
func (s *Server) clientError(w http.ResponseWriter, err error) {
	var ce *CIMDError
	if !errors.As(err, &ce) {
		s.pageError(w, "resolve client metadata document", err)
		return
	}
	s.renderMessage(w, http.StatusBadRequest, messagePage{
		Title:   "This AI client cannot be used",
		Message: "erpgate could not accept the document that identifies this AI client: " + ce.Reason + ".",
		Next:    "The client identifies itself with a metadata document that erpgate could not accept. Tell the client's vendor or your administrator.",
	})
}

// pageError answers an unexpected failure during sign-in on a page.
func (s *Server) pageError(w http.ResponseWriter, step string, err error) {
	ref := pagekit.NewReference()
	s.log.Error("sign-in failure", zap.String("reference", ref), zap.String("step", step), zap.Error(err))
	s.renderMessage(w, http.StatusInternalServerError, messagePage{
		Title:     "Something went wrong",
		Message:   "erpgate could not continue the sign-in.",
		Next:      "Go back to your AI client and connect again. If this keeps happening, tell your erpgate operator.",
		Reference: ref,
	})
}

// flowIDPrefix begins every sign-in flow id (as secrets.NewTaggedToken
// takes it, without its "_").
const flowIDPrefix = "egf"

// newFlowID returns a fresh, unguessable flow id (also the ERP state),
// with a check value under s.flowKey (admitFlowLookup).
func (s *Server) newFlowID() (string, error) {
	tok, err := secrets.NewTaggedToken(flowIDPrefix, s.flowKey)
	if err != nil {
		return "", err
	}
	return tok.Value.Reveal(), nil
}

// flowKeyOf derives the key of flow ids' check values from the
// token-signing key: HMAC-SHA256 of a label of this use alone, so that
// it reveals nothing of the signing key and signs no token.
func flowKeyOf(signingKey []byte) []byte {
	mac := hmac.New(sha256.New, signingKey)
	mac.Write([]byte("erpgate sign-in flow id check"))
	return mac.Sum(nil)
}

// newPKCE returns an upstream PKCE verifier (RFC 7636 §4.1: 43 characters
// of base64url from 32 random bytes) and its S256 challenge.
func newPKCE() (secrets.Secret, string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	verifier := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return secrets.Secret(verifier), base64.RawURLEncoding.EncodeToString(sum[:]), nil
}
