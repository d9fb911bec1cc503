package connector

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// ServiceTokenStore keeps the short-lived ERP tokens of service (api_token)
// connections for ERPs that have no long-lived API key: an Acumatica
// service connection is an OAuth client plus a dedicated API user, whose
// password grant yields an access token and a refresh token that rotates on
// every use.
//
// Tokens are stored encrypted and shared by every replica. Renewal runs
// under a per-(site, ERP user) lock that holds across replicas, with
// in-process singleflight in front of it, so concurrent calls cause one
// renewal and a rotating refresh token is never presented twice (the loser
// of such a race would find it dead).
type ServiceTokenStore interface {
	// Token returns a usable access token of user on site. When the stored
	// token is missing, about to expire or was rejected, renew runs under
	// the lock; its token is stored and returned to every caller waiting
	// for it. An error from renew is returned unchanged (connectors return
	// *toolerr.Error values a model can act on).
	Token(ctx context.Context, site uuid.UUID, user string, renew RenewToken) (secrets.Secret, error)
	// Reject records that the ERP refused access (HTTP 401), so the next
	// Token renews — unless the stored token has already been replaced by
	// another caller, which Reject leaves alone.
	Reject(ctx context.Context, site uuid.UUID, user string, access secrets.Secret) error
}

// RenewToken obtains a new token while the store holds the lock. current is
// the stored token (its zero value when there is none); a connector uses
// its refresh token if it has one and signs in afresh otherwise.
type RenewToken func(ctx context.Context, current StoredToken) (UpstreamToken, error)

// StoredToken is a service connection's token as stored.
type StoredToken struct {
	Access secrets.Secret
	// Refresh is empty when the ERP issued none.
	Refresh   secrets.Secret
	ExpiresAt time.Time
}

// ServiceRefusals is what a ServiceTokenStore shared by replicas also
// implements: the ERP's refusal of a service credential, kept for every
// replica until it runs out, so that none of them signs the credential in
// again meanwhile. A bot calling in a loop would otherwise cost the ERP a
// failed sign-in per replica and hold, which can lock the API user out.
// A connector consults it only when it would sign in (in RenewToken,
// under the store's lock), so calls with a working token never read it.
type ServiceRefusals interface {
	// HoldRefusal keeps refusal, the error the ERP's refusal of user's
	// credential on site was told as, for hold.
	HoldRefusal(ctx context.Context, site uuid.UUID, user string, refusal *toolerr.Error, hold time.Duration) error
	// HeldRefusal returns the refusal held for user on site and how long
	// it still holds, or nil when none does.
	HeldRefusal(ctx context.Context, site uuid.UUID, user string) (*toolerr.Error, time.Duration, error)
}
