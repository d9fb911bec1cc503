package erpadmin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// errNoProof: no proof has this state (unknown, already claimed, swept).
var errNoProof = errors.New("erpadmin: no such proof")

// store keeps proofs in progress in erpadmin_proofs.
type store struct {
	pool *pgxpool.Pool
	keys *secrets.Keyring
	now  func() time.Time
}

// pending is one proof in progress, its verifier opened.
type pending struct {
	State, Browser string
	// BrowserHash is the stored hash of the binding cookie (claim).
	BrowserHash string
	Purpose     string
	Ref         string
	Verifier    secrets.Secret
	ExpiresAt   time.Time
}

func hashString(v string) string {
	h := sha256.Sum256([]byte(v))
	return hex.EncodeToString(h[:])
}

func proofAD(stateHash []byte) []byte {
	return secrets.AdditionalData("erpadmin_proof", hex.EncodeToString(stateHash), "verifier")
}

// create stores a proof, and sweeps those that expired.
func (st *store) create(ctx context.Context, p pending) error {
	stateHash := sha256.Sum256([]byte(p.State))
	browserHash := sha256.Sum256([]byte(p.Browser))
	kid, ct, err := st.keys.Seal([]byte(p.Verifier.Reveal()), proofAD(stateHash[:]))
	if err != nil {
		return fmt.Errorf("erpadmin: seal verifier: %w", err)
	}
	if _, err := st.sweep(ctx); err != nil {
		return err
	}
	_, err = st.pool.Exec(ctx, `
		INSERT INTO erpadmin_proofs (state_hash, browser_hash, purpose, ref, key_id, verifier_ciphertext, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		stateHash[:], browserHash[:], p.Purpose, p.Ref, kid, ct, p.ExpiresAt)
	if err != nil {
		return fmt.Errorf("erpadmin: store proof: %w", database.Classify(err))
	}
	return nil
}

// sweep removes the proofs that expired.
func (st *store) sweep(ctx context.Context) (int64, error) {
	tag, err := st.pool.Exec(ctx, `DELETE FROM erpadmin_proofs WHERE expires_at < $1`, st.now())
	if err != nil {
		return 0, fmt.Errorf("erpadmin: sweep proofs: %w", database.Classify(err))
	}
	return tag.RowsAffected(), nil
}

// claim takes the proof of state out of the table: whoever claims it
// first, in whatever browser, spends it.
func (st *store) claim(ctx context.Context, state string) (pending, error) {
	if !strings.HasPrefix(state, StatePrefix) || len(state) > 200 {
		return pending{}, errNoProof
	}
	stateHash := sha256.Sum256([]byte(state))
	var (
		p          pending
		browser    []byte
		kid        string
		ciphertext []byte
	)
	err := st.pool.QueryRow(context.WithoutCancel(ctx), `
		DELETE FROM erpadmin_proofs WHERE state_hash = $1
		RETURNING browser_hash, purpose, ref, key_id, verifier_ciphertext, expires_at`, stateHash[:]).
		Scan(&browser, &p.Purpose, &p.Ref, &kid, &ciphertext, &p.ExpiresAt)
	if database.IsNoRows(err) {
		return pending{}, errNoProof
	}
	if err != nil {
		return pending{}, fmt.Errorf("erpadmin: claim proof: %w", database.Classify(err))
	}
	pt, err := st.keys.Open(kid, ciphertext, proofAD(stateHash[:]))
	if err != nil {
		return pending{}, fmt.Errorf("erpadmin: open verifier: %w", err)
	}
	p.State, p.BrowserHash, p.Verifier = state, hex.EncodeToString(browser), secrets.Secret(pt)
	return p, nil
}
