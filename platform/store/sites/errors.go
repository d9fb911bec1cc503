package sites

import (
	"errors"
	"fmt"
)

// Errors the store reports. Callers test them with errors.Is; every returned
// error also names the operation and the site it concerned.
var (
	// ErrNotFound: the site, connection or service token does not exist (in
	// the given site's scope).
	ErrNotFound = errors.New("not found")
	// ErrConflict: a uniqueness rule refused the change. The returned error
	// also matches ErrSlugTaken or ErrBaseURLTaken, which say which rule.
	ErrConflict = errors.New("conflict")
	// ErrSlugTaken: another site already has this slug.
	ErrSlugTaken = fmt.Errorf("%w: slug is already in use", ErrConflict)
	// ErrBaseURLTaken: another site already has this base URL and identity
	// key (for Acumatica, the tenant).
	ErrBaseURLTaken = fmt.Errorf("%w: base URL and identity are already registered", ErrConflict)
	// ErrConnectionsExist: the site's base URL cannot change while it has
	// connections, because their credentials were verified against (and
	// would otherwise be sent to) the old origin.
	ErrConnectionsExist = errors.New("site has connections verified for its current base URL")
	// ErrAPICredentialExists: the site's tenant (its identity key) cannot
	// change while it has an API credential, which is the old tenant's.
	ErrAPICredentialExists = errors.New("site has an API credential of its current tenant")
	// ErrBaseURLChanged: a credential verified against one origin was about
	// to be saved for a site that has meanwhile moved to another.
	ErrBaseURLChanged = errors.New("site base URL changed since the credential was verified")
	// ErrNoAPIConnection: a service token was requested for a site that has
	// no api_token connection, so the token could never call the ERP.
	ErrNoAPIConnection = errors.New("site has no api_token connection")
	// ErrTooManyServiceTokens: the site already has as many active
	// (neither revoked nor expired) service tokens as a site may have. The
	// returned error is a *TooManyServiceTokensError, which says how many.
	ErrTooManyServiceTokens = errors.New("site has as many active service tokens as a site may have")
	// ErrSiteDisabled: the site exists but an operator disabled it.
	ErrSiteDisabled = errors.New("site is disabled")
	// ErrOperatorDisabled: the site's owner tried to enable, change or
	// delete a site the operator disabled.
	ErrOperatorDisabled = errors.New("the operator disabled the site")
	// ErrTokenInvalid: the presented service token is unknown, revoked or
	// expired.
	// Callers must not tell the two apart in what they show the client.
	ErrTokenInvalid = errors.New("service token is invalid")
	// ErrCredentialUnreadable: a stored credential could not be decrypted,
	// because its key is no longer in the keyring or the row was tampered
	// with (for example copied to another site or field).
	ErrCredentialUnreadable = errors.New("stored credential cannot be decrypted")
	// ErrBadCursor: a page cursor of the list of a site's service tokens
	// is not one the store made for that site (another site's, altered or
	// made up).
	ErrBadCursor = errors.New("page cursor is not one made for this site's tokens")
	// ErrInvalid: the input breaks a rule the store enforces before touching
	// the database. The error text says which rule and is safe to show.
	ErrInvalid = errors.New("invalid input")
)

// ValidationError is an input the package refuses. Message is written for
// an operator ("slug must ...") and never contains a secret. It matches
// ErrInvalid.
//
// Field names the input as NewSite has it ("slug", "display_name",
// "base_url"; "" when none), and Problem says what is wrong with it in a
// phrase that follows a form's label for it ("holds a control character"),
// without repeating what was typed: pages name their own label, not the
// API's field, and never show raw bytes.
type ValidationError struct{ Message, Field, Problem string }

func (e *ValidationError) Error() string { return e.Message }

// Is reports whether target is ErrInvalid.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// invalidf returns a *ValidationError with a formatted message.
func invalidf(format string, args ...any) error {
	return &ValidationError{Message: fmt.Sprintf(format, args...)}
}

// fieldInvalidf is invalidf for an input a form has a label for: field and
// problem as ValidationError has them.
func fieldInvalidf(field, problem, format string, args ...any) error {
	return &ValidationError{Message: fmt.Sprintf(format, args...), Field: field, Problem: problem}
}

// TooManyServiceTokensError is the refusal of a service token for a site
// that already has Active active tokens, Bound being the most a site may
// have. It matches ErrTooManyServiceTokens.
type TooManyServiceTokensError struct{ Active, Bound int }

func (e *TooManyServiceTokensError) Error() string {
	return fmt.Sprintf("site has %d active service tokens, the most a site may have is %d", e.Active, e.Bound)
}

// Is reports whether target is ErrTooManyServiceTokens.
func (e *TooManyServiceTokensError) Is(target error) bool { return target == ErrTooManyServiceTokens }
