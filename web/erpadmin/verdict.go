package erpadmin

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/store/pagesession"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// VerdictKind sorts what asking the ERP again (AskAgain) found.
type VerdictKind int

// The zero VerdictKind is none of these: a caller that switches on a
// Verdict treats it as it treats VerdictInternal, never as VerdictAdmin.
const (
	// VerdictAdmin: the ERP still lists the person as an administrator.
	VerdictAdmin VerdictKind = iota + 1
	// VerdictNoToken: no ERP token of the person is kept under the key
	// on the site (never kept, dropped, swept, one that cannot be
	// opened), or the one kept is another person's.
	VerdictNoToken
	// VerdictTokenRefused: the ERP no longer accepts the kept token
	// (revoked, expired).
	VerdictTokenRefused
	// VerdictUnreachable: the ERP could not be asked.
	VerdictUnreachable
	// VerdictNotAdmin: the ERP answered that the person does not
	// administer it; Verdict.Evidence says what it answered.
	VerdictNotAdmin
	// VerdictInternal: erpgate itself failed; Verdict.Step says where
	// and Verdict.Err what.
	VerdictInternal
	// VerdictNoOAuthClient: the kept token needed renewing and the site
	// has no OAuth client to renew it with (the operator removed it), so
	// the person can no longer be asked about; Verdict.Err says why.
	VerdictNoOAuthClient
)

// Step is where a VerdictInternal failed.
type Step int

const (
	// StepToken: reading the kept token (the database).
	StepToken Step = iota + 1
	// StepSite: the site as the connector sees it (its stored address).
	StepSite
	// StepAsk: asking the ERP (no connector of the site's kind can).
	StepAsk
)

// Words names the step in a log line; readToken names StepToken in the
// caller's words (whose token it is).
func (s Step) Words(readToken string) string {
	switch s {
	case StepToken:
		return readToken
	case StepSite:
		return "the site for the ERP"
	}
	return "ask the ERP again"
}

// Verdict is the outcome of AskAgain.
type Verdict struct {
	Kind VerdictKind
	// Evidence is the ERP's answer of a VerdictNotAdmin; it may be empty
	// (the ERP did not say why).
	Evidence string
	// Err is, for VerdictNoToken, why no token was found (nil when the
	// token kept is another person's), and for VerdictInternal what
	// failed, at Step. It never carries the token.
	Err  error
	Step Step
}

// Said is the ERP's evidence of a VerdictNotAdmin for a sentence, or
// words saying it gave none.
func (v Verdict) Said() string {
	if v.Evidence == "" {
		return "the ERP did not say why"
	}
	return v.Evidence
}

// ClientOf returns the OAuth client people sign in to a site with
// (siteadmin.Service.OAuthClient): the one a kept refresh token was
// issued to. An error wrapping ErrNoOAuthClient says the site has none.
type ClientOf func(ctx context.Context) (connector.OAuthClient, error)

// ErrNoOAuthClient is what a ClientOf returns (wrapped) when the site has
// no OAuth client any more: nobody can sign in to it, so a kept token
// cannot be renewed.
var ErrNoOAuthClient = errors.New("erpadmin: the site has no OAuth client")

// AskAgain asks the ERP of site once more whether user still administers
// it, with the ERP token kept in tokens under key (an owner session's
// cookie, a registration's key) on that site: the token must be user's
// (case aside, as the ERPs name people), and the ERP is asked about user
// (Service.CheckAgain). What to do with the verdict (the words, the
// record, the session) is the caller's.
//
// An access token that expires within a minute, or that the ERP refuses,
// is first renewed with the refresh token kept with it and site's OAuth
// client (client; nil renews nothing), as people's ERP tokens are, and
// the new pair kept in its place (pagesession.Tokens.Refresh: once across
// replicas): only a refresh the ERP refuses is VerdictTokenRefused, and
// one that fails for now is VerdictUnreachable.
func (s *Service) AskAgain(ctx context.Context, tokens *pagesession.Tokens, site sites.Site, key, user string, client ClientOf) Verdict {
	kept, token, err := tokens.Kept(ctx, site.ID, key)
	switch {
	case errors.Is(err, pagesession.ErrNoToken):
		return Verdict{Kind: VerdictNoToken, Err: err}
	case err != nil:
		return Verdict{Kind: VerdictInternal, Step: StepToken, Err: err}
	case !strings.EqualFold(kept, user):
		return Verdict{Kind: VerdictNoToken}
	}
	csite, err := site.Connector()
	if err != nil {
		return Verdict{Kind: VerdictInternal, Step: StepSite, Err: err}
	}
	renewable := client != nil && token.Refresh.IsSet()
	renewed := false
	if renewable && !token.ExpiresAt.IsZero() && time.Until(token.ExpiresAt) < renewSkew {
		var v *Verdict
		if token, v = s.renewKept(ctx, tokens, site, csite, key, token.Access, client); v != nil {
			return *v
		}
		renewed = true
	}
	answer, err := s.CheckAgain(ctx, site.Kind, csite, user, token.Access)
	if errors.Is(err, ErrTokenRefused) && renewable && !renewed {
		// Refused before its stated expiry, or with none stated: renewed
		// like an expired one, and the ERP asked once more.
		var v *Verdict
		if token, v = s.renewKept(ctx, tokens, site, csite, key, token.Access, client); v != nil {
			return *v
		}
		answer, err = s.CheckAgain(ctx, site.Kind, csite, user, token.Access)
	}
	switch {
	case errors.Is(err, ErrTokenRefused):
		return Verdict{Kind: VerdictTokenRefused}
	case errors.Is(err, ErrUnreachable):
		return Verdict{Kind: VerdictUnreachable}
	case err != nil:
		return Verdict{Kind: VerdictInternal, Step: StepAsk, Err: err}
	case !answer.Admin:
		return Verdict{Kind: VerdictNotAdmin, Evidence: answer.Evidence}
	}
	return Verdict{Kind: VerdictAdmin}
}

// renewSkew is how long before its stated expiry a kept access token is
// renewed (the people's path's skew).
const renewSkew = time.Minute

// renewKept renews the ERP tokens kept under key on site, stale being the
// access token in hand, with the connector's refresh grant at the ERP,
// within Deps.Timeout. It returns the tokens to ask with, or the verdict
// when they could not be renewed.
func (s *Service) renewKept(ctx context.Context, tokens *pagesession.Tokens, site sites.Site, csite connector.Site, key string,
	stale secrets.Secret, client ClientOf) (connector.StoredToken, *Verdict) {
	oauth, _, err := s.oauthOf(site.Kind, false)
	if err != nil {
		return connector.StoredToken{}, &Verdict{Kind: VerdictInternal, Step: StepAsk, Err: err}
	}
	oc, err := client(ctx)
	if errors.Is(err, ErrNoOAuthClient) {
		return connector.StoredToken{}, &Verdict{Kind: VerdictNoOAuthClient, Err: err}
	}
	if err != nil {
		return connector.StoredToken{}, &Verdict{Kind: VerdictInternal, Step: StepSite, Err: err}
	}
	uctx, cancel := context.WithTimeout(ctx, s.deps.Timeout)
	defer cancel()
	renewed, err := tokens.Refresh(uctx, site.ID, key, stale, func(ctx context.Context, current connector.StoredToken) (connector.UpstreamToken, error) {
		return oauth.RefreshToken(ctx, csite, oc, s.deps.HTTPClient(csite, nil), current.Refresh)
	})
	log := s.log.With(zap.String("site_slug", site.Slug))
	switch {
	case err == nil:
		log.Info("a kept ERP token of an owner renewed")
		return renewed, nil
	case errors.Is(err, connector.ErrRefreshTokenDead):
		log.Info("the ERP refused to renew a kept ERP token of an owner", zap.Error(err))
		return connector.StoredToken{}, &Verdict{Kind: VerdictTokenRefused}
	case errors.Is(err, pagesession.ErrNoToken):
		return connector.StoredToken{}, &Verdict{Kind: VerdictNoToken, Err: err}
	case errors.Is(err, pagesession.ErrRefreshOvertaken) || unreachable(err) || errors.As(err, new(*toolerr.Error)):
		// Transient, as for people's tokens: the owner may try again.
		log.Warn("a kept ERP token of an owner could not be renewed just now", zap.Error(err))
		return connector.StoredToken{}, &Verdict{Kind: VerdictUnreachable}
	}
	return connector.StoredToken{}, &Verdict{Kind: VerdictInternal, Step: StepToken, Err: err}
}
