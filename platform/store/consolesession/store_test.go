package consolesession

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/erpgate/erpgate/platform/infra/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestASessionIsOpenUntilEndedOrExpired(t *testing.T) {
	ctx := context.Background()
	s := New(pgtest.NewPool(t))
	sess, err := s.Open(ctx, "192.0.2.1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Check(ctx, sess.ID)
	if err != nil || got.Ref != sess.Ref || len(got.Ref) != 12 {
		t.Fatalf("Check = %+v, %v; want ref %q", got, err, sess.Ref)
	}
	if _, err := s.Check(ctx, sess.ID+"x"); !errors.Is(err, ErrEnded) {
		t.Errorf("an unknown id: %v", err)
	}
	if err := s.End(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Check(ctx, sess.ID); !errors.Is(err, ErrEnded) {
		t.Errorf("after End: %v", err)
	}
	if err := s.End(ctx, sess.ID); err != nil {
		t.Errorf("ending twice: %v", err)
	}
	short, err := s.Open(ctx, "192.0.2.1", 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := s.Check(ctx, short.ID)
		if errors.Is(err, ErrEnded) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session did not expire: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
