// Package approval keeps the writes that wait for a person's approval
// (docs/writes.md): a write tool's call is proposed (a pending action with
// the ERP's preview of the change), a person approves or rejects it on
// erpgate's page, signed in through the ERP as the user who must approve,
// and the call's retry claims the approved action and runs it exactly
// once.
//
// Everything lives in Postgres (pending_actions), so any replica serves
// any step. Every query but Lookup (the page's first read, by an id that
// cannot be guessed) takes the site id.
package approval

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Status is where a pending action stands.
type Status string

// The statuses, in the order an action passes through them.
const (
	Proposed Status = "proposed"
	Approved Status = "approved"
	Rejected Status = "rejected"
	// Withdrawn: approved, then its approver withdrew the approval before
	// a call claimed it; it is never run.
	Withdrawn Status = "withdrawn"
	Executing Status = "executing"
	Executed  Status = "executed"
	Failed    Status = "failed"
)

// TTL is how long a proposal, and the approval given to it, stays usable.
const TTL = 10 * time.Minute

// Key identifies what a call proposes: who, through which client, on
// which site, which tool, with which arguments. Two calls with the same
// key are the same proposal.
type Key struct {
	SiteID uuid.UUID
	// AuthType is "oauth" or "service_token".
	AuthType string
	// Principal is the ERP user an OAuth call runs as, or the service
	// token's id.
	Principal string
	// ClientID is the MCP client the call comes through: the OAuth client
	// id, or the service token's id. An approval given to what one client
	// proposed is not another client's, even the same person's.
	ClientID string
	Tool     string
	// ArgsDigest is Digest of the call's validated arguments.
	ArgsDigest [32]byte
}

// Action is a pending action.
type Action struct {
	ID  uuid.UUID
	Key Key
	// SiteSlug and Kind name the site and its connector, for pages and
	// events.
	SiteSlug string
	Kind     string
	// ClientID is the MCP client that proposed it (Key.ClientID).
	ClientID string
	// Approver is the ERP user who must approve: the caller itself for
	// OAuth, the site's named approver for a service token.
	Approver string
	Preview  connector.Preview
	Status   Status

	CreatedAt time.Time
	ExpiresAt time.Time
	// DecidedAt and DecidedBy are set once a person approved or rejected.
	DecidedAt time.Time
	DecidedBy string
	// WithdrawnAt is when the approver withdrew the approval.
	WithdrawnAt time.Time
	// ExecutedAt is when the claim that runs it was made.
	ExecutedAt time.Time
	// Result is the tool's result once Executed (as the caller saw it,
	// redacted); ErrorCode and ErrorMessage say why it Failed, in the
	// words its caller was told. ERPSaid is the ERP's own words when it
	// refused the change (redacted), for the approval page; for a change
	// it made, but not as approved, what it saved otherwise, in people's
	// words.
	Result       json.RawMessage
	ErrorCode    string
	ErrorMessage string
	ERPSaid      string
}

// Expired reports whether the action can no longer be approved or run.
func (a Action) Expired(now time.Time) bool { return !now.Before(a.ExpiresAt) }

// NotAsApproved reports whether the ERP made the executed action, but not
// as approved (Store.FinishNotAsApproved): ErrorMessage says what differs.
func (a Action) NotAsApproved() bool { return a.Status == Executed && a.ErrorCode != "" }

// OutcomeUnknown reports whether a failed action may have been made all
// the same (see OutcomeUnknown): it is told as "check the ERP", never as a
// failure to propose again, which could make the change twice.
func (a Action) OutcomeUnknown() bool { return a.Status == Failed && OutcomeUnknown(a.ErrorCode) }

// OutcomeUnknown reports whether a write that failed with code may have
// reached the ERP and been made: its answer timed out or did not come
// (the connection broke, the ERP or a proxy in front of it failed), or
// came but could not be read or kept. Only the ERP's own refusals, and
// erpgate's refusals before it sent anything, say nothing was written.
func OutcomeUnknown(code string) bool {
	switch toolerr.Code(code) {
	case toolerr.UpstreamTimeout, toolerr.UpstreamUnavailable, toolerr.UpstreamInvalidResponse,
		toolerr.ResponseTooLarge, toolerr.Internal:
		return true
	}
	return false
}

// The errors of the store. Each is a sentence a page or a tool error may
// build on; none carries a value of the action.
var (
	// ErrNotFound: no such action on that site.
	ErrNotFound = errors.New("approval: no such pending action")
	// ErrWrongUser: the person deciding is not the approver.
	ErrWrongUser = errors.New("approval: signed in as another ERP user than the one who must approve")
	// ErrDecided: approved or rejected already.
	ErrDecided = errors.New("approval: already decided")
	// ErrExpired: past its expiry.
	ErrExpired = errors.New("approval: expired")
	// ErrNotApproved: a claim (or a withdrawal) of an action not (or not
	// yet) approved.
	ErrNotApproved = errors.New("approval: not approved")
	// ErrWithdrawn: a claim (or a second withdrawal) of an action whose
	// approval its approver withdrew.
	ErrWithdrawn = errors.New("approval: approval withdrawn")
	// ErrUsed: a claim of an action already run (or running).
	ErrUsed = errors.New("approval: already used")
	// ErrMismatch: a claim whose key is not the action's.
	ErrMismatch = errors.New("approval: for another caller, tool or arguments")
	// ErrOtherClient: a claim whose key is the action's but for the
	// client: the same person's call through another MCP client.
	ErrOtherClient = errors.New("approval: proposed through another client")
)
