package authserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ory/fosite"
	"golang.org/x/sync/singleflight"

	"github.com/erpgate/erpgate/authserver/storage"
)

// CIMDOptions bound Client ID Metadata Document fetches.
type CIMDOptions struct {
	// Timeout bounds one fetch, connection included. Default 5s.
	Timeout time.Duration
	// MaxBytes bounds a document. Default 5 KiB, the size the draft
	// suggests servers accept.
	MaxBytes int64
	// DefaultTTL is how long a document without cache headers is kept.
	// Default 5m.
	DefaultTTL time.Duration
	// MaxTTL caps the cache lifetime whatever the headers say. Default 24h.
	MaxTTL time.Duration
	// AllowPrivateAddresses lets documents live on private, loopback and
	// link-local hosts, and on plain http. Only for development: it is
	// switched on when erpgate itself is served over plain http.
	AllowPrivateAddresses bool
	// Transport replaces the fetch transport (tests). The SSRF guard is in
	// the default transport's dialer.
	Transport http.RoundTripper
}

// CIMDError says why a URL client id could not be used. Its message is safe
// to show as an OAuth error description.
type CIMDError struct{ Reason string }

func (e *CIMDError) Error() string { return "client metadata document: " + e.Reason }

func cimdErrorf(format string, args ...any) error {
	return &CIMDError{Reason: fmt.Sprintf(format, args...)}
}

// cimdDocument is the part of a Client ID Metadata Document erpgate reads.
type cimdDocument struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// A URL whose document could not be used is not fetched again for
// cimdFailureTTL; at most maxCIMDFailures such URLs are remembered.
const (
	cimdFailureTTL  = time.Minute
	maxCIMDFailures = 10_000
)

// cimdMaxHeaderBytes bounds a document answer's headers: a document host
// sends a few hundred bytes of them.
const cimdMaxHeaderBytes = 64 << 10

// cimdResolver fetches, checks and caches Client ID Metadata Documents.
// Documents are cached in Postgres (shared by replicas); failures briefly,
// in memory. Concurrent requests for one URL share one fetch.
type cimdResolver struct {
	store *storage.Store
	opts  CIMDOptions
	http  *http.Client
	now   func() time.Time

	// fetchLimit, when set, bounds the fetches made for one source's
	// requests (the source is in the request context).
	fetchLimit *sourceLimiter

	flights  singleflight.Group
	mu       sync.Mutex
	failures map[string]cimdFailure
}

// cimdFailure is a URL's last failure, repeated until until.
type cimdFailure struct {
	err   error
	until time.Time
}

var _ storage.ClientResolver = (*cimdResolver)(nil)

func newCIMDResolver(store *storage.Store, opts CIMDOptions, devMode bool) *cimdResolver {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 5 << 10
	}
	if opts.DefaultTTL <= 0 {
		opts.DefaultTTL = 5 * time.Minute
	}
	if opts.MaxTTL <= 0 {
		opts.MaxTTL = 24 * time.Hour
	}
	if devMode {
		opts.AllowPrivateAddresses = true
	}
	rt := opts.Transport
	if rt == nil {
		t := &http.Transport{
			Proxy:                 nil, // a proxy would hide the address actually reached
			TLSHandshakeTimeout:   opts.Timeout,
			ResponseHeaderTimeout: opts.Timeout,
			// Anyone chooses the host: its headers are bounded like the
			// document (Go's default of 10 MiB costs some 33 MiB of heap
			// per fetch once parsed).
			MaxResponseHeaderBytes: cimdMaxHeaderBytes,
			MaxIdleConns:           16,
			IdleConnTimeout:        30 * time.Second,
		}
		if opts.AllowPrivateAddresses {
			t.DialContext = (&net.Dialer{Timeout: opts.Timeout}).DialContext
		} else {
			t.DialContext = guardedDialer(opts.Timeout).DialContext
		}
		rt = t
	}
	return &cimdResolver{
		store:    store,
		opts:     opts,
		now:      time.Now,
		failures: map[string]cimdFailure{},
		http: &http.Client{
			Transport: rt,
			Timeout:   opts.Timeout,
			// A client id is the document's own URL: a redirect would make
			// it describe another URL.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// ResolveClient returns the client a URL client id describes, from the
// cache or freshly fetched.
func (c *cimdResolver) ResolveClient(ctx context.Context, clientID string) (fosite.Client, error) {
	if err := c.checkClientIDURL(clientID); err != nil {
		return nil, err
	}
	raw, ok, err := c.store.CachedDocument(ctx, clientID)
	if err != nil {
		return nil, err
	}
	if !ok {
		if raw, err = c.fetchShared(ctx, clientID); err != nil {
			return nil, err
		}
	}
	doc, err := c.check(clientID, raw)
	if err != nil {
		return nil, err
	}
	return &fosite.DefaultClient{
		ID:            clientID,
		RedirectURIs:  doc.RedirectURIs,
		GrantTypes:    []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"},
		Scopes:        supportedScopes,
		Public:        true,
	}, nil
}

// fetchShared fetches a document and caches it, once at a time per URL:
// concurrent callers wait for the fetch in flight. A failure is repeated
// without fetching for cimdFailureTTL, so that a URL that does not work
// costs one fetch a minute however often it is named.
func (c *cimdResolver) fetchShared(ctx context.Context, clientID string) (json.RawMessage, error) {
	if err := c.recentFailure(clientID); err != nil {
		return nil, err
	}
	if source, ok := sourceFrom(ctx); ok && c.fetchLimit != nil {
		// Every new URL would be a fetch to a host the caller chose.
		if ok, wait, _ := c.fetchLimit.Allow(source); !ok {
			return nil, cimdErrorf("erpgate has fetched too many client metadata documents for your network; try again %s", inSeconds(int(math.Ceil(wait.Seconds()))))
		}
	}
	ch := c.flights.DoChan(clientID, func() (any, error) {
		// The fetch has its own timeout and serves every waiting caller,
		// so it does not end when the first caller goes away.
		fctx := context.WithoutCancel(ctx)
		raw, ttl, err := c.fetch(fctx, clientID)
		if err != nil {
			var ce *CIMDError
			if errors.As(err, &ce) {
				c.rememberFailure(clientID, err)
			}
			return nil, err
		}
		if ttl > 0 {
			if err := c.store.CacheDocument(fctx, clientID, raw, ttl); err != nil {
				return nil, err
			}
		}
		return raw, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(json.RawMessage), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// recentFailure returns the failure of clientID's last fetch, if it is
// recent.
func (c *cimdResolver) recentFailure(clientID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.failures[clientID]
	if !ok {
		return nil
	}
	if !c.now().Before(f.until) {
		delete(c.failures, clientID)
		return nil
	}
	return f.err
}

func (c *cimdResolver) rememberFailure(clientID string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.failures) >= maxCIMDFailures {
		for k, f := range c.failures {
			if !now.Before(f.until) {
				delete(c.failures, k)
			}
		}
		if len(c.failures) >= maxCIMDFailures {
			clear(c.failures)
		}
	}
	c.failures[clientID] = cimdFailure{err: err, until: now.Add(cimdFailureTTL)}
}

// ClientName returns the client_name of a URL client's document, when it
// is cached.
func (c *cimdResolver) ClientName(ctx context.Context, clientID string) string {
	raw, ok, err := c.store.CachedDocument(ctx, clientID)
	if err != nil || !ok {
		return ""
	}
	var doc cimdDocument
	_ = json.Unmarshal(raw, &doc)
	return doc.ClientName
}

// checkClientIDURL applies the draft's rules to the client id itself: an
// https URL with a path, no fragment, no credentials, no dot segments.
func (c *cimdResolver) checkClientIDURL(clientID string) error {
	u, err := url.Parse(clientID)
	switch {
	case err != nil || u.Host == "":
		return cimdErrorf("the client id is not a URL")
	case u.Scheme != "https" && !(c.opts.AllowPrivateAddresses && u.Scheme == "http"):
		return cimdErrorf("a URL client id must use https")
	case u.User != nil || u.Fragment != "" || strings.Contains(clientID, "#"):
		return cimdErrorf("a URL client id must not contain credentials or a fragment")
	case u.Path == "" || u.Path == "/":
		return cimdErrorf("a URL client id must have a path")
	case strings.Contains(u.Path, "/./") || strings.Contains(u.Path, "/../") || strings.HasSuffix(u.Path, "/.") || strings.HasSuffix(u.Path, "/.."):
		return cimdErrorf("a URL client id must not contain dot segments")
	}
	return nil
}

// fetch downloads a document within the size and time limits and returns
// it with its cache lifetime.
func (c *cimdResolver) fetch(ctx context.Context, clientID string) (json.RawMessage, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return nil, 0, cimdErrorf("the client id is not a fetchable URL")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, errForbiddenAddress) {
			return nil, 0, cimdErrorf("the client metadata document's host is not a public address")
		}
		return nil, 0, cimdErrorf("the client metadata document could not be fetched")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, cimdErrorf("fetching the client metadata document gave HTTP %d", resp.StatusCode)
	}
	if resp.ContentLength > c.opts.MaxBytes {
		return nil, 0, cimdErrorf("the client metadata document is larger than %d bytes", c.opts.MaxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBytes+1))
	if err != nil {
		return nil, 0, cimdErrorf("the client metadata document could not be read")
	}
	if int64(len(body)) > c.opts.MaxBytes {
		return nil, 0, cimdErrorf("the client metadata document is larger than %d bytes", c.opts.MaxBytes)
	}
	if _, err := c.check(clientID, body); err != nil {
		return nil, 0, err
	}
	return body, c.cacheLifetime(resp.Header), nil
}

// check validates a document against its URL.
func (c *cimdResolver) check(clientID string, raw []byte) (cimdDocument, error) {
	var doc cimdDocument
	// The document is cached as PostgreSQL jsonb, which holds neither
	// bytes that are not UTF-8 nor \u0000: such a document would fail
	// every sign-in with the client as a server error.
	if !utf8.Valid(raw) || bytes.Contains(raw, []byte(`\u0000`)) {
		return doc, cimdErrorf("the client metadata document is not UTF-8 JSON without NUL characters")
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return doc, cimdErrorf("the client metadata document is not a JSON object")
	}
	if doc.ClientID != clientID {
		return doc, cimdErrorf("the document's client_id does not match the URL it was fetched from")
	}
	if doc.TokenEndpointAuthMethod != "" && doc.TokenEndpointAuthMethod != "none" {
		return doc, cimdErrorf("token_endpoint_auth_method %q is not supported for URL client ids; use none", doc.TokenEndpointAuthMethod)
	}
	if len(doc.RedirectURIs) == 0 || len(doc.RedirectURIs) > maxRedirectURIs {
		return doc, cimdErrorf("the document must list between 1 and %d redirect_uris", maxRedirectURIs)
	}
	for _, u := range doc.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return doc, cimdErrorf("redirect URI %q is not acceptable", u)
		}
	}
	return doc, nil
}

// cacheLifetime reads Cache-Control (no-store, no-cache, max-age) and
// Expires, within [0, MaxTTL].
func (c *cimdResolver) cacheLifetime(h http.Header) time.Duration {
	ttl := c.opts.DefaultTTL
	cc := strings.ToLower(h.Get("Cache-Control"))
	maxAgeSeen := false
	for _, directive := range strings.Split(cc, ",") {
		directive = strings.TrimSpace(directive)
		switch {
		case directive == "no-store" || directive == "no-cache":
			return 0
		case strings.HasPrefix(directive, "max-age="):
			if d, ok := deltaSeconds(strings.TrimPrefix(directive, "max-age=")); ok {
				ttl, maxAgeSeen = d, true
			}
		}
	}
	if !maxAgeSeen {
		if exp, err := http.ParseTime(h.Get("Expires")); err == nil {
			ttl = max(time.Until(exp), 0)
		}
	}
	return min(ttl, c.opts.MaxTTL)
}

// deltaSeconds reads a Cache-Control delta-seconds value (digits only). A
// value too large for a Duration counts as the largest one (RFC 9111
// §1.2.2), which MaxTTL then caps; multiplying it by a second would wrap
// it round to a negative or arbitrary lifetime.
func deltaSeconds(s string) (time.Duration, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > int64(math.MaxInt64/time.Second) {
		return math.MaxInt64, true
	}
	return time.Duration(n) * time.Second, true
}
