package toolerr

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestClassifyKeepsCodeThroughWrapping(t *testing.T) {
	base := New(NotFound, "Sales Invoice %s not found", "X")
	wrapped := fmt.Errorf("frappe: get document on demo: %w", base)
	got := Classify(wrapped)
	if got.Code != NotFound || got.Message != "Sales Invoice X not found" {
		t.Fatalf("Classify = %+v", got)
	}
}

func TestClassifyContextAndUnknown(t *testing.T) {
	cases := []struct {
		err  error
		want Code
	}{
		{fmt.Errorf("get: %w", context.DeadlineExceeded), UpstreamTimeout},
		{context.Canceled, UpstreamTimeout},
		{errors.New("secret-bearing text token abc:def"), Internal},
	}
	for _, c := range cases {
		got := Classify(c.err)
		if got.Code != c.want {
			t.Errorf("Classify(%v).Code = %s, want %s", c.err, got.Code, c.want)
		}
		if got.Code == Internal && got.Message == c.err.Error() {
			t.Errorf("INTERNAL message leaked the cause text")
		}
	}
	if Classify(nil) != nil {
		t.Error("Classify(nil) != nil")
	}
}

func TestRetryableCodes(t *testing.T) {
	retryable := map[Code]bool{RateLimited: true, UpstreamTimeout: true, UpstreamUnavailable: true}
	for _, c := range Codes {
		if c.Retryable() != retryable[c] {
			t.Errorf("%s.Retryable() = %v", c, c.Retryable())
		}
	}
}

// TestUnsentWrite: a write handler's failure before it sent any request
// that writes is flagged NothingWritten, its own *Error in place and a
// plain error once classified; a refusal of the approval itself is left
// unflagged, since that approval does not hold.
func TestUnsentWrite(t *testing.T) {
	own := New(UpstreamUnavailable, "the ERP did not answer the read")
	if got := UnsentWrite(fmt.Errorf("reading: %w", own)); !NothingWritten(got) || !errors.Is(got, own) {
		t.Errorf("a wrapped *Error: %v, flagged %v", got, NothingWritten(got))
	}
	plain := errors.New("a bug")
	got := UnsentWrite(plain)
	if !NothingWritten(got) || Classify(got).Code != Internal || !errors.Is(got, plain) {
		t.Errorf("a plain error: %v, flagged %v", got, NothingWritten(got))
	}
	for _, code := range []Code{ApprovalExpired, ApprovalInvalid} {
		refused := New(code, "the approval does not hold")
		if got := UnsentWrite(refused); !errors.Is(got, refused) || NothingWritten(got) {
			t.Errorf("%s: %v, flagged %v", code, got, NothingWritten(got))
		}
	}
}
