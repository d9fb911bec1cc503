package pagekit

import (
	"crypto/rand"
	"net/http"
	"strings"
)

// ErrorPage is what a person is told when something cannot go on: a
// plain sentence, what to do next and, for failures an operator must look
// into, a reference that the log carries too. Library errors, error codes
// and stack details never go on it; the caller logs them.
type ErrorPage struct {
	// Title is the heading, and the tab's title.
	Title string
	// Message says in a sentence or two what happened.
	Message string
	// Causes are shown as a list of likely causes (a set-up problem).
	Causes []string
	// Next says what to do now.
	Next string
	// Reference, when set, is shown for the person to quote; the caller
	// logs it with the details. NewReference makes one.
	Reference string
}

// RenderError writes the error page with status.
func (k *Kit) RenderError(w http.ResponseWriter, status int, p ErrorPage) error {
	return k.Render(w, status, k.errorP, p, Options{})
}

// internalError is the page for a failure with nothing more to say.
func internalError() ErrorPage {
	return ErrorPage{
		Title:   "Something went wrong",
		Message: "erpgate could not show this page.",
		Next:    "Try again in a moment. If it keeps happening, tell your erpgate operator.",
	}
}

// referenceAlphabet leaves out letters that read alike (0/O, 1/I/L).
const referenceAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

// NewReference returns a short reference for an error page, such as
// "K7QM-4XD2", easy to read out over the phone and to find in the log.
func NewReference() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	var s strings.Builder
	for i, c := range b {
		if i == 4 {
			s.WriteByte('-')
		}
		s.WriteByte(referenceAlphabet[int(c)%len(referenceAlphabet)])
	}
	return s.String()
}
