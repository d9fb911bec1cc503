package siteadmin

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/infra/database"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// Kind says what sort of failure an *Error is, for callers to map to their
// own answers (an HTTP status, a page).
type Kind string

// The kinds of failure.
const (
	// Invalid: the input breaks a rule; the message says which.
	Invalid Kind = "invalid_request"
	// NotFound: the site, connection, token or person does not exist.
	NotFound Kind = "not_found"
	// Conflict: the change conflicts with the registry's state.
	Conflict Kind = "conflict"
	// Rejected: the ERP refused the credential.
	Rejected Kind = "credential_rejected"
	// Unreachable: the ERP could not be asked, or answered unlike the kind
	// of ERP the site is.
	Unreachable Kind = "upstream_unreachable"
	// Internal: erpgate failed (its database, a wiring mistake). The
	// message says nothing more; Err has the cause, for the log.
	Internal Kind = "internal"
)

// Error is a failure of a site-administration action. Message is written
// for the person who acted and never contains a secret or a library's
// error text; Err is the cause, for the server log only.
//
// Field, Problem and Missing say the same for a form: Field names the
// input as NewSite has it ("slug", "display_name", "base_url", or
// "settings.<key>" for a connector setting), Problem what is wrong with it
// in a phrase that follows the form's label ("holds a control character"),
// without repeating what was typed; Missing lists the inputs left empty.
// Sentence puts them in a form's words.
//
// ForPeople, when set, is Message as told to someone who is not erpgate's
// operator (a person registering a site, a site's owner): what only the
// operator can do is said as something to ask them, and no operator's
// setting is named. PeopleSentence gives it.
type Error struct {
	Kind      Kind
	Message   string
	Err       error
	Field     string
	Problem   string
	Missing   []string
	ForPeople string
	// asksOperator marks a ForPeople that asks erpgate's operator for
	// what only they can do (allow a private address, remove a
	// credential): told to the operator, Message, which names the
	// setting, says it better.
	asksOperator bool
}

// Sentence is the refusal as a page with a form shows it: the form's label
// for the input (label gives it for a Field or Missing name, "" when the
// form has none) followed by the problem ("Tenant holds a control
// character."); the Message as a sentence when the form has no label for
// it, or label is nil (a page without a form for it).
func (e *Error) Sentence(label func(field string) string) string {
	if label == nil {
		label = func(string) string { return "" }
	}
	if e.Field != "" && e.Problem != "" {
		if l := label(e.Field); l != "" {
			return l + " " + e.Problem + "."
		}
	}
	if len(e.Missing) > 0 {
		var labels []string
		for _, f := range e.Missing {
			if l := label(f); l != "" {
				labels = append(labels, l)
			}
		}
		if len(labels) == len(e.Missing) {
			if len(labels) == 1 {
				return labels[0] + " is empty."
			}
			return strings.Join(labels[:len(labels)-1], ", ") + " and " + labels[len(labels)-1] + " are empty."
		}
	}
	return asSentence(e.Message)
}

// PeopleSentence is Sentence for a page whose reader is not erpgate's
// operator (registration, the site owner's page): ForPeople as a sentence
// when the refusal has one.
func (e *Error) PeopleSentence(label func(field string) string) string {
	if e.ForPeople != "" {
		return asSentence(e.ForPeople)
	}
	return e.Sentence(label)
}

// ConsoleSentence is Sentence for the operator's console, a page too:
// ForPeople's plain words when the refusal has them (which box of a form
// to paste again, what to check at the ERP, rather than the admin API's
// field names or a tool error's words for a model), except where they ask
// the operator for something, where Message says what to do.
func (e *Error) ConsoleSentence(label func(field string) string) string {
	if e.asksOperator {
		return e.Sentence(label)
	}
	return e.PeopleSentence(label)
}

// asSentence is msg starting with a capital and ending with a full stop.
func asSentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return msg
	}
	// By character: a message may open with a quotation mark or a
	// letter of more than one byte.
	first, size := utf8.DecodeRuneInString(msg)
	msg = string(unicode.ToUpper(first)) + msg[size:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

func (e *Error) Error() string {
	if e.Err != nil {
		// For the log: the cause names an ERP's addresses by scheme,
		// host and path only (a refused redirect's Location, a request's
		// query may hold a credential).
		return fmt.Sprintf("%s: %s: %v", e.Kind, e.Message, outbound.BareURLs(e.Err))
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Unavailable reports whether the failure is erpgate's database being
// unreachable, so that trying again shortly is the right move.
func (e *Error) Unavailable() bool {
	return e.Kind == Internal && errors.Is(e.Err, database.ErrUnavailable)
}

func newError(kind Kind, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Err: cause}
}

func invalid(format string, args ...any) *Error { return newError(Invalid, nil, format, args...) }

func internal(cause error) *Error {
	return &Error{Kind: Internal, Message: "an internal error stopped this action; the server log has details", Err: cause}
}

// asError turns any error into an *Error; one not already an *Error is
// internal.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return internal(err)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
