package inmemory

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestCacheExpiresAndIsPerSite(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := NewSiteStorage(c.now)
	a, b := uuid.New(), uuid.New()
	ctx := context.Background()
	if err := s.Cache(a).Set(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Cache(b).Get(ctx, "k"); ok {
		t.Fatal("site B sees site A's entry")
	}
	if v, ok, _ := s.Cache(a).Get(ctx, "k"); !ok || string(v) != "v" {
		t.Fatalf("Get = %q %v", v, ok)
	}
	c.t = c.t.Add(time.Minute)
	if _, ok, _ := s.Cache(a).Get(ctx, "k"); ok {
		t.Fatal("expired entry served")
	}
	if n, _ := s.Cache(a).Clear(ctx); n != 0 {
		t.Fatalf("Clear counted %d expired entries", n)
	}
}

func TestIndexRanksAllTermsFirst(t *testing.T) {
	s := NewSiteStorage(nil)
	x := s.SchemaIndex(uuid.New())
	ctx := context.Background()
	err := x.Replace(ctx, "v", []connector.IndexDocument{
		{Kind: "entity", Name: "Customer", Keywords: "Customer", Body: "credit limit"},
		{Kind: "field", Name: "Customer.CreditLimit", Keywords: "Customer CreditLimit"},
		{Kind: "field", Name: "Vendor.Credit", Keywords: "Vendor Credit"},
	}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	hits, _ := x.Search(ctx, "customer credit", nil, 10)
	if len(hits) != 3 || hits[0].Document.Name != "Customer.CreditLimit" || !hits[1].AllTerms || hits[2].AllTerms {
		t.Fatalf("hits = %+v", hits)
	}
	if d, ok, _ := x.Document(ctx, "entity", "customer"); !ok || d.Name != "Customer" {
		t.Fatalf("case-insensitive Document = %+v %v", d, ok)
	}
	if list, _ := x.Documents(ctx, "field", "cust", 10); len(list) != 1 {
		t.Fatalf("Documents = %+v", list)
	}
}

func TestServiceTokensRenewOncePerKey(t *testing.T) {
	s := NewServiceTokens(nil)
	site := uuid.New()
	var renewals atomic.Int32
	renew := func(context.Context, connector.StoredToken) (connector.UpstreamToken, error) {
		renewals.Add(1)
		return connector.UpstreamToken{AccessToken: "a", RefreshToken: "r", ExpiresIn: time.Hour}, nil
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if tok, err := s.Token(context.Background(), site, "u", renew); err != nil || tok != "a" {
				t.Errorf("Token = %q, %v", tok.Reveal(), err)
			}
		}()
	}
	wg.Wait()
	if renewals.Load() != 1 {
		t.Fatalf("renewals = %d", renewals.Load())
	}
	_ = s.Reject(context.Background(), site, "u", secrets.Secret("a"))
	var seen connector.StoredToken
	_, _ = s.Token(context.Background(), site, "u", func(_ context.Context, cur connector.StoredToken) (connector.UpstreamToken, error) {
		seen = cur
		return connector.UpstreamToken{AccessToken: "b"}, nil
	})
	if seen.Refresh != "r" {
		t.Fatalf("renew after Reject did not get the refresh token: %+v", seen)
	}
}
