package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/infra/database"
)

// ErrRejected: a claim of an action its approver rejected.
var ErrRejected = errors.New("approval: rejected")

// SweepAfter is how long past its expiry an action is kept (for the
// page's "already decided" and the caller's "already used").
const SweepAfter = 24 * time.Hour

// The audit actions the store records in admin_events.
const (
	EventProposed  = "write_proposed"
	EventApproved  = "write_approved"
	EventRejected  = "write_rejected"
	EventWithdrawn = "write_withdrawn"
	EventExecuted  = "write_executed"
	EventFailed    = "write_failed"
	EventRefused   = "write_refused"
)

// EventSignOutEverywhere is a person ending all their sessions on a
// site's approval pages, in every browser; the approval page (web/approve)
// records it.
const EventSignOutEverywhere = "approval_sign_out_everywhere"

// The audit actor kinds (migration 00025).
const (
	ActorERPUser   = "erp_user"
	ActorMCPClient = "mcp_client"
)

// Store keeps pending actions in Postgres. Every method but Lookup takes
// the site id; every change is one conditional UPDATE, so replicas need
// no coordination.
type Store struct {
	pool *pgxpool.Pool
	log  *zap.Logger
	now  func() time.Time
}

// NewStore returns a store on pool; log receives what could not be
// audited.
func NewStore(pool *pgxpool.Pool, log *zap.Logger) *Store {
	if log == nil {
		log = zap.NewNop()
	}
	return &Store{pool: pool, log: log, now: time.Now}
}

// SetNow replaces the clock (tests); every expiry is decided by it, never
// by the database's clock.
func (s *Store) SetNow(now func() time.Time) { s.now = now }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

const columns = `id, site_id, site_slug, kind, auth_type, principal, tool, args_digest, client_id, approver,
	preview, status, created_at, expires_at, coalesce(decided_at, 'epoch'), decided_by,
	coalesce(withdrawn_at, 'epoch'), coalesce(executed_at, 'epoch'), result, error_code, error_message, erp_said`

func scanAction(row pgx.Row) (Action, error) {
	var (
		a                     Action
		digest, preview, res  []byte
		status                string
		decidedAt, executedAt time.Time
		withdrawnAt           time.Time
	)
	err := row.Scan(&a.ID, &a.Key.SiteID, &a.SiteSlug, &a.Kind, &a.Key.AuthType, &a.Key.Principal, &a.Key.Tool,
		&digest, &a.ClientID, &a.Approver, &preview, &status, &a.CreatedAt, &a.ExpiresAt, &decidedAt, &a.DecidedBy,
		&withdrawnAt, &executedAt, &res, &a.ErrorCode, &a.ErrorMessage, &a.ERPSaid)
	if err != nil {
		return Action{}, err
	}
	if len(digest) != len(a.Key.ArgsDigest) {
		return Action{}, fmt.Errorf("approval: stored digest of %d bytes", len(digest))
	}
	copy(a.Key.ArgsDigest[:], digest)
	a.Key.ClientID = a.ClientID
	if err := json.Unmarshal(preview, &a.Preview); err != nil {
		return Action{}, fmt.Errorf("approval: stored preview: %w", err)
	}
	a.Status = Status(status)
	if !decidedAt.Equal(time.Unix(0, 0)) {
		a.DecidedAt = decidedAt
	}
	if !withdrawnAt.Equal(time.Unix(0, 0)) {
		a.WithdrawnAt = withdrawnAt
	}
	if !executedAt.Equal(time.Unix(0, 0)) {
		a.ExecutedAt = executedAt
	}
	if len(res) > 0 {
		a.Result = res
	}
	return a, nil
}

// Propose stores a new pending action: a.Key, SiteSlug, Kind, Approver
// and Preview set, and the client in Key.ClientID or ClientID. It returns it with its ID, Status proposed,
// CreatedAt and ExpiresAt (TTL from now), and records write_proposed.
func (s *Store) Propose(ctx context.Context, a Action) (Action, error) {
	if a.Approver == "" {
		return Action{}, errors.New("approval: propose: no approver")
	}
	if a.Key.AuthType != "oauth" && a.Key.AuthType != "service_token" {
		return Action{}, fmt.Errorf("approval: propose: auth type %q", a.Key.AuthType)
	}
	if a.Key.ClientID == "" {
		a.Key.ClientID = a.ClientID
	}
	if a.ClientID != "" && a.ClientID != a.Key.ClientID {
		return Action{}, errors.New("approval: propose: two client ids")
	}
	preview, err := json.Marshal(a.Preview)
	if err != nil {
		return Action{}, fmt.Errorf("approval: propose: %w", err)
	}
	// A NUL from the call's arguments would make jsonb refuse the row.
	preview = database.StorableJSON(preview)
	id, err := uuid.NewRandom()
	if err != nil {
		return Action{}, fmt.Errorf("approval: propose: %w", err)
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	row := s.pool.QueryRow(ctx, `
		INSERT INTO pending_actions (id, site_id, site_slug, kind, auth_type, principal, tool, args_digest,
			client_id, approver, preview, status, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'proposed', $12, $13)
		RETURNING `+columns,
		id, a.Key.SiteID, a.SiteSlug, a.Kind, a.Key.AuthType, a.Key.Principal, a.Key.Tool, a.Key.ArgsDigest[:],
		a.Key.ClientID, a.Approver, preview, now, now.Add(TTL))
	out, err := scanAction(row)
	if err != nil {
		return Action{}, fmt.Errorf("approval: propose %s: %w", a.Key.Tool, database.Classify(err))
	}
	s.audit(ctx, out, EventProposed, ActorMCPClient, out.ClientID, "success", "", nil)
	return out, nil
}

// Open returns the action for k whose outcome the caller has not been
// told yet (see Report): an approved one first (two calls racing to
// propose make two actions, and the person may approve either), else the
// newest; false when there is none.
func (s *Store) Open(ctx context.Context, k Key) (Action, bool, error) {
	row := s.pool.QueryRow(ctx, `SELECT `+columns+` FROM pending_actions
		WHERE site_id = $1 AND auth_type = $2 AND principal = $3 AND tool = $4 AND args_digest = $5
		  AND client_id = $6 AND NOT reported
		ORDER BY status = 'approved' DESC, created_at DESC LIMIT 1`,
		k.SiteID, k.AuthType, k.Principal, k.Tool, k.ArgsDigest[:], k.ClientID)
	a, err := scanAction(row)
	if database.IsNoRows(err) {
		return Action{}, false, nil
	}
	if err != nil {
		return Action{}, false, fmt.Errorf("approval: open %s: %w", k.Tool, database.Classify(err))
	}
	return a, true, nil
}

// Lookup returns the action by id alone: the approval page's first read,
// before it knows the site (the id is random, 122 bits). ErrNotFound.
func (s *Store) Lookup(ctx context.Context, id uuid.UUID) (Action, error) {
	a, err := scanAction(s.pool.QueryRow(ctx, `SELECT `+columns+` FROM pending_actions WHERE id = $1`, id))
	return s.found(a, err, id)
}

// Get returns the site's action id. ErrNotFound.
func (s *Store) Get(ctx context.Context, siteID, id uuid.UUID) (Action, error) {
	a, err := scanAction(s.pool.QueryRow(ctx,
		`SELECT `+columns+` FROM pending_actions WHERE id = $1 AND site_id = $2`, id, siteID))
	return s.found(a, err, id)
}

func (s *Store) found(a Action, err error, id uuid.UUID) (Action, error) {
	if database.IsNoRows(err) {
		return Action{}, ErrNotFound
	}
	if err != nil {
		return Action{}, fmt.Errorf("approval: get %s: %w", id, database.Classify(err))
	}
	return a, nil
}

// Decide approves or rejects the site's proposed action id as erpUser,
// once: one conditional UPDATE checks that it is still proposed, that
// erpUser is its approver and that it has not expired. Otherwise
// ErrNotFound, ErrWrongUser, ErrDecided or ErrExpired (with the action,
// except for ErrNotFound). Every outcome is audited.
func (s *Store) Decide(ctx context.Context, siteID, id uuid.UUID, erpUser string, approve bool) (Action, error) {
	status, event := Rejected, EventRejected
	if approve {
		status, event = Approved, EventApproved
	}
	now := s.now().UTC()
	a, err := scanAction(s.pool.QueryRow(ctx, `
		UPDATE pending_actions SET status = $5, decided_at = $4, decided_by = $3
		WHERE id = $1 AND site_id = $2 AND status = 'proposed' AND approver = $3 AND $3 <> '' AND expires_at > $4
		RETURNING `+columns, id, siteID, erpUser, now, string(status)))
	if err == nil {
		s.audit(ctx, a, event, ActorERPUser, erpUser, "success", "", nil)
		return a, nil
	}
	if !database.IsNoRows(err) {
		return Action{}, fmt.Errorf("approval: decide %s: %w", id, database.Classify(err))
	}
	a, err = s.Get(ctx, siteID, id)
	if err != nil {
		return Action{}, err
	}
	switch {
	case a.Approver != erpUser || erpUser == "":
		err = ErrWrongUser
	case a.Status != Proposed:
		err = ErrDecided
	default:
		err = ErrExpired
	}
	s.audit(ctx, a, EventRefused, ActorERPUser, erpUser, "refused", reason(err), map[string]any{"decision": string(status)})
	return a, err
}

// Withdraw withdraws the approval erpUser gave to the site's action id,
// before any call claimed it: one conditional UPDATE checks that it is
// still approved (not yet claimed: Claim's UPDATE checks the same, so of
// a withdrawal and a claim racing exactly one wins), that erpUser is its
// approver and the one who approved it, and that it has not expired.
// Otherwise ErrNotFound, ErrWrongUser, ErrNotApproved (still proposed),
// ErrDecided (rejected), ErrWithdrawn, ErrUsed (claimed: running or done)
// or ErrExpired, with the action except for ErrNotFound. Every outcome is
// audited.
func (s *Store) Withdraw(ctx context.Context, siteID, id uuid.UUID, erpUser string) (Action, error) {
	now := s.now().UTC().Truncate(time.Microsecond)
	a, err := scanAction(s.pool.QueryRow(ctx, `
		UPDATE pending_actions SET status = 'withdrawn', withdrawn_at = $4
		WHERE id = $1 AND site_id = $2 AND status = 'approved' AND approver = $3 AND decided_by = $3 AND $3 <> ''
		  AND expires_at > $4
		RETURNING `+columns, id, siteID, erpUser, now))
	if err == nil {
		s.audit(ctx, a, EventWithdrawn, ActorERPUser, erpUser, "success", "", nil)
		return a, nil
	}
	if !database.IsNoRows(err) {
		return Action{}, fmt.Errorf("approval: withdraw %s: %w", id, database.Classify(err))
	}
	a, err = s.Get(ctx, siteID, id)
	if err != nil {
		return Action{}, err
	}
	switch {
	case a.Approver != erpUser || erpUser == "" || (a.DecidedBy != "" && a.DecidedBy != erpUser):
		err = ErrWrongUser
	case a.Status == Proposed && !a.Expired(now):
		err = ErrNotApproved
	case a.Status == Rejected:
		err = ErrDecided
	case a.Status == Withdrawn:
		err = ErrWithdrawn
	case a.Status == Executing || a.Status == Executed || a.Status == Failed:
		err = ErrUsed
	default:
		err = ErrExpired
	}
	s.audit(ctx, a, EventRefused, ActorERPUser, erpUser, "refused", reason(err), map[string]any{"decision": "withdraw"})
	return a, err
}

// Claim flips the site's approved action id to executing, for the caller
// of k, in one conditional UPDATE that checks the status, the expiry and
// the whole key: of two racing claims exactly one wins. The winner runs
// the write and then calls Finish. Otherwise ErrNotFound, ErrMismatch,
// ErrOtherClient (the key but for the client), ErrNotApproved (still proposed), ErrRejected, ErrUsed (executing or
// done) or ErrExpired, with the action when the key matched; every
// refusal is audited.
func (s *Store) Claim(ctx context.Context, k Key, id uuid.UUID) (Action, error) {
	now := s.now().UTC()
	a, err := scanAction(s.pool.QueryRow(ctx, `
		UPDATE pending_actions SET status = 'executing', executed_at = $7, error_code = '', error_message = '', erp_said = ''
		WHERE id = $1 AND site_id = $2 AND auth_type = $3 AND principal = $4 AND tool = $5 AND args_digest = $6
		  AND client_id = $8 AND status = 'approved' AND expires_at > $7
		RETURNING `+columns, id, k.SiteID, k.AuthType, k.Principal, k.Tool, k.ArgsDigest[:], now, k.ClientID))
	if err == nil {
		return a, nil
	}
	if !database.IsNoRows(err) {
		return Action{}, fmt.Errorf("approval: claim %s: %w", id, database.Classify(err))
	}
	a, err = s.Get(ctx, k.SiteID, id)
	if errors.Is(err, ErrNotFound) {
		s.audit(ctx, Action{ID: id, Key: k}, EventRefused, ActorMCPClient, "", "refused", reason(ErrNotFound), nil)
		return Action{}, ErrNotFound
	}
	if err != nil {
		return Action{}, err
	}
	sameButClient := a.Key
	sameButClient.ClientID = k.ClientID
	switch {
	case sameButClient == k && a.Key != k:
		s.audit(ctx, a, EventRefused, ActorMCPClient, a.ClientID, "refused", reason(ErrOtherClient),
			map[string]any{"caller_client_id": k.ClientID})
		return Action{}, ErrOtherClient
	case a.Key != k:
		s.audit(ctx, a, EventRefused, ActorMCPClient, a.ClientID, "refused", reason(ErrMismatch),
			map[string]any{"caller": k.Principal, "caller_tool": k.Tool})
		return Action{}, ErrMismatch
	case a.Status == Executing || a.Status == Executed || a.Status == Failed:
		err = ErrUsed
	case a.Status == Rejected:
		err = ErrRejected
	case a.Status == Withdrawn:
		err = ErrWithdrawn
	case a.Expired(now):
		err = ErrExpired
	default:
		err = ErrNotApproved
	}
	if !errors.Is(err, ErrNotApproved) {
		s.audit(ctx, a, EventRefused, ActorMCPClient, a.ClientID, "refused", reason(err), nil)
	}
	return a, err
}

// Finish records the outcome of the site's executing action id: executed
// with the result (as the caller saw it, redacted), or failed with
// errCode and errMsg when errCode is not empty. An action not executing
// is left as it is (ErrUsed): an outcome is stored once.
func (s *Store) Finish(ctx context.Context, siteID, id uuid.UUID, result json.RawMessage, errCode, errMsg string) error {
	status, event, outcome := Executed, EventExecuted, "success"
	if errCode != "" {
		status, event, outcome = Failed, EventFailed, "error"
		result = nil
	}
	return s.finish(ctx, siteID, id, status, event, outcome, result, errCode, errMsg, "")
}

// Fail records that the site's executing action id failed with errCode
// and errMsg (the words the caller was told), and erpSaid, the ERP's own
// words when it refused the change (toolerr.Error.ERPSaid), which the
// approval page quotes. An action not executing is left as it is
// (ErrUsed).
func (s *Store) Fail(ctx context.Context, siteID, id uuid.UUID, errCode, errMsg, erpSaid string) error {
	return s.finish(ctx, siteID, id, Failed, EventFailed, "error", nil, errCode, errMsg, erpSaid)
}

// Release gives the site's executing action id back its approval: its run
// failed in a way certain to have written nothing
// (toolerr.Error.NothingWritten), so the same call may run it again. One
// conditional UPDATE flips executing back to approved, the expiry as it
// was (never extended), keeping errCode and erpSaid (the ERP's words, for
// the approval page) of the try until the next claim; of two replicas
// racing the next claim exactly one wins, as for the first. An action
// not executing is left as it is (ErrUsed). The try is audited as
// write_failed with approval_kept.
func (s *Store) Release(ctx context.Context, siteID, id uuid.UUID, errCode, erpSaid string) (Action, error) {
	a, err := scanAction(s.pool.QueryRow(ctx, `
		UPDATE pending_actions SET status = 'approved', executed_at = NULL, result = NULL, error_code = $3,
			error_message = '', erp_said = $4
		WHERE id = $1 AND site_id = $2 AND status = 'executing'
		RETURNING `+columns, id, siteID, errCode, database.StorableText(erpSaid)))
	if database.IsNoRows(err) {
		return Action{}, ErrUsed
	}
	if err != nil {
		return Action{}, fmt.Errorf("approval: release %s: %w", id, database.Classify(err))
	}
	s.audit(ctx, a, EventFailed, ActorMCPClient, a.ClientID, "error", errCode, map[string]any{"approval_kept": true})
	return a, nil
}

// FinishNotAsApproved records that the site's executing action id was
// made by the ERP, but not as approved (connector.ErrNotAsApproved): it
// is executed, with the tool's errCode and errMsg saying what differs
// (NotAsApproved), and erpSaid saying it for people (what the ERP saved
// otherwise, toolerr.Error.ERPSaid), which the approval page shows; it is
// never run again.
func (s *Store) FinishNotAsApproved(ctx context.Context, siteID, id uuid.UUID, errCode, errMsg, erpSaid string) error {
	return s.finish(ctx, siteID, id, Executed, EventExecuted, "error", nil, errCode, errMsg, erpSaid)
}

func (s *Store) finish(ctx context.Context, siteID, id uuid.UUID, status Status, event, outcome string, result json.RawMessage, errCode, errMsg, erpSaid string) error {
	var res any
	if len(result) > 0 {
		res = database.StorableJSON(result)
	}
	a, err := scanAction(s.pool.QueryRow(ctx, `
		UPDATE pending_actions SET status = $3, result = $4, error_code = $5, error_message = $6, erp_said = $7
		WHERE id = $1 AND site_id = $2 AND status = 'executing'
		RETURNING `+columns, id, siteID, string(status), res, errCode, database.StorableText(errMsg), database.StorableText(erpSaid)))
	if database.IsNoRows(err) {
		return ErrUsed
	}
	if err != nil {
		return fmt.Errorf("approval: finish %s: %w", id, database.Classify(err))
	}
	s.audit(ctx, a, event, ActorMCPClient, a.ClientID, outcome, errCode, nil)
	return nil
}

// Report marks the site's action id as told to its caller: Open no
// longer returns it, so the same call proposes afresh.
func (s *Store) Report(ctx context.Context, siteID, id uuid.UUID) error {
	if _, err := s.pool.Exec(ctx, `UPDATE pending_actions SET reported = true WHERE id = $1 AND site_id = $2`,
		id, siteID); err != nil {
		return fmt.Errorf("approval: report %s: %w", id, database.Classify(err))
	}
	return nil
}

// Sweep deletes the actions expired more than SweepAfter ago, of every
// site (the deployment's housekeeping, not a tenant's query).
func (s *Store) Sweep(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM pending_actions WHERE expires_at < $1`, s.now().Add(-SweepAfter))
	if err != nil {
		return 0, fmt.Errorf("approval: sweep: %w", database.Classify(err))
	}
	return tag.RowsAffected(), nil
}

// Refused records a call refused for its approval (a replay, a rejected
// or expired action, a forged or foreign request state): the audit row
// write_refused with why. a may hold only the key when no action is known.
func (s *Store) Refused(ctx context.Context, a Action, why string) {
	s.audit(ctx, a, EventRefused, ActorMCPClient, a.ClientID, "refused", why, nil)
}

// ReasonWords are the audit reasons of refused approvals in words, for
// pages: the store's (reason) and the engine's own (mcpengine/writes.go).
var ReasonWords = map[string]string{
	"wrong_user":      "signed in as another ERP user than the approver",
	"already_decided": "already approved or rejected",
	"expired":         "expired",
	"not_approved":    "not approved yet",
	"rejected":        "rejected",
	"already_used":    "already used",
	"mismatch":        "for another caller, tool or arguments",
	"other_client":    "proposed through another AI client",
	"withdrawn":       "approval withdrawn",
	"not_found":       "no such approval",
	// The engine's own reasons.
	"declined":         "declined in the AI client",
	"invalid_state":    "the request's state was not one erpgate gave",
	"approver_changed": "the site named another approver since",
}

// Reason is the audit reason of a store error (ErrUsed: already_used).
func Reason(err error) string { return reason(err) }

// reason is the audit row's reason for a store error.
func reason(err error) string {
	switch {
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrWrongUser):
		return "wrong_user"
	case errors.Is(err, ErrDecided):
		return "already_decided"
	case errors.Is(err, ErrExpired):
		return "expired"
	case errors.Is(err, ErrNotApproved):
		return "not_approved"
	case errors.Is(err, ErrRejected):
		return "rejected"
	case errors.Is(err, ErrUsed):
		return "already_used"
	case errors.Is(err, ErrMismatch):
		return "mismatch"
	case errors.Is(err, ErrOtherClient):
		return "other_client"
	case errors.Is(err, ErrWithdrawn):
		return "withdrawn"
	}
	return "error"
}

// audit appends an admin_events row; a failure is logged, never returned
// (the decision itself is already made and stored).
func (s *Store) audit(ctx context.Context, a Action, event, actorKind, actor, outcome, why string, extra map[string]any) {
	details := map[string]any{
		"action_id": a.ID.String(),
		"tool":      a.Key.Tool,
		"auth_type": a.Key.AuthType,
	}
	if a.Key.AuthType == "oauth" {
		details["erp_user"] = a.Key.Principal
	} else if a.Key.AuthType == "service_token" {
		details["service_token"] = a.Key.Principal
		details["erp_user"] = a.Approver
	}
	if a.Approver != "" {
		details["approver"] = a.Approver
	}
	if a.ClientID != "" {
		details["client_id"] = a.ClientID
	}
	for k, v := range extra {
		details[k] = v
	}
	raw, err := json.Marshal(details)
	if err == nil {
		_, err = s.pool.Exec(context.WithoutCancel(ctx), `
			INSERT INTO admin_events (site_id, site_slug, actor_kind, actor, action, outcome, reason, details)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			a.Key.SiteID, a.SiteSlug, actorKind, actor, event, outcome, why, raw)
	}
	if err != nil {
		s.log.Error("approval: audit event not recorded", zap.String("event", event),
			zap.String("action_id", a.ID.String()), zap.Error(database.Classify(err)))
	}
}
