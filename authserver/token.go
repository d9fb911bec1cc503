package authserver

import (
	"errors"
	"net/http"
	"strings"

	"github.com/ory/fosite"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// maxTokenBodyBytes bounds a token or revocation request, read before the
// client is known: a code, verifier, refresh token and client credentials
// take well under 4 KiB; fosite would otherwise take up to 10 MiB in
// memory, and multipart file parts of any size in temporary files.
const maxTokenBodyBytes = 64 << 10

// serveToken is the token endpoint: authorization_code (with PKCE) and
// refresh_token (rotated, with reuse detection). fosite's writers set
// Cache-Control: no-store on every answer.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	w.Header().Set("Access-Control-Allow-Origin", "*")
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenBodyBytes)
	charge, ok := s.admitLookups(w, r, s.signedGrantOf)
	if !ok {
		return
	}
	ar, err := s.provider.NewAccessRequest(ctx, r, &storage.Session{})
	if err != nil {
		chargeRefusal(charge, err)
		s.accessError(w, r, ar, err)
		return
	}
	// RFC 8707 §2.2: a resource on the token request must be one the grant
	// covers; the token's audience stays the grant's.
	if res := strings.TrimSuffix(ar.GetRequestForm().Get("resource"), "/"); res != "" &&
		!ar.GetRequestedAudience().Has(res) && !ar.GetGrantedAudience().Has(res) {
		s.accessError(w, r, ar, errInvalidTarget("The resource is not the MCP URL this grant was made for."))
		return
	}
	// A grant of a site that no longer offers sign-in (disabled, removed,
	// or without its OAuth connection) gets no new tokens: its MCP URL
	// would refuse them. A refresh token or code is left as it was
	// (storage keeps a code's PKCE challenge until the code is redeemed,
	// so a request refused here, or for a wrong verifier or resource,
	// does not spend it).
	if sess, ok := ar.GetSession().(*storage.Session); ok {
		if _, err := s.loadSignInSite(ctx, sess.SiteID); errors.Is(err, sites.ErrNotFound) || errors.Is(err, errNoSignIn) {
			s.accessError(w, r, ar, fosite.ErrInvalidGrant.WithHint("The site of this grant no longer offers sign-in."))
			return
		} else if err != nil {
			s.accessError(w, r, ar, fosite.ErrServerError.WithWrap(err))
			return
		}
	}
	resp, err := s.provider.NewAccessResponse(ctx, ar)
	if err != nil {
		chargeRefusal(charge, err)
		s.accessError(w, r, ar, err)
		return
	}
	s.provider.WriteAccessResponse(ctx, w, ar, resp)
}

func (s *Server) accessError(w http.ResponseWriter, r *http.Request, ar fosite.AccessRequester, err error) {
	rfc := fosite.ErrorToRFC6749Error(err)
	if rfc.CodeField >= 500 {
		s.log.Error("token request failed", zap.Error(err))
	} else {
		s.log.Info("token request refused", zap.String("error", rfc.ErrorField), zap.String("grant_type", r.PostFormValue("grant_type")))
	}
	s.provider.WriteAccessError(r.Context(), w, ar, err)
}

// serveRevoke is the revocation endpoint (RFC 7009). Revoking a refresh
// token revokes its whole grant.
func (s *Server) serveRevoke(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Cache-Control", "no-store")
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenBodyBytes)
	charge, ok := s.admitLookups(w, r, s.signedRevocationOf)
	if !ok {
		return
	}
	err := s.provider.NewRevocationRequest(r.Context(), r)
	if err == nil || fosite.ErrorToRFC6749Error(err).CodeField < http.StatusInternalServerError {
		// An unknown token's revocation succeeds (RFC 7009 §2.2), after
		// the same lookups: every revocation counts. A signed token let
		// past a spent bound is remembered instead: revoked now (or
		// unknown), it is bounded from then on.
		charge()
	}
	s.provider.WriteRevocationResponse(r.Context(), w, err)
}

// admitLookups lets a token or revocation request look up its client and
// the code or token it carries, within its source's bound of lookups that
// fail (sourcelimit.Lookups, shared with the MCP doors' tokens that are
// not valid). Over it, the request is answered 429 here, unless signed
// (nil: never) finds it carries a token erpgate signed that has not
// failed on this replica: as at the MCP doors (grantOf), someone else at a
// shared address who sends made-up tokens must not keep a person's client
// from refreshing. Such a request is let through uncharged; if it fails,
// its token is remembered and bounded from then on.
func (s *Server) admitLookups(w http.ResponseWriter, r *http.Request, signed func(*http.Request) ([32]byte, bool)) (charge func(), ok bool) {
	charge, err := s.lookups.For(r)()
	var refused *sourcelimit.LookupsRefused
	if errors.As(err, &refused) && signed != nil {
		if key, ok := signed(r); ok {
			return func() { s.signedFailed.Add(key) }, true
		}
	}
	if errors.As(err, &refused) {
		if refused.First {
			s.log.Info("source rate limit", zap.String("endpoint", r.URL.Path), zap.String("source", refused.Source))
		}
		writeOAuthError(w, http.StatusTooManyRequests, "temporarily_unavailable", refused.Answer(w.Header()))
		return nil, false
	}
	if err != nil {
		s.internalError(w, "admit token lookups", err)
		return nil, false
	}
	return charge, true
}

// signedGrantOf returns the hash of the refresh token or authorization
// code a token request carries, and whether erpgate signed it and it has
// not failed a lookup on this replica. Only a form-encoded body is read
// (RFC 6749 §4.1.3, §6); fosite parses it again from r.PostForm.
func (s *Server) signedGrantOf(r *http.Request) ([32]byte, bool) {
	if err := r.ParseForm(); err != nil {
		return [32]byte{}, false
	}
	var token string
	switch r.PostForm.Get("grant_type") {
	case "refresh_token":
		token = r.PostForm.Get("refresh_token")
	case "authorization_code":
		token = r.PostForm.Get("code")
	}
	if token == "" {
		return [32]byte{}, false
	}
	key := secrets.HashToken(token)
	return key, s.signedAndUntried(r.Context(), key, token)
}

// signedRevocationOf is signedGrantOf for a revocation request: the hash
// of the token it revokes (RFC 7009 §2.1, an access or a refresh token),
// and whether erpgate signed it and it has not failed a lookup on this
// replica. A client signing out at a shared address where someone else
// sends made-up tokens must still be able to end its grant.
func (s *Server) signedRevocationOf(r *http.Request) ([32]byte, bool) {
	if err := r.ParseForm(); err != nil {
		return [32]byte{}, false
	}
	token := r.PostForm.Get("token")
	if token == "" {
		return [32]byte{}, false
	}
	key := secrets.HashToken(token)
	return key, s.signedAndUntried(r.Context(), key, token)
}

// admitFlowLookup lets a sign-in step (the ERP's callback, the consent
// page and form) look up the flow it names, within its source's bound of
// lookups that fail (shared with the token doors): anyone can send one
// with a cookie and a form token of their own making, and a made-up flow
// id costs a transaction. Over it, the request is answered 429 here,
// unless flowID carries the check value erpgate made (newFlowID) and has
// not failed a step on this replica: someone else at a shared address
// who sends made-up links must not keep a person from signing in. Such a
// step is let through uncharged; if it fails, the id is remembered and
// bounded from then on.
func (s *Server) admitFlowLookup(w http.ResponseWriter, r *http.Request, flowID string) (charge func(), ok bool) {
	if key := secrets.HashToken(flowID); secrets.TokenTagged(flowIDPrefix, flowID, [][]byte{s.flowKey}) && !s.failedFlows.Has(key) {
		return func() { s.failedFlows.Add(key) }, true
	}
	charge, err := s.lookups.For(r)()
	var refused *sourcelimit.LookupsRefused
	if errors.As(err, &refused) {
		if refused.First {
			s.log.Info("source rate limit", zap.String("endpoint", r.URL.Path), zap.String("source", refused.Source))
		}
		s.tooManyRequests(w, sourcelimit.RetryAfter(w.Header(), refused.Wait))
		return nil, false
	}
	if err != nil {
		s.pageError(w, "admit sign-in flow lookups", err)
		return nil, false
	}
	return charge, true
}

// chargeFlowRefusal charges a sign-in step refused for the flow it named
// (unknown, expired, already used, ended, or another browser's), not for
// erpgate's own failure.
func chargeFlowRefusal(charge func(), err error) {
	for _, refusal := range []error{storage.ErrFlowUnknown, storage.ErrFlowExpired, storage.ErrFlowUsed, storage.ErrFlowWrongBrowser, storage.ErrFlowBurned} {
		if errors.Is(err, refusal) {
			charge()
			return
		}
	}
}

// chargeRefusal charges a token request refused for what it carried (not
// for erpgate's own failure, such as its database being unavailable).
func chargeRefusal(charge func(), err error) {
	if fosite.ErrorToRFC6749Error(err).CodeField < http.StatusInternalServerError {
		charge()
	}
}
