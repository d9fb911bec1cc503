package acumatica

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// ServiceScope is what a service connection's API user asks for. Plain
// "api" ties one server session (one API-user seat) to each access token
// and closes it when the token expires; "offline_access" adds the refresh
// token. Never "api:concurrent_access": every cookieless request would then
// open a new session and exhaust the licence's seats
// (shared/erp-api/acumatica/api-facts.md).
const ServiceScope = "api offline_access"

// APICredentialFields are the four parts of a service connection: the
// Connected Application (SM303010) registered for the Resource Owner
// Password flow, and the dedicated API user it signs in as.
func (*Connector) APICredentialFields() []connector.CredentialField {
	return []connector.CredentialField{
		{Name: "client_id", Description: "Client ID of the Connected Application (SM303010) registered for the Resource Owner Password flow, in the form GUID@Tenant"},
		{Name: "client_secret", Description: "Shared secret of that Connected Application", Secret: true},
		{Name: "username", Description: "The dedicated API user the service connection runs as; its roles decide what the tools see"},
		{Name: "password", Description: "That user's password", Secret: true},
	}
}

// serviceCredential is a parsed api_token connection.
type serviceCredential struct {
	client   connector.OAuthClient
	username string
	password secrets.Secret
}

// storeKey is the name the credential's tokens are kept under: the API
// user plus a fingerprint of the whole credential. A replaced credential
// (a new password, another client) therefore never reuses the old one's
// tokens, so verifying it really signs in. The fingerprint is a hash that
// includes the client secret, which is random and stored encrypted, so it
// says nothing usable about the password.
func (c serviceCredential) storeKey() string {
	h := sha256.New()
	for _, part := range []string{c.client.ID, c.client.Secret.Reveal(), c.username, c.password.Reveal()} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return c.username + "#" + hex.EncodeToString(h.Sum(nil)[:8])
}

func parseServiceFields(fields map[string]secrets.Secret) (serviceCredential, error) {
	c := serviceCredential{
		client:   connector.OAuthClient{ID: strings.TrimSpace(fields["client_id"].Reveal()), Secret: fields["client_secret"]},
		username: strings.TrimSpace(fields["username"].Reveal()),
		password: fields["password"],
	}
	if c.client.ID == "" || c.username == "" || !c.password.IsSet() {
		return serviceCredential{}, fmt.Errorf("acumatica: the api_token connection lacks client_id, username or password")
	}
	return c, nil
}

// serviceAuth obtains, renews and tracks service connections' tokens.
type serviceAuth struct {
	httpClient func(connector.Site, connector.Authorizer) *http.Client
	tokens     connector.ServiceTokenStore

	mu sync.Mutex
	// owners maps the SHA-256 of each access token this process handed out
	// to its (site, user), so a 401 can reject exactly that token; latest
	// keeps one entry per (site, user), so the map stays small.
	owners map[[32]byte]tokenOwner
	latest map[tokenOwner][32]byte
	// refused holds, per site and store key (so per credential), the
	// ERP's refusal of the credential, told to the calls that follow until
	// it runs out instead of asking the ERP again on every call.
	refused map[refusalKey]refusal
}

type refusalKey struct{ site, key string }

type refusal struct {
	err   error
	until time.Time
}

// refusalHold is how long a refused service credential is not tried
// again: a wrong or changed password would otherwise cost a failed sign-in
// at the ERP per call (a bot in a loop can lock its API user out), while a
// corrected credential has another store key and is tried at once.
const refusalHold = time.Minute

// credentialRefused reports whether err is the ERP refusing the service
// credential itself (not a passing failure, nor the login limit).
func credentialRefused(err error) bool {
	var te *toolerr.Error
	return errors.As(err, &te) && (te.Code == toolerr.AuthExpired || te.Code == toolerr.PermissionDenied)
}

type tokenOwner struct {
	site string
	// key is the store key; user the API user's name.
	key  string
	user string
}

func newServiceAuth(hc func(connector.Site, connector.Authorizer) *http.Client, tokens connector.ServiceTokenStore) *serviceAuth {
	return &serviceAuth{httpClient: hc, tokens: tokens, owners: map[[32]byte]tokenOwner{}, latest: map[tokenOwner][32]byte{},
		refused: map[refusalKey]refusal{}}
}

// APIAuthorizer returns the authorisation of a service connection: a Bearer
// token of its API user, obtained with the password grant, refreshed (the
// refresh token rotates on every use) and shared through the platform's
// service-token store. Requests carry only that header, never a cookie.
func (c *Connector) APIAuthorizer(site connector.Site, fields map[string]secrets.Secret) (connector.Authorizer, error) {
	cred, err := parseServiceFields(fields)
	if err != nil {
		return nil, err
	}
	return &serviceAuthorizer{svc: c.service, site: site, cred: cred}, nil
}

type serviceAuthorizer struct {
	svc  *serviceAuth
	site connector.Site
	cred serviceCredential
}

func (a *serviceAuthorizer) Authorize(req *http.Request) error {
	tok, err := a.svc.token(req.Context(), a.site, a.cred)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok.Reveal())
	return nil
}

func (s *serviceAuth) token(ctx context.Context, site connector.Site, cred serviceCredential) (secrets.Secret, error) {
	if s.httpClient == nil {
		return "", toolerr.New(toolerr.Internal, "this erpgate build cannot sign in service connections (no outbound transport was configured)")
	}
	key := cred.storeKey()
	rk := refusalKey{site: site.ID.String(), key: key}
	s.mu.Lock()
	held, ok := s.refused[rk]
	if ok && !time.Now().Before(held.until) {
		delete(s.refused, rk)
		ok = false
	}
	s.mu.Unlock()
	if ok {
		return "", held.err
	}
	tok, err := s.tokens.Token(ctx, site.ID, key, s.renew(site, cred))
	if err != nil {
		hold := refusalHold
		var held *heldRefusal
		if errors.As(err, &held) {
			// Another replica was refused: this one holds it as long.
			err, hold = held.refusal, held.left
		}
		if credentialRefused(err) {
			now := time.Now()
			s.mu.Lock()
			for k, r := range s.refused {
				if !now.Before(r.until) {
					delete(s.refused, k) // the map keeps only live refusals
				}
			}
			s.refused[rk] = refusal{err: err, until: now.Add(hold)}
			s.mu.Unlock()
		}
		return "", err
	}
	s.remember(tok, tokenOwner{site: site.ID.String(), key: key, user: cred.username})
	return tok, nil
}

func (s *serviceAuth) remember(tok secrets.Secret, owner tokenOwner) {
	h := sha256.Sum256([]byte(tok.Reveal()))
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.latest[owner]; ok && old != h {
		delete(s.owners, old)
	}
	s.latest[owner] = h
	s.owners[h] = owner
}

// owner returns who a Bearer header value belongs to, if this process
// handed it out.
func (s *serviceAuth) owner(authorization string) (tokenOwner, secrets.Secret, bool) {
	tok, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok || tok == "" {
		return tokenOwner{}, "", false
	}
	h := sha256.Sum256([]byte(tok))
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.owners[h]
	return o, secrets.Secret(tok), ok
}

// rejected records that Acumatica refused the token in authorization
// (HTTP 401), so the next request renews it. It reports whether the token
// was a service connection's of site.
func (s *serviceAuth) rejected(ctx context.Context, site connector.Site, authorization string) bool {
	o, tok, ok := s.owner(authorization)
	if !ok || o.site != site.ID.String() {
		return false
	}
	// A failure to record the rejection only costs another 401 later.
	_ = s.tokens.Reject(ctx, site.ID, o.key, tok)
	return true
}

// heldRefusal is a refusal another replica was given, as the store of
// service tokens holds it (connector.ServiceRefusals), and how long it
// still holds.
type heldRefusal struct {
	refusal *toolerr.Error
	left    time.Duration
}

func (h *heldRefusal) Error() string { return h.refusal.Error() }
func (h *heldRefusal) Unwrap() error { return h.refusal }

// renew signs the API user in, unless the ERP's refusal of the credential
// is held for every replica (when the store shares them): it refreshes
// the stored token or, without a usable refresh token, signs in afresh. A
// refusal of the credential is held for every replica, for refusalHold.
func (s *serviceAuth) renew(site connector.Site, cred serviceCredential) connector.RenewToken {
	return func(ctx context.Context, current connector.StoredToken) (connector.UpstreamToken, error) {
		shared, _ := s.tokens.(connector.ServiceRefusals)
		if shared == nil {
			return s.signIn(ctx, site, cred, current)
		}
		key := cred.storeKey()
		// A hold that cannot be read costs one more sign-in, no more.
		if held, left, err := shared.HeldRefusal(ctx, site.ID, key); err == nil && held != nil {
			return connector.UpstreamToken{}, &heldRefusal{refusal: held, left: left}
		}
		tok, err := s.signIn(ctx, site, cred, current)
		var te *toolerr.Error
		if credentialRefused(err) && errors.As(err, &te) {
			// Not holding it only costs another sign-in later.
			_ = shared.HoldRefusal(ctx, site.ID, key, te, refusalHold)
		}
		return tok, err
	}
}

// signIn refreshes the stored token or, without a usable refresh token,
// signs the API user in afresh.
func (s *serviceAuth) signIn(ctx context.Context, site connector.Site, cred serviceCredential, current connector.StoredToken) (connector.UpstreamToken, error) {
	hc := s.httpClient(site, nil)
	if current.Refresh.IsSet() {
		tok, err := OAuth{}.RefreshToken(ctx, site, cred.client, hc, current.Refresh)
		if err == nil {
			return tok, nil
		}
		if !errors.Is(err, connector.ErrRefreshTokenDead) {
			return connector.UpstreamToken{}, err
		}
	}
	return passwordGrant(ctx, site, cred, hc)
}

// passwordGrant signs the API user in (grant_type=password). Refusals are
// explained for the operator who set the connection up.
func passwordGrant(ctx context.Context, site connector.Site, cred serviceCredential, hc *http.Client) (connector.UpstreamToken, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
	t, err := tokenConfig(site, cred.client, "", ServiceScope).PasswordCredentialsToken(ctx, cred.username, cred.password.Reveal())
	if err == nil {
		tok, err := connector.UpstreamTokenOf(t)
		if err != nil {
			return connector.UpstreamToken{}, fmt.Errorf("acumatica: sign in service user on %s: %w", site.Slug, err)
		}
		return tok, nil
	}
	re, err := tokenAnswer(ctx, err)
	if re == nil {
		return connector.UpstreamToken{}, fmt.Errorf("acumatica: sign in service user on %s: %w", site.Slug, err)
	}
	switch status := re.Response.StatusCode; {
	case seatsTaken(re):
		// Before invalid_grant: a refusal for want of a seat may come
		// with that code, and says nothing about the credential.
		return connector.UpstreamToken{}, toolerr.New(toolerr.RateLimited,
			"Acumatica refused the sign-in: all API-user seats of its licence are in use (API Login Limit); seats free up about an hour after their last token").
			WithRetryAfter(time.Minute)
	case re.ErrorCode == "invalid_grant":
		return connector.UpstreamToken{}, toolerr.New(toolerr.AuthExpired,
			"Acumatica refused to sign in the service connection's API user %q (invalid_grant): the username or password is wrong, the password must be changed, the user is not in the client's tenant, or it has no API licence; ask the operator to fix the connection", cred.username)
	case re.ErrorCode == "invalid_client":
		return connector.UpstreamToken{}, toolerr.New(toolerr.AuthExpired,
			"Acumatica did not accept the service connection's OAuth client %q (invalid_client): check the client id (GUID@Tenant) and secret on Connected Applications (SM303010)", cred.client.ID)
	case re.ErrorCode == "unauthorized_client" || re.ErrorCode == "unsupported_grant_type":
		return connector.UpstreamToken{}, toolerr.New(toolerr.PermissionDenied,
			"the OAuth client %q is not registered for the Resource Owner Password flow, which service connections use; register a Connected Application with that flow (SM303010)", cred.client.ID)
	case re.ErrorCode == "invalid_scope":
		return connector.UpstreamToken{}, toolerr.New(toolerr.PermissionDenied,
			"the OAuth client %q may not request the scopes %q", cred.client.ID, ServiceScope)
	case refusedCredentials(status, re.Body):
		return connector.UpstreamToken{}, toolerr.New(toolerr.AuthExpired,
			"Acumatica refused to sign in the service connection's API user %q (Acumatica: %q): the username or password is wrong or was changed; ask the operator to fix the connection",
			cred.username, refusedDetail(re, cred.client.Secret.Reveal(), cred.password.Reveal()))
	case status >= 500:
		return connector.UpstreamToken{}, toolerr.New(toolerr.UpstreamUnavailable, "Acumatica's token endpoint failed with HTTP %d", status)
	default:
		return connector.UpstreamToken{}, toolerr.New(toolerr.UpstreamInvalidResponse, "Acumatica's token endpoint answered HTTP %d without a token", status)
	}
}

// VerifyAPICredential signs the API user in and reads the configured
// endpoint with the token, so a connection is saved only if it works: the
// credentials, the OAuth client's flow and the endpoint version. It
// returns the API user's name. A 403 on the probe still proves the
// credential: what the user may read is decided by its roles, call by call.
func (c *Connector) VerifyAPICredential(ctx context.Context, site connector.Site, hc *http.Client) (string, error) {
	set := siteSettings(site)
	probe := "/entity/" + url.PathEscape(set.EndpointName) + "/" + url.PathEscape(set.EndpointVersion) + "/Currency/$adHocSchema"
	if set.EndpointName != DefaultEndpointName {
		probe = "/entity/" + url.PathEscape(set.EndpointName) + "/" + url.PathEscape(set.EndpointVersion) + "/swagger.json"
	}
	nc := noRedirects(hc)
	var resp *http.Response
	var body []byte
	// A token kept from before (the store outlives an ERP that forgot its
	// tokens, e.g. after a restart, or a password changed since) may be
	// refused: reject it and try once more with a fresh sign-in, as tool
	// calls do.
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, site.URL(probe, nil), nil)
		if err != nil {
			return "", fmt.Errorf("acumatica: verify service connection on %s: %w", site.Slug, err)
		}
		req.Header.Set("Accept", "application/json")
		resp, err = nc.Do(req)
		if err != nil {
			return "", fmt.Errorf("acumatica: verify service connection on %s: %w", site.Slug, err)
		}
		body, _ = outbound.ReadBody(resp)
		if resp.StatusCode != http.StatusUnauthorized && !refusedCredentials(resp.StatusCode, body) || attempt > 0 ||
			!c.service.rejected(ctx, site, resp.Request.Header.Get("Authorization")) {
			break
		}
	}
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusForbidden:
	case refusedCredentials(resp.StatusCode, body):
		detail, _ := credentialsRefused(resp.StatusCode, body)
		if token, ok := strings.CutPrefix(resp.Request.Header.Get("Authorization"), "Bearer "); ok && quotesSent(detail, body, token) {
			detail = withheldDetail
		}
		return "", toolerr.New(toolerr.AuthExpired, "Acumatica issued a token to the API user but refused its credentials on the verification request (Acumatica: %q)", detail)
	case resp.StatusCode == http.StatusUnauthorized:
		return "", toolerr.New(toolerr.AuthExpired, "Acumatica issued a token to the API user but refused it (HTTP 401); check that the Connected Application grants the api scope")
	case resp.StatusCode == http.StatusNotFound:
		// A setting's refusal, so that a page names it by its form's label.
		return "", connector.InvalidSetting("endpoint_name", "and version give an endpoint this Acumatica instance does not have, "+set.endpoint(),
			"the site's endpoint %s does not exist on this Acumatica instance (HTTP 404); correct the site's endpoint_name and endpoint_version settings", set.endpoint())
	default:
		return "", toolerr.New(toolerr.UpstreamUnavailable, "Acumatica answered the verification request with HTTP %d", resp.StatusCode)
	}
	o, _, ok := c.service.owner(resp.Request.Header.Get("Authorization"))
	if !ok || o.site != site.ID.String() {
		return "", toolerr.New(toolerr.Internal, "the verification request was not sent with the service connection's token")
	}
	return o.user, nil
}

// seatsTaken reports whether a token request was refused for want of an
// API-user seat: HTTP 429, or any answer naming the API Login Limit
// (Acumatica's own client maps that to 429 whatever the status and code).
func seatsTaken(re *oauth2.RetrieveError) bool {
	return re.Response.StatusCode == http.StatusTooManyRequests || loginLimit.Match(re.Body)
}

// refusedCredentials is credentialsRefused as a condition.
func refusedCredentials(status int, body []byte) bool {
	_, ok := credentialsRefused(status, body)
	return ok
}

// noRedirects returns a copy of hc that hands 3xx answers back instead of
// following them: Acumatica answers a licence problem with a redirect to
// an error page, which must be read, not fetched.
func noRedirects(hc *http.Client) *http.Client {
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}
