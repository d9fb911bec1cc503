package storage

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// FlowStage is where a sign-in flow stands. Each stage is left once.
type FlowStage string

// The stages of oauth_signin_flows_stage_check.
const (
	// StageChooseSite waits for the user to type their ERP's URL (/mcp).
	StageChooseSite FlowStage = "choose_site"
	// StageERP waits for the ERP to send the user back with a code.
	StageERP FlowStage = "erp"
	// StageConsent waits for the user to accept or decline.
	StageConsent FlowStage = "consent"
	// StageDone is final.
	StageDone FlowStage = "done"
)

// Errors a flow step reports. Each is safe to show the user.
var (
	// ErrFlowUnknown means no such sign-in exists (or it was cleaned up).
	ErrFlowUnknown = errors.New("this sign-in is unknown")
	// ErrFlowExpired means the sign-in is older than its time limit.
	ErrFlowExpired = errors.New("this sign-in has expired")
	// ErrFlowUsed means the step was already taken: the state is single-use.
	ErrFlowUsed = errors.New("this step of the sign-in was already completed")
	// ErrFlowWrongBrowser means the request did not come from the browser
	// that started the sign-in.
	ErrFlowWrongBrowser = errors.New("this sign-in was started in another browser")
	// ErrFlowBurned means the sign-in was ended because its callback was
	// opened in a browser that did not start it (BurnFlow).
	ErrFlowBurned = errors.New("this sign-in was ended because its link was opened in another browser")
	// ErrERPCodeReused means the ERP's code was already brought back to
	// another sign-in (FlowStep.ERPCode).
	ErrERPCodeReused = errors.New("this ERP sign-in code was already used for another sign-in")
)

// Flow is one sign-in in progress, with its secrets opened.
type Flow struct {
	Stage FlowStage
	// AuthorizeQuery is the MCP client's authorization request.
	AuthorizeQuery string
	ClientID       string
	Resource       string
	// SiteID is zero until the site is known.
	SiteID uuid.UUID
	// Verifier is the upstream PKCE verifier (stage erp).
	Verifier secrets.Secret
	// ERPUser and ERPUserName are known from stage consent on.
	ERPUser     string
	ERPUserName string
	// Token is the user's ERP token, held until consent.
	Token     *PendingToken
	ExpiresAt time.Time
}

// PendingToken is an ERP token held in a flow until the user consents.
type PendingToken struct {
	Access    secrets.Secret
	Refresh   secrets.Secret
	ExpiresAt time.Time
}

// NewFlow starts a flow.
type NewFlow struct {
	// ID is the flow id (also the upstream OAuth state); Browser the
	// browser-binding cookie value. Only their hashes are stored.
	ID, Browser    string
	Stage          FlowStage
	AuthorizeQuery string
	ClientID       string
	Resource       string
	SiteID         uuid.UUID
	Verifier       secrets.Secret
	TTL            time.Duration
}

func flowAD(idHash []byte, field string) []byte {
	return secrets.AdditionalData("signin_flow", hex.EncodeToString(idHash), field)
}

// CreateFlow stores a new flow, and removes flows that expired long ago
// and ERP codes seen long ago.
func (s *Store) CreateFlow(ctx context.Context, f NewFlow) error {
	idHash := hash(f.ID)
	var keyID *string
	var verifier []byte
	if f.Verifier.IsSet() {
		kid, ct, err := s.keys.Seal([]byte(f.Verifier.Reveal()), flowAD(idHash, "verifier"))
		if err != nil {
			return fmt.Errorf("storage: start sign-in: %w", err)
		}
		keyID, verifier = &kid, ct
	}
	var siteID *uuid.UUID
	if f.SiteID != uuid.Nil {
		siteID = &f.SiteID
	}
	if _, err := s.pool.Exec(ctx, `
		WITH codes AS (DELETE FROM oauth_erp_codes WHERE seen_at < now() - interval '1 day')
		DELETE FROM oauth_signin_flows WHERE expires_at < now() - interval '1 hour'`); err != nil {
		return fmt.Errorf("storage: start sign-in: clean up: %w", database.Classify(err))
	}
	_, err := s.pool.Exec(ctx, `
		INSERT INTO oauth_signin_flows (id_hash, browser_hash, stage, authorize_query, client_id, resource, site_id,
			key_id, verifier_ciphertext, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		idHash, hash(f.Browser), string(f.Stage), f.AuthorizeQuery, f.ClientID, f.Resource, siteID, keyID, verifier,
		s.now().Add(f.TTL))
	if err != nil {
		return fmt.Errorf("storage: start sign-in: %w", database.Classify(err))
	}
	return nil
}

// FlowStep says how a step changes a flow.
type FlowStep struct {
	// From is the stage the flow must be in; To the stage it moves to.
	From, To FlowStage
	// SiteID and Verifier, when set, are stored (choosing the site).
	SiteID   uuid.UUID
	Verifier secrets.Secret
	// ERPCode, when set, is the code the ERP sent back. Only its hash is
	// kept; a code another sign-in took is refused with ErrERPCodeReused.
	ERPCode string
	// Moving to StageDone drops any held token.
}

// PeekFlow returns a flow in stage `at` without changing it, after the same
// checks as StepFlow.
func (s *Store) PeekFlow(ctx context.Context, id, browser string, at FlowStage) (*Flow, error) {
	var flow *Flow
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		flow, err = s.lockFlow(ctx, tx, id, browser, at)
		return err
	})
	return flow, err
}

// StepFlow moves a flow from step.From to step.To, once: the flow must
// exist, belong to browser, be unexpired and be in step.From. It returns
// the flow as it was before the step, secrets opened.
func (s *Store) StepFlow(ctx context.Context, id, browser string, step FlowStep) (*Flow, error) {
	var flow *Flow
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		flow, err = s.lockFlow(ctx, tx, id, browser, step.From)
		if err != nil {
			return err
		}
		return s.applyStep(ctx, tx, hash(id), step)
	})
	return flow, err
}

func (s *Store) lockFlow(ctx context.Context, tx pgx.Tx, id, browser string, at FlowStage) (*Flow, error) {
	idHash := hash(id)
	var (
		f                         Flow
		browserHash               []byte
		stage                     string
		siteID                    *uuid.UUID
		keyID                     *string
		verifier, access, refresh []byte
		tokenExpires, burnedAt    *time.Time
	)
	err := tx.QueryRow(ctx, `
		SELECT browser_hash, stage, authorize_query, client_id, resource, site_id, key_id, verifier_ciphertext,
		       erp_user, erp_user_name, access_ciphertext, refresh_ciphertext, token_expires_at, expires_at, burned_at
		FROM oauth_signin_flows WHERE id_hash = $1 FOR UPDATE`, idHash).Scan(&browserHash, &stage,
		&f.AuthorizeQuery, &f.ClientID, &f.Resource, &siteID, &keyID, &verifier, &f.ERPUser, &f.ERPUserName,
		&access, &refresh, &tokenExpires, &f.ExpiresAt, &burnedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrFlowUnknown
	}
	if err != nil {
		return nil, fmt.Errorf("storage: read sign-in: %w", database.Classify(err))
	}
	f.Stage = FlowStage(stage)
	switch {
	case subtle.ConstantTimeCompare(browserHash, hash(browser)) != 1:
		return nil, ErrFlowWrongBrowser
	case burnedAt != nil:
		return nil, ErrFlowBurned
	case !s.now().Before(f.ExpiresAt):
		return nil, ErrFlowExpired
	case f.Stage != at:
		return nil, ErrFlowUsed
	}
	if siteID != nil {
		f.SiteID = *siteID
	}
	open := func(ct []byte, field string) (secrets.Secret, error) {
		if ct == nil || keyID == nil {
			return "", nil
		}
		pt, err := s.keys.Open(*keyID, ct, flowAD(idHash, field))
		if err != nil {
			return "", fmt.Errorf("storage: read sign-in: %s: %w", field, err)
		}
		return secrets.Secret(pt), nil
	}
	if f.Verifier, err = open(verifier, "verifier"); err != nil {
		return nil, err
	}
	if access != nil {
		f.Token = &PendingToken{}
		if f.Token.Access, err = open(access, "access"); err != nil {
			return nil, err
		}
		if f.Token.Refresh, err = open(refresh, "refresh"); err != nil {
			return nil, err
		}
		if tokenExpires != nil {
			f.Token.ExpiresAt = *tokenExpires
		}
	}
	return &f, nil
}

func (s *Store) applyStep(ctx context.Context, tx pgx.Tx, idHash []byte, step FlowStep) error {
	if _, err := tx.Exec(ctx, `UPDATE oauth_signin_flows SET stage = $2 WHERE id_hash = $1`, idHash, string(step.To)); err != nil {
		return fmt.Errorf("storage: sign-in step: %w", database.Classify(err))
	}
	if step.SiteID != uuid.Nil {
		kid, ct, err := s.keys.Seal([]byte(step.Verifier.Reveal()), flowAD(idHash, "verifier"))
		if err != nil {
			return fmt.Errorf("storage: sign-in step: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth_signin_flows SET site_id = $2, key_id = $3, verifier_ciphertext = $4 WHERE id_hash = $1`,
			idHash, step.SiteID, kid, ct); err != nil {
			return fmt.Errorf("storage: sign-in step: %w", database.Classify(err))
		}
	}
	if step.ERPCode != "" {
		_, err := tx.Exec(ctx, `INSERT INTO oauth_erp_codes (code_hash) VALUES ($1)`, hash(step.ERPCode))
		if _, ok := database.IsUniqueViolation(err); ok {
			return ErrERPCodeReused
		}
		if err != nil {
			return fmt.Errorf("storage: sign-in step: %w", database.Classify(err))
		}
	}
	if step.To == StageDone {
		if _, err := tx.Exec(ctx, `
			UPDATE oauth_signin_flows SET verifier_ciphertext = NULL, access_ciphertext = NULL, refresh_ciphertext = NULL
			WHERE id_hash = $1`, idHash); err != nil {
			return fmt.Errorf("storage: sign-in step: %w", database.Classify(err))
		}
	}
	return nil
}

// HoldFlowToken keeps the user's ERP token and identity in a flow that is in
// StageConsent, until they accept or decline.
func (s *Store) HoldFlowToken(ctx context.Context, id, erpUser, erpUserName string, tok PendingToken) error {
	idHash := hash(id)
	kid, access, err := s.keys.Seal([]byte(tok.Access.Reveal()), flowAD(idHash, "access"))
	if err != nil {
		return fmt.Errorf("storage: hold ERP token: %w", err)
	}
	var refresh []byte
	if tok.Refresh.IsSet() {
		// Sealed right after access, so under the same primary key.
		if _, refresh, err = s.keys.Seal([]byte(tok.Refresh.Reveal()), flowAD(idHash, "refresh")); err != nil {
			return fmt.Errorf("storage: hold ERP token: %w", err)
		}
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE oauth_signin_flows SET key_id = $2, verifier_ciphertext = NULL, access_ciphertext = $3,
			refresh_ciphertext = $4, token_expires_at = $5, erp_user = $6, erp_user_name = $7
		WHERE id_hash = $1 AND stage = 'consent'`, idHash, kid, access, refresh, tok.ExpiresAt, erpUser, erpUserName)
	if err != nil {
		return fmt.Errorf("storage: hold ERP token: %w", database.Classify(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("storage: hold ERP token: %w", ErrFlowUsed)
	}
	return nil
}

// EndFlow moves a flow to StageDone whatever its stage, dropping what it
// holds (a sign-in that ended in a denial or an error).
func (s *Store) EndFlow(ctx context.Context, id string) error {
	if _, err := s.pool.Exec(ctx, `
		UPDATE oauth_signin_flows SET stage = 'done', verifier_ciphertext = NULL, access_ciphertext = NULL,
			refresh_ciphertext = NULL
		WHERE id_hash = $1`, hash(id)); err != nil {
		return fmt.Errorf("storage: end sign-in: %w", database.Classify(err))
	}
	return nil
}

// BurnedFlow is what BurnFlow ended, for the audit event.
type BurnedFlow struct {
	// SiteID is zero when the flow had not reached a site yet.
	SiteID   uuid.UUID
	ClientID string
}

// BurnFlow ends an open, unexpired flow because a step of it was attempted
// from a browser that did not start it: the flow id (the state sent to the
// ERP) has leaked or been planted, so the original browser must not finish
// it either. The flow drops what it holds and later steps get
// ErrFlowBurned. It reports false when there was nothing open to end
// (unknown, expired or already done), so unknown states leave no trace.
func (s *Store) BurnFlow(ctx context.Context, id string) (BurnedFlow, bool, error) {
	var (
		b      BurnedFlow
		siteID *uuid.UUID
	)
	err := s.pool.QueryRow(ctx, `
		UPDATE oauth_signin_flows SET stage = 'done', burned_at = $2, verifier_ciphertext = NULL,
			access_ciphertext = NULL, refresh_ciphertext = NULL
		WHERE id_hash = $1 AND stage <> 'done' AND expires_at > $2
		RETURNING site_id, client_id`, hash(id), s.now()).Scan(&siteID, &b.ClientID)
	if errors.Is(err, pgx.ErrNoRows) {
		return BurnedFlow{}, false, nil
	}
	if err != nil {
		return BurnedFlow{}, false, fmt.Errorf("storage: end sign-in opened in another browser: %w", database.Classify(err))
	}
	if siteID != nil {
		b.SiteID = *siteID
	}
	return b, true, nil
}
