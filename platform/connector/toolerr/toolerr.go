// Package toolerr is erpgate's error model for tool calls: every failure a
// model can see is an *Error with a stable Code, a message that is safe to
// show (no secrets, no upstream bodies verbatim) and whether retrying may help.
//
// Connectors and the outbound transport create these errors; the MCP engine
// classifies whatever else reaches it exactly once, at its boundary.
package toolerr

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Code is a stable, documented failure code. Clients may switch on it.
type Code string

// The codes, as the Errors table of docs/architecture.md lists them. The
// set is closed: adding one is an API change.
const (
	InvalidArgument         Code = "INVALID_ARGUMENT"
	NotFound                Code = "NOT_FOUND"
	PermissionDenied        Code = "PERMISSION_DENIED"
	AuthExpired             Code = "AUTH_EXPIRED"
	RateLimited             Code = "RATE_LIMITED"
	UpstreamTimeout         Code = "UPSTREAM_TIMEOUT"
	UpstreamUnavailable     Code = "UPSTREAM_UNAVAILABLE"
	UpstreamInvalidResponse Code = "UPSTREAM_INVALID_RESPONSE"
	ResponseTooLarge        Code = "RESPONSE_TOO_LARGE"
	Internal                Code = "INTERNAL"

	// The codes of a write tool's human approval (docs/writes.md).
	//
	// ApprovalRequired: nothing was written; a person must approve the
	// change at the URL in the message, then the same call is repeated.
	ApprovalRequired Code = "APPROVAL_REQUIRED"
	// ApprovalRejected: the person rejected the change; nothing was
	// written.
	ApprovalRejected Code = "APPROVAL_REJECTED"
	// ApprovalExpired: the approval (or the proposal awaiting it) ran out
	// of time, or the document changed after it was approved; nothing was
	// written.
	ApprovalExpired Code = "APPROVAL_EXPIRED"
	// ApprovalInvalid: what the call presented is not a usable approval
	// (forged, already used, another caller's, or for other arguments);
	// nothing was written.
	ApprovalInvalid Code = "APPROVAL_INVALID"
)

// Codes lists every code, in documentation order.
var Codes = []Code{
	InvalidArgument, NotFound, PermissionDenied, AuthExpired, RateLimited,
	UpstreamTimeout, UpstreamUnavailable, UpstreamInvalidResponse, ResponseTooLarge, Internal,
	ApprovalRequired, ApprovalRejected, ApprovalExpired, ApprovalInvalid,
}

// Retryable reports whether a failure with this code may succeed when the
// same call is repeated later without changes.
func (c Code) Retryable() bool {
	switch c {
	case RateLimited, UpstreamTimeout, UpstreamUnavailable:
		return true
	}
	return false
}

// Error is a classified tool failure.
type Error struct {
	Code Code
	// Message is shown to the model. It must say what went wrong and, where
	// possible, what to change. It must never contain credentials.
	Message string
	// RetryAfter, when positive, tells the caller how long to wait.
	RetryAfter time.Duration
	// Err is the underlying cause, for logs. It is never shown to the model.
	Err error
	// ERPSaid is the ERP's own words when the failure is its refusal of a
	// write (cleaned of markup), for erpgate's pages to quote to the
	// person who approved it; the model reads them in Message. Empty when
	// the ERP gave none, or did not refuse. For a write the ERP made, but
	// not as approved (connector.ErrNotAsApproved), it is what the ERP
	// saved otherwise, in people's words, to follow "<the ERP> saved".
	ERPSaid string
	// NothingWritten says the failure is certain to have changed nothing
	// in the ERP: set (WroteNothing) only where that is known, by who
	// knows it (the ERP refused the write before running it, or nothing
	// was sent to be written), never guessed from a code or a message. An
	// approved write that fails so keeps its approval (docs/writes.md).
	NothingWritten bool
}

// New returns an error with a formatted, model-safe message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error with a model-safe message that keeps cause for
// errors.Is/As and for operator logs.
func Wrap(code Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: cause}
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether repeating the call may succeed.
func (e *Error) Retryable() bool { return e.Code.Retryable() }

// WithRetryAfter sets RetryAfter and returns e.
func (e *Error) WithRetryAfter(d time.Duration) *Error {
	e.RetryAfter = d
	return e
}

// WroteNothing sets NothingWritten and returns e.
func (e *Error) WroteNothing() *Error {
	e.NothingWritten = true
	return e
}

// UnsentWrite is err, from a write tool's handler that failed before it
// sent any request that writes (it had only read), flagged NothingWritten
// so that its approval holds for the same call. A refusal because the
// approval itself no longer holds (ApprovalExpired, ApprovalInvalid) is
// returned as it is. err must not be nil.
func UnsentWrite(err error) error {
	te := Classify(err)
	switch te.Code {
	case ApprovalExpired, ApprovalInvalid:
		return err
	}
	te.WroteNothing()
	var own *Error
	if errors.As(err, &own) {
		return err // te is own, flagged in place
	}
	return te
}

// NothingWritten reports whether err is (or wraps) an *Error whose
// NothingWritten is set: the failure is certain to have changed nothing.
func NothingWritten(err error) bool {
	var te *Error
	return errors.As(err, &te) && te.NothingWritten
}

// SaidByERP sets ERPSaid and returns e.
func (e *Error) SaidByERP(words string) *Error {
	e.ERPSaid = words
	return e
}

// Classify turns any error into an *Error. A wrapped *Error keeps its code;
// context errors become timeouts or cancellations; anything else is INTERNAL
// with a generic message, because its text was never meant for a model.
func Classify(err error) *Error {
	if err == nil {
		return nil
	}
	var te *Error
	if errors.As(err, &te) {
		return te
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Wrap(UpstreamTimeout, err, "the ERP did not answer within the time budget for this call; nothing was returned, which does not mean there are no records")
	case errors.Is(err, context.Canceled):
		return Wrap(UpstreamTimeout, err, "the call was cancelled before the ERP answered")
	}
	return Wrap(Internal, err, "an internal error stopped this call; the operator's logs have details")
}
