// Package erpadmin proves that the person in the browser administers an
// ERP: a sign-in at that ERP with a given OAuth client, the code exchanged
// for a token, the person identified, and the connector's administrator
// check (connector.AdminProof) read as them. Self-service registration
// proves ownership with it before anything is saved, and the site owner's
// page signs its owners in with it. The approval page uses the same
// sign-in to learn only who the person is (Purpose.IdentityOnly).
//
// The ERP sends the browser back to the target's redirect URI
// (Target.CallbackPath), the same one people's sign-ins at that site use,
// so that an ERP administrator configures one redirect URI on their OAuth
// client. A code that comes back at another redirect URI than its
// target's is never exchanged: another ERP sent it (the mix-up attack). A
// state made here begins with StatePrefix; cmd/erpgate sends those
// callbacks to ServeCallback and every other one to the authorization
// server.
//
// State lives in Postgres (erpadmin_proofs): single-use (the callback
// claims it by deleting it), bound to the browser that began it by a
// cookie, expiring (Deps.TTL, 10 minutes), with a PKCE S256 verifier kept
// encrypted. A secret is never kept here: Purpose.Target hands the OAuth
// client over again when the code is exchanged.
package erpadmin

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"

	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/secrets"
	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/web/pagekit"
)

// StatePrefix begins every state this package puts in an ERP authorization
// request.
const StatePrefix = "adm_"

// Target is what a proof signs in with: an ERP (registered or not yet) and
// an OAuth client on it.
type Target struct {
	// SiteID is the registered site, or uuid.Nil for a registration.
	SiteID uuid.UUID
	Kind   string
	// Site is the ERP as the connector sees it (base URL, settings).
	Site   connector.Site
	Client connector.OAuthClient
	// CallbackPath is the path, under the public base URL, of the
	// redirect URI the OAuth client has (sites.Site.CallbackPath).
	CallbackPath string
}

// Proof is what a finished sign-in found.
type Proof struct {
	User connector.UpstreamUser
	// Check is the administrator check's answer; the zero AdminCheck
	// (not an administrator) for an IdentityOnly purpose, which does not
	// ask.
	Check connector.AdminCheck
	// Token is the person's ERP access token from the sign-in (empty
	// when the code was not exchanged), for a purpose that asks the ERP
	// again later as them (Service.CheckAgain). Never log or show it.
	Token secrets.Secret
	// Refresh is the refresh token the ERP issued with Token (empty when
	// it issued none), which renews Token when it expires before the
	// purpose is done with it (AskAgain); Expires is when Token expires
	// (zero when the ERP did not say). Never log or show it.
	Refresh secrets.Secret
	Expires time.Time
}

// Tokens is what a purpose keeps of the sign-in to ask the ERP again
// (pagesession.Tokens.KeepTokens).
func (p Proof) Tokens() connector.StoredToken {
	return connector.StoredToken{Access: p.Token, Refresh: p.Refresh, ExpiresAt: p.Expires}
}

// Purpose is what a proof is for (registration, the owner's page). It is
// looked up by name when the ERP sends the browser back.
type Purpose struct {
	// Name is stored with the sign-in: short, stable ("register", "manage").
	Name string
	// IdentityOnly signs the person in and identifies them without the
	// administrator check: the purpose (the approval page) decides by who
	// they are, not by whether they administer the ERP. Its connector
	// needs OAuth sign-in but not connector.AdminProof.
	IdentityOnly bool
	// Target returns what to sign in with for ref (a pending
	// registration's id, a site's id). It is called when the sign-in
	// begins and again when the code is exchanged, so a secret is never
	// kept by this package.
	Target func(ctx context.Context, ref string) (Target, error)
	// Done continues in the browser once the ERP sent it back. err is nil
	// when p is a complete proof (p.Check.Admin may still be false: the
	// purpose refuses, in its own words); otherwise it is one of the
	// Err values below, and p holds what was learnt before it.
	Done func(w http.ResponseWriter, r *http.Request, ref string, p Proof, err error)
}

// Service runs proofs. It is safe for concurrent use and keeps its state in
// Postgres, so any replica serves any step. Make it with New.
type Service struct {
	deps     Deps
	log      *zap.Logger
	kit      *pagekit.Kit
	store    *store
	mu       sync.RWMutex
	purposes map[string]Purpose
	// stateKeys make (the first) and check the check values of states
	// (secrets.Keyring.DeriveKeys(stateKeyPurpose)); failedStates holds
	// the hashes of states that carried one and found nothing.
	stateKeys    [][]byte
	failedStates sourcelimit.TokenSet
}

// stateKeyPurpose is the secrets.Keyring.DeriveKey purpose of the key a
// state's check value is made with; stateTokenPrefix is a state's prefix
// as secrets.NewTaggedToken takes it (StatePrefix without its "_").
const (
	stateKeyPurpose  = "erpadmin sign-in state"
	stateTokenPrefix = "adm"
)
