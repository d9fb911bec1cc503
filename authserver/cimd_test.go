package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/erpgate/erpgate/authserver/storage"
	"github.com/erpgate/erpgate/platform/infra/pgtest"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

func testStore(t testing.TB) *storage.Store {
	t.Helper()
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secrets.ParseKeyring(spec)
	if err != nil {
		t.Fatal(err)
	}
	return storage.New(pgtest.NewPool(t), keys, storage.Options{RefreshGrace: 10 * time.Second})
}

// documentServer serves a client metadata document built by doc from its
// own URL, with the given Cache-Control, and counts fetches.
func documentServer(t *testing.T, cacheControl string, doc func(url string) any) (string, *atomic.Int32) {
	t.Helper()
	var fetches atomic.Int32
	var docURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if cacheControl != "" {
			w.Header().Set("Cache-Control", cacheControl)
		}
		_ = json.NewEncoder(w).Encode(doc(docURL))
	}))
	t.Cleanup(srv.Close)
	docURL = srv.URL + "/oauth/client.json"
	return docURL, &fetches
}

func cimdReason(err error) string {
	var ce *CIMDError
	if errors.As(err, &ce) {
		return ce.Reason
	}
	return ""
}

func TestCIMDResolvesAndCachesByHTTPHeaders(t *testing.T) {
	store := testStore(t)
	r := newCIMDResolver(store, CIMDOptions{}, true)
	url, fetches := documentServer(t, "max-age=600", func(u string) any {
		return map[string]any{"client_id": u, "client_name": "Doc Client", "redirect_uris": []string{"http://127.0.0.1/cb"}}
	})
	for range 3 {
		c, err := r.ResolveClient(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		if c.GetID() != url || !c.IsPublic() || c.GetRedirectURIs()[0] != "http://127.0.0.1/cb" {
			t.Fatalf("client = %+v", c)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("fetched %d times with max-age=600, want 1", n)
	}
	if got := r.ClientName(context.Background(), url); got != "Doc Client" {
		t.Errorf("ClientName = %q", got)
	}

	noStore, fetches2 := documentServer(t, "no-store", func(u string) any {
		return map[string]any{"client_id": u, "redirect_uris": []string{"http://127.0.0.1/cb"}}
	})
	for range 2 {
		if _, err := r.ResolveClient(context.Background(), noStore); err != nil {
			t.Fatal(err)
		}
	}
	if n := fetches2.Load(); n != 2 {
		t.Errorf("fetched %d times with no-store, want 2", n)
	}
}

func TestCIMDRefusals(t *testing.T) {
	store := testStore(t)
	dev := newCIMDResolver(store, CIMDOptions{MaxBytes: 2048}, true)

	mismatch, _ := documentServer(t, "", func(u string) any {
		return map[string]any{"client_id": u + "/other", "redirect_uris": []string{"http://127.0.0.1/cb"}}
	})
	_, err := dev.ResolveClient(context.Background(), mismatch)
	if !strings.Contains(cimdReason(err), "client_id does not match") {
		t.Errorf("mismatched client_id: %v", err)
	}

	oversized, _ := documentServer(t, "", func(u string) any {
		return map[string]any{"client_id": u, "redirect_uris": []string{"http://127.0.0.1/cb"}, "padding": strings.Repeat("x", 4096)}
	})
	_, err = dev.ResolveClient(context.Background(), oversized)
	if !strings.Contains(cimdReason(err), "larger than") {
		t.Errorf("oversized document: %v", err)
	}

	secretClient, _ := documentServer(t, "", func(u string) any {
		return map[string]any{"client_id": u, "redirect_uris": []string{"http://127.0.0.1/cb"}, "token_endpoint_auth_method": "client_secret_basic"}
	})
	if _, err := dev.ResolveClient(context.Background(), secretClient); cimdReason(err) == "" {
		t.Errorf("document with a secret-based auth method: %v", err)
	}

	// Outside development mode, documents on private, loopback and
	// link-local addresses are never fetched, and only https ids are used.
	prod := newCIMDResolver(store, CIMDOptions{}, false)
	private, fetches := documentServer(t, "", func(u string) any {
		return map[string]any{"client_id": u, "redirect_uris": []string{"https://app.example/cb"}}
	})
	httpsPrivate := strings.Replace(private, "http://", "https://", 1)
	_, err = prod.ResolveClient(context.Background(), httpsPrivate)
	if !strings.Contains(cimdReason(err), "not a public address") {
		t.Errorf("loopback document: %v", err)
	}
	for _, id := range []string{"https://169.254.169.254/latest/meta-data", "https://10.0.0.7/client.json", "https://[::1]/client.json"} {
		if _, err := prod.ResolveClient(context.Background(), id); !strings.Contains(cimdReason(err), "not a public address") {
			t.Errorf("%s: %v", id, err)
		}
	}
	if fetches.Load() != 0 {
		t.Error("a private address was reached")
	}
	if _, err := prod.ResolveClient(context.Background(), private); !strings.Contains(cimdReason(err), "https") {
		t.Errorf("http client id in production: %v", err)
	}
	if _, err := prod.ResolveClient(context.Background(), "https://example.com"); !strings.Contains(cimdReason(err), "path") {
		t.Errorf("client id without a path: %v", err)
	}
}

// TestCIMDFailuresAreCachedBriefly: a URL whose document cannot be used is
// not fetched again on every request (issue 14, item 6).
func TestCIMDFailuresAreCachedBriefly(t *testing.T) {
	var fetches atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		http.NotFound(w, nil)
	}))
	t.Cleanup(srv.Close)
	docURL := srv.URL + "/missing.json"
	r := newCIMDResolver(testStore(t), CIMDOptions{}, true)
	for range 3 {
		if _, err := r.ResolveClient(context.Background(), docURL); !strings.Contains(cimdReason(err), "HTTP 404") {
			t.Fatalf("missing document: %v", err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("a failing document was fetched %d times in a row, want 1", n)
	}
	// A minute later it is fetched again: the failure may have been fixed.
	later := time.Now().Add(cimdFailureTTL + time.Second)
	r.now = func() time.Time { return later }
	if _, err := r.ResolveClient(context.Background(), docURL); !strings.Contains(cimdReason(err), "HTTP 404") {
		t.Fatalf("missing document, later: %v", err)
	}
	if n := fetches.Load(); n != 2 {
		t.Errorf("fetched %d times after the failure expired, want 2", n)
	}
}

// TestCIMDCacheLifetimeFollowsTheDatabaseClock: a document's cache
// lifetime is read against the database's clock, so it is also set by it.
// A replica whose clock is behind the database's by more than max-age
// would store documents already expired, and fetch them again on every
// request (each fetch counting against the per-source limit).
func TestCIMDCacheLifetimeFollowsTheDatabaseClock(t *testing.T) {
	r := newCIMDResolver(testStore(t), CIMDOptions{}, true)
	r.now = func() time.Time { return time.Now().Add(-20 * time.Minute) }
	url, fetches := documentServer(t, "max-age=600", func(u string) any {
		return map[string]any{"client_id": u, "redirect_uris": []string{"http://127.0.0.1/cb"}}
	})
	for range 3 {
		if _, err := r.ResolveClient(context.Background(), url); err != nil {
			t.Fatal(err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("fetched %d times with max-age=600 on a replica whose clock is 20 minutes behind, want 1", n)
	}
}

// TestCIMDFetchesOneURLOnceAtATime: concurrent requests naming one URL
// share one fetch (issue 14, item 6).
func TestCIMDFetchesOneURLOnceAtATime(t *testing.T) {
	var fetches atomic.Int32
	release := make(chan struct{})
	var docURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fetches.Add(1)
		<-release
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": docURL, "redirect_uris": []string{"http://127.0.0.1/cb"}})
	}))
	t.Cleanup(srv.Close)
	docURL = srv.URL + "/client.json"
	r := newCIMDResolver(testStore(t), CIMDOptions{}, true)
	const callers = 8
	errs := make(chan error, callers)
	for range callers {
		go func() {
			_, err := r.ResolveClient(context.Background(), docURL)
			errs <- err
		}()
	}
	// Without sharing, every caller reaches the server while the first
	// is held; give them a generous while to do so.
	deadline := time.Now().Add(2 * time.Second)
	for fetches.Load() < callers && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	for range callers {
		if err := <-errs; err != nil {
			t.Errorf("caller: %v", err)
		}
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("%d concurrent callers made %d fetches, want 1", callers, n)
	}
}

// TestCIMDFetchesAreLimitedPerSource: each new URL client id is a fetch to
// a host the caller chose; one source gets a bounded number of them.
func TestCIMDFetchesAreLimitedPerSource(t *testing.T) {
	r := newCIMDResolver(testStore(t), CIMDOptions{}, true)
	r.fetchLimit = newSourceLimiter(SourceLimit{Burst: 2, Every: time.Hour}, time.Now)
	docURL, fetches := documentServer(t, "max-age=600", func(u string) any {
		return map[string]any{"client_id": u, "redirect_uris": []string{"http://127.0.0.1/cb"}}
	})
	base := strings.TrimSuffix(docURL, "/oauth/client.json")
	attacker := withSource(context.Background(), "203.0.113.9")
	for i, path := range []string{"/a.json", "/b.json", "/c.json"} {
		_, err := r.ResolveClient(attacker, base+path)
		if i < 2 && !strings.Contains(cimdReason(err), "client_id does not match") {
			t.Errorf("fetch %d: %v", i+1, err)
		}
		if i == 2 && !strings.Contains(cimdReason(err), "too many client metadata documents") {
			t.Errorf("fetch 3 from one source: %v", err)
		}
	}
	if n := fetches.Load(); n != 2 {
		t.Errorf("%d fetches, want 2", n)
	}
	if _, err := r.ResolveClient(withSource(context.Background(), "198.51.100.1"), docURL); err != nil {
		t.Errorf("another source: %v", err)
	}
	// A cached document costs no fetch, whatever the source.
	if _, err := r.ResolveClient(attacker, docURL); err != nil {
		t.Errorf("cached document for the limited source: %v", err)
	}
}

// TestCIMDAnswerHeadersAreBounded: the host of a URL client id is anyone's
// choice, and the document is fetched before any sign-in. Its answer's
// headers are bounded like the ERPs' (outbound.TestHeaderBound): a
// megabyte of tiny header lines, some 33 MiB of heap per fetch once
// parsed under Go's default bound of 10 MiB, is refused; an ordinary
// document host's headers still go.
func TestCIMDAnswerHeadersAreBounded(t *testing.T) {
	r := newCIMDResolver(testStore(t), CIMDOptions{}, true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		lines := 5
		if req.URL.Path == "/hostile/client.json" {
			lines = 200_000
		}
		for i := range lines {
			w.Header().Add("X-"+strconv.Itoa(i%50), "b")
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "http://" + req.Host + req.URL.Path, "redirect_uris": []string{"http://127.0.0.1/cb"}})
	}))
	t.Cleanup(srv.Close)
	if _, err := r.ResolveClient(context.Background(), srv.URL+"/hostile/client.json"); err == nil {
		t.Error("a document answered with 200,000 header lines was used")
	}
	if _, err := r.ResolveClient(context.Background(), srv.URL+"/plain/client.json"); err != nil {
		t.Errorf("a document with a few headers: %v", err)
	}
}
