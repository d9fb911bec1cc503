package approve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/infra/sourcelimit"
	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/web/pagekit"
)

// noActions is a store that holds no action.
type noActions struct{ Actions }

func (noActions) Lookup(context.Context, uuid.UUID) (approval.Action, error) {
	return approval.Action{}, approval.ErrNotFound
}

// A link with erpgate's check value passes a spent source once; when it
// finds nothing (its action removed) it is bounded from then on, like a
// made-up one, so that holding one link buys no unbounded lookups.
func TestTaggedLinkThatFindsNothingIsBoundedAgain(t *testing.T) {
	kit, err := pagekit.New("https://erpgate.example.com")
	if err != nil {
		t.Fatal(err)
	}
	key := []byte(strings.Repeat("k", 32))
	h := &Handler{log: zap.NewNop(), deps: Deps{Kit: kit, Actions: noActions{},
		Lookups: sourcelimit.NewLookups(sourcelimit.Limit{Burst: 1, Every: time.Hour}, nil), LinkKeys: [][]byte{key}}}
	get := func(raw string) int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/approve/"+raw, nil)
		req.RemoteAddr = "198.51.100.7:4000"
		h.load(rec, req, raw)
		return rec.Code
	}
	if status := get(uuid.NewString()); status != http.StatusNotFound {
		t.Fatalf("a made-up link: HTTP %d, want 404", status)
	}
	if status := get(uuid.NewString()); status != http.StatusTooManyRequests {
		t.Fatalf("another made-up link from the spent source: HTTP %d, want 429", status)
	}
	tagged := approval.LinkID(uuid.New(), key)
	if status := get(tagged); status != http.StatusNotFound {
		t.Errorf("a tagged link from the spent source: HTTP %d, want it looked up (404)", status)
	}
	if status := get(tagged); status != http.StatusTooManyRequests {
		t.Errorf("the tagged link again after it found nothing: HTTP %d, want 429", status)
	}
}
