package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/ory/fosite"
)

// tokenKind is the kind column of oauth_tokens.
type tokenKind string

const (
	kindCode    tokenKind = "code"
	kindPKCE    tokenKind = "pkce"
	kindAccess  tokenKind = "access"
	kindRefresh tokenKind = "refresh"
)

// tokenType is the fosite token type whose expiry a row keeps.
func (k tokenKind) tokenType() fosite.TokenType {
	switch k {
	case kindAccess:
		return fosite.AccessToken
	case kindRefresh:
		return fosite.RefreshToken
	}
	return fosite.AuthorizeCode
}

// storedRow is one oauth_tokens row, read back.
type storedRow struct {
	requester *fosite.Request
	active    bool
	usedAt    *time.Time
}

// createToken stores request under the hash of signature.
func (s *Store) createToken(ctx context.Context, kind tokenKind, signature string, req fosite.Requester, accessSignature string) error {
	sess, ok := req.GetSession().(*Session)
	if !ok || sess == nil {
		return fmt.Errorf("storage: store %s: the session is %T, not *storage.Session", kind, req.GetSession())
	}
	sessionJSON, err := json.Marshal(sess)
	if err != nil {
		return fmt.Errorf("storage: store %s: encode session: %w", kind, err)
	}
	var expires *time.Time
	if exp := sess.GetExpiresAt(kind.tokenType()); !exp.IsZero() {
		expires = &exp
	}
	var siteID *uuid.UUID
	if sess.SiteID != uuid.Nil {
		siteID = &sess.SiteID
	}
	var accessHash []byte
	if accessSignature != "" {
		accessHash = hash(accessSignature)
	}
	_, err = s.db(ctx).Exec(ctx, `
		INSERT INTO oauth_tokens (kind, signature_hash, request_id, client_id, site_id, subject, requested_at,
			expires_at, requested_scopes, granted_scopes, requested_audience, granted_audience, form, session,
			access_signature_hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		string(kind), hash(signature), req.GetID(), req.GetClient().GetID(), siteID, sess.Subject, req.GetRequestedAt(),
		expires, nonNil(req.GetRequestedScopes()), nonNil(req.GetGrantedScopes()),
		nonNil(req.GetRequestedAudience()), nonNil(req.GetGrantedAudience()), req.GetRequestForm().Encode(), sessionJSON,
		accessHash)
	if err != nil {
		return fmt.Errorf("storage: store %s: %w", kind, notFound(err))
	}
	return nil
}

func nonNil(a fosite.Arguments) []string {
	if a == nil {
		return []string{}
	}
	return a
}

// getToken reads a row and hydrates session from it. It reports
// fosite.ErrNotFound when there is no such row.
func (s *Store) getToken(ctx context.Context, kind tokenKind, signature string, session fosite.Session) (storedRow, error) {
	var (
		row                                storedRow
		reqID, clientID, form              string
		requestedAt                        time.Time
		reqScopes, grScopes, reqAud, grAud []string
		sessionJSON                        []byte
	)
	err := s.db(ctx).QueryRow(ctx, `
		SELECT request_id, client_id, requested_at, requested_scopes, granted_scopes, requested_audience,
		       granted_audience, form, session, active, used_at
		FROM oauth_tokens WHERE kind = $1 AND signature_hash = $2`,
		string(kind), hash(signature)).Scan(&reqID, &clientID, &requestedAt, &reqScopes, &grScopes, &reqAud,
		&grAud, &form, &sessionJSON, &row.active, &row.usedAt)
	if err != nil {
		return storedRow{}, fmt.Errorf("storage: read %s: %w", kind, notFound(err))
	}
	if session == nil {
		session = &Session{}
	}
	if err := json.Unmarshal(sessionJSON, session); err != nil {
		return storedRow{}, fmt.Errorf("storage: read %s: decode session: %w", kind, err)
	}
	values, err := url.ParseQuery(form)
	if err != nil {
		return storedRow{}, fmt.Errorf("storage: read %s: decode form: %w", kind, err)
	}
	// For tokens only the id of the client is needed (fosite compares it
	// with the authenticated client); loading the full client would make
	// every MCP call depend on a client metadata document being reachable.
	// A code's client decides whether a refresh token is issued, so codes
	// get the full client.
	var client fosite.Client = &fosite.DefaultClient{ID: clientID}
	if kind == kindCode {
		if client, err = s.GetClient(ctx, clientID); err != nil {
			return storedRow{}, fmt.Errorf("storage: read %s: client: %w", kind, err)
		}
	}
	row.requester = &fosite.Request{
		ID:                reqID,
		RequestedAt:       requestedAt,
		Client:            client,
		RequestedScope:    reqScopes,
		GrantedScope:      grScopes,
		Form:              values,
		Session:           session,
		RequestedAudience: reqAud,
		GrantedAudience:   grAud,
	}
	return row, nil
}

func (s *Store) deleteToken(ctx context.Context, kind tokenKind, signature string) error {
	if _, err := s.execUsers(ctx, s.db(ctx), `DELETE FROM oauth_tokens WHERE kind = $1 AND signature_hash = $2
		RETURNING site_id, subject`, string(kind), hash(signature)); err != nil {
		return fmt.Errorf("storage: delete %s: %w", kind, notFound(err))
	}
	return nil
}

// CreateAuthorizeCodeSession stores an authorization code.
func (s *Store) CreateAuthorizeCodeSession(ctx context.Context, code string, req fosite.Requester) error {
	return s.createToken(ctx, kindCode, code, req, "")
}

// GetAuthorizeCodeSession returns the request of a code. A redeemed code
// gives the request together with fosite.ErrInvalidatedAuthorizeCode, so
// fosite can revoke the tokens issued with it (code reuse).
func (s *Store) GetAuthorizeCodeSession(ctx context.Context, code string, session fosite.Session) (fosite.Requester, error) {
	row, err := s.getToken(ctx, kindCode, code, session)
	if err != nil {
		return nil, err
	}
	if !row.active {
		return row.requester, fosite.ErrInvalidatedAuthorizeCode
	}
	return row.requester, nil
}

// InvalidateAuthorizeCodeSession marks a code redeemed and deletes its
// PKCE challenge (stored under the same signature), which
// DeletePKCERequestSession leaves in place.
func (s *Store) InvalidateAuthorizeCodeSession(ctx context.Context, code string) error {
	var spent int
	err := s.db(ctx).QueryRow(ctx, `
		WITH spent AS (
			UPDATE oauth_tokens SET active = false, used_at = now()
			WHERE kind = 'code' AND signature_hash = $1 AND active
			RETURNING 1),
		challenge AS (
			DELETE FROM oauth_tokens WHERE kind = 'pkce' AND signature_hash = $1)
		SELECT count(*) FROM spent`, hash(code)).Scan(&spent)
	if err != nil {
		return fmt.Errorf("storage: invalidate code: %w", notFound(err))
	}
	if spent == 0 {
		// A concurrent exchange redeemed it first.
		return fmt.Errorf("storage: invalidate code: %w", fosite.ErrInvalidatedAuthorizeCode)
	}
	return nil
}

// CreatePKCERequestSession stores the PKCE challenge of a code.
func (s *Store) CreatePKCERequestSession(ctx context.Context, signature string, req fosite.Requester) error {
	return s.createToken(ctx, kindPKCE, signature, req, "")
}

// GetPKCERequestSession returns the PKCE challenge of a code.
func (s *Store) GetPKCERequestSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	row, err := s.getToken(ctx, kindPKCE, signature, session)
	if err != nil {
		return nil, err
	}
	return row.requester, nil
}

// DeletePKCERequestSession keeps the PKCE challenge of a code. fosite
// calls it while reading a token request, before it compares the
// verifier: deleting here would let anyone who saw a code, without its
// verifier, spend the real client's sign-in with one wrong request. The
// challenge goes when the code is redeemed
// (InvalidateAuthorizeCodeSession) or expires (CleanUp).
func (s *Store) DeletePKCERequestSession(context.Context, string) error {
	return nil
}

// CreateAccessTokenSession stores an access token and notes that its
// client is in use (unused clients are removed by CleanUp).
func (s *Store) CreateAccessTokenSession(ctx context.Context, signature string, req fosite.Requester) error {
	if err := s.createToken(ctx, kindAccess, signature, req, ""); err != nil {
		return err
	}
	return s.markClientUsed(ctx, req.GetClient().GetID())
}

// GetAccessTokenSession returns the request of an access token. Revoked
// tokens are deleted, so they are simply not found.
func (s *Store) GetAccessTokenSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	row, err := s.getToken(ctx, kindAccess, signature, session)
	if err != nil {
		return nil, err
	}
	return row.requester, nil
}

// DeleteAccessTokenSession deletes an access token.
func (s *Store) DeleteAccessTokenSession(ctx context.Context, signature string) error {
	return s.deleteToken(ctx, kindAccess, signature)
}

// CreateRefreshTokenSession stores a refresh token and which access token
// was issued with it.
func (s *Store) CreateRefreshTokenSession(ctx context.Context, signature, accessSignature string, req fosite.Requester) error {
	return s.createToken(ctx, kindRefresh, signature, req, accessSignature)
}

// GetRefreshTokenSession returns the request of a refresh token. A rotated
// token keeps working for the grace period, so two concurrent refreshes
// with one token both succeed, but only while no token issued after it has
// been used in turn: then the family has moved on and the old token is not
// concurrent with anything. Otherwise it is returned with
// fosite.ErrInactiveToken, which makes fosite revoke the whole family
// (refresh-token reuse detection, OAuth 2.1 §4.3.1).
func (s *Store) GetRefreshTokenSession(ctx context.Context, signature string, session fosite.Session) (fosite.Requester, error) {
	row, err := s.getToken(ctx, kindRefresh, signature, session)
	if err != nil {
		return nil, err
	}
	if row.active {
		return row.requester, nil
	}
	// used_at is stamped by the database, so the grace is measured by its
	// clock too: a replica's clock may be off by more than the grace.
	if row.usedAt != nil && s.refreshGrace > 0 {
		var concurrent bool
		if err := s.db(ctx).QueryRow(ctx, `
			SELECT $3 >= now() - $4::interval AND NOT EXISTS (SELECT 1 FROM oauth_tokens WHERE kind = 'refresh'
				AND request_id = $1 AND signature_hash <> $2 AND created_at >= $3 AND used_at IS NOT NULL)`,
			row.requester.GetID(), hash(signature), *row.usedAt, s.refreshGrace).Scan(&concurrent); err != nil {
			return nil, fmt.Errorf("storage: read refresh token family: %w", notFound(err))
		}
		if concurrent {
			return row.requester, nil
		}
	}
	return row.requester, fosite.ErrInactiveToken
}

// DeleteRefreshTokenSession deletes a refresh token.
func (s *Store) DeleteRefreshTokenSession(ctx context.Context, signature string) error {
	return s.deleteToken(ctx, kindRefresh, signature)
}

// RotateRefreshToken marks a refresh token used (it stays usable for the
// grace period) and deletes the access token issued with it.
//
// Only one child of a token is carried on. Tokens issued from one token
// within its grace are siblings: the first of them used ends the others
// (and their access tokens), without marking them used, so a sibling used
// after that is reuse and revokes the family. Otherwise a copy of a
// refresh token used within the grace would start a second branch that
// lives as long as the grant, each of its tokens used only once.
func (s *Store) RotateRefreshToken(ctx context.Context, requestID, signature string) error {
	var (
		accessHash      []byte
		firstUse, ended bool
	)
	// One rotation of a family at a time, until the transaction ends:
	// two siblings used at once (on two replicas) would otherwise each
	// lock its own row and then wait for the other's (a deadlock), or the
	// second would go on after the first had ended it.
	if _, err := s.db(ctx).Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('oauth refresh family ' || $1, 0))`, requestID); err != nil {
		return fmt.Errorf("storage: rotate refresh token: %w", notFound(err))
	}
	err := s.db(ctx).QueryRow(ctx, `
		WITH prev AS (
			SELECT active, used_at FROM oauth_tokens WHERE kind = 'refresh' AND signature_hash = $1 AND request_id = $2 FOR UPDATE)
		UPDATE oauth_tokens t SET active = false, used_at = coalesce(t.used_at, now())
		FROM prev WHERE t.kind = 'refresh' AND t.signature_hash = $1 AND t.request_id = $2
		RETURNING t.access_signature_hash, prev.active, NOT prev.active AND prev.used_at IS NULL`,
		hash(signature), requestID).Scan(&accessHash, &firstUse, &ended)
	if err != nil {
		return fmt.Errorf("storage: rotate refresh token: %w", notFound(err))
	}
	if ended {
		// A sibling was used first and ended this token after its refresh
		// read it as active. fosite refuses the refresh and rolls back;
		// the token used again is reuse, which revokes the family.
		return fmt.Errorf("storage: rotate refresh token: a sibling was used first: %w", fosite.ErrInactiveToken)
	}
	if accessHash == nil && !firstUse {
		return nil
	}
	if _, err := s.execUsers(ctx, s.db(ctx), `
		WITH siblings AS (
			UPDATE oauth_tokens SET active = false
			WHERE $3 AND kind = 'refresh' AND request_id = $2 AND active AND signature_hash <> $4
			RETURNING access_signature_hash)
		DELETE FROM oauth_tokens WHERE kind = 'access'
			AND (signature_hash = $1 OR signature_hash IN (SELECT access_signature_hash FROM siblings))
		RETURNING site_id, subject`, accessHash, requestID, firstUse, hash(signature)); err != nil {
		return fmt.Errorf("storage: rotate refresh token: end its access token and siblings: %w", notFound(err))
	}
	return nil
}

// RevokeRefreshToken deletes every refresh token of a grant (its family).
func (s *Store) RevokeRefreshToken(ctx context.Context, requestID string) error {
	return s.revokeKind(ctx, kindRefresh, requestID)
}

// RevokeAccessToken deletes every access token of a grant.
func (s *Store) RevokeAccessToken(ctx context.Context, requestID string) error {
	return s.revokeKind(ctx, kindAccess, requestID)
}

func (s *Store) revokeKind(ctx context.Context, kind tokenKind, requestID string) error {
	if _, err := s.execUsers(ctx, s.db(ctx), `DELETE FROM oauth_tokens WHERE kind = $1 AND request_id = $2
		RETURNING site_id, subject`, string(kind), requestID); err != nil {
		return fmt.Errorf("storage: revoke %s tokens of a grant: %w", kind, notFound(err))
	}
	return nil
}

// RevokeUserGrants deletes every code and token erpgate issued for user on
// site, so that the user's MCP clients must sign in again. It returns how
// many were deleted.
func (s *Store) RevokeUserGrants(ctx context.Context, siteID uuid.UUID, subject string) (int64, error) {
	n, err := s.execUsers(ctx, s.db(ctx), `DELETE FROM oauth_tokens WHERE site_id = $1 AND subject = $2
		RETURNING site_id, subject`, siteID, subject)
	if err != nil {
		return 0, fmt.Errorf("storage: revoke grants of a user on site %s: %w", siteID, notFound(err))
	}
	return n, nil
}

// DeleteExpired removes codes and tokens that expired before notAfter, at
// most batch rows; it returns how many it removed.
func (s *Store) DeleteExpired(ctx context.Context, notAfter time.Time, batch int) (int64, error) {
	tag, err := s.pool.Exec(ctx, `
		DELETE FROM oauth_tokens WHERE ctid IN (
			SELECT ctid FROM oauth_tokens WHERE expires_at < $1 LIMIT $2)`, notAfter, batch)
	if err != nil {
		return 0, fmt.Errorf("storage: delete expired tokens: %w", notFound(err))
	}
	return tag.RowsAffected(), nil
}

var errNoSession = errors.New("storage: no session")
