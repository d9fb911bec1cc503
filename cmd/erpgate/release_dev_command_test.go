//go:build !dev

package main

import (
	"errors"
	"strings"
	"testing"
)

// TestReleaseDevCommandPointsToTheSource: `erpgate dev` in a release build
// says in a sentence where dev mode lives instead of failing obscurely.
func TestReleaseDevCommandPointsToTheSource(t *testing.T) {
	err := run(t.Context(), []string{"dev"})
	var usage usageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "go run ./cmd/erpgate-dev") {
		t.Fatalf("erpgate dev in a release build: %v, want a usage error naming go run ./cmd/erpgate-dev", err)
	}
}
