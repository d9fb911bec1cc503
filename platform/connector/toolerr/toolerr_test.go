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
