package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/erpgate/erpgate/platform/store/sites"
)

// FuzzCIMDDocument checks what any document erpgate accepts for a URL
// client id promises: it names that URL as its client_id, lists 1 to
// maxRedirectURIs redirect URIs that pass the policy, and asks for no
// client authentication. Anything else is refused with a CIMDError.
func FuzzCIMDDocument(f *testing.F) {
	const id = "https://app.example/oauth/client.json"
	for _, seed := range []string{
		`{"client_id":"https://app.example/oauth/client.json","client_name":"App","redirect_uris":["http://127.0.0.1/cb"]}`,
		`{"client_id":"https://app.example/oauth/client.json","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"none"}`,
		`{"client_id":"https://app.example/oauth/client.json","redirect_uris":["com.example.app:/cb"],"token_endpoint_auth_method":"private_key_jwt"}`,
		`{"client_id":"https://other.example/c.json","redirect_uris":["http://127.0.0.1/cb"]}`,
		`{"client_id":"https://app.example/oauth/client.json","redirect_uris":[]}`,
		`null`, `[]`, `{"client_id":5}`,
	} {
		f.Add([]byte(seed))
	}
	r := newCIMDResolver(nil, CIMDOptions{}, false)
	f.Fuzz(func(t *testing.T, raw []byte) {
		doc, err := r.check(id, raw)
		if err != nil {
			var ce *CIMDError
			if !errors.As(err, &ce) || ce.Reason == "" {
				t.Fatalf("refusal of %q is not a CIMDError: %v", raw, err)
			}
			return
		}
		if doc.ClientID != id {
			t.Fatalf("accepted a document for %q", doc.ClientID)
		}
		if doc.TokenEndpointAuthMethod != "" && doc.TokenEndpointAuthMethod != "none" {
			t.Fatalf("accepted token_endpoint_auth_method %q", doc.TokenEndpointAuthMethod)
		}
		if len(doc.RedirectURIs) == 0 || len(doc.RedirectURIs) > maxRedirectURIs {
			t.Fatalf("accepted %d redirect URIs", len(doc.RedirectURIs))
		}
		for _, u := range doc.RedirectURIs {
			if checkRedirectURI(u) != nil {
				t.Fatalf("accepted redirect URI %q", u)
			}
		}
	})
}

// FuzzCIMDClientIDURL checks the client id rules on any input: an
// accepted id is an https URL with a host and a path, without
// credentials, fragment or dot segments.
func FuzzCIMDClientIDURL(f *testing.F) {
	for _, seed := range []string{
		"https://app.example/oauth/client.json",
		"https://app.example/",
		"http://app.example/c.json",
		"https://user:pw@app.example/c.json",
		"https://app.example/a/../c.json",
		"https://app.example/c.json#x",
		"app.example/c.json",
	} {
		f.Add(seed)
	}
	r := newCIMDResolver(nil, CIMDOptions{}, false)
	f.Fuzz(func(t *testing.T, id string) {
		err := r.checkClientIDURL(id)
		if err != nil {
			var ce *CIMDError
			if !errors.As(err, &ce) || ce.Reason == "" {
				t.Fatalf("refusal of %q is not a CIMDError: %v", id, err)
			}
			return
		}
		u, perr := url.Parse(id)
		if perr != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || strings.Contains(id, "#") {
			t.Fatalf("accepted client id %q", id)
		}
		if u.Path == "" || u.Path == "/" {
			t.Fatalf("accepted client id %q without a path", id)
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("accepted client id %q with a dot segment", id)
			}
		}
	})
}

// FuzzCIMDCacheLifetime checks that a document host's cache headers,
// whatever they say, give a lifetime between 0 and MaxTTL, and that a
// max-age of at least MaxTTL gives MaxTTL.
func FuzzCIMDCacheLifetime(f *testing.F) {
	for _, seed := range [][2]string{
		{"max-age=600", ""},
		{"public, max-age=3600", ""},
		{"no-store", ""},
		{"no-cache, max-age=60", ""},
		{"", "Wed, 21 Oct 2015 07:28:00 GMT"},
		{"max-age=86400", ""},
		{"max-age=-1", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	r := newCIMDResolver(nil, CIMDOptions{}, false)
	f.Fuzz(func(t *testing.T, cacheControl, expires string) {
		h := http.Header{}
		h.Set("Cache-Control", cacheControl)
		h.Set("Expires", expires)
		ttl := r.cacheLifetime(h)
		if ttl < 0 || ttl > r.opts.MaxTTL {
			t.Fatalf("Cache-Control %q, Expires %q: lifetime %v, want within [0, %v]", cacheControl, expires, ttl, r.opts.MaxTTL)
		}
		cc := strings.ToLower(cacheControl)
		if strings.Contains(cc, "no-store") || strings.Contains(cc, "no-cache") || strings.Count(cc, "max-age") != 1 {
			return
		}
		// One max-age of plain digits: the reference is the number itself.
		for _, d := range strings.Split(cc, ",") {
			d = strings.TrimSpace(d)
			n, ok := strings.CutPrefix(d, "max-age=")
			if !ok || n == "" || strings.Trim(n, "0123456789") != "" {
				continue
			}
			n = strings.TrimLeft(n, "0")
			maxSecs := int64(r.opts.MaxTTL / time.Second)
			if len(n) > 18 || (n != "" && atoi(n) >= maxSecs) {
				if ttl != r.opts.MaxTTL {
					t.Fatalf("Cache-Control %q: lifetime %v, want the cap %v", cacheControl, ttl, r.opts.MaxTTL)
				}
			}
		}
	})
}

func atoi(s string) int64 {
	var n int64
	for _, c := range s {
		n = n*10 + int64(c-'0')
	}
	return n
}

// FuzzParseResource: a resource indicator is recognised only when it is,
// up to one trailing slash, exactly the URL erpgate advertises for /mcp
// or for a site with a valid slug.
func FuzzParseResource(f *testing.F) {
	for _, seed := range []string{
		"https://erpgate.example.com/mcp", "https://erpgate.example.com/mcp/",
		"https://erpgate.example.com/sites/acme/mcp", "https://erpgate.example.com/sites/acme/mcp/",
		"https://erpgate.example.com/sites/ACME/mcp", "https://erpgate.example.com/sites/a/b/mcp",
		"https://erpgate.example.com/sites//mcp", "https://erpgate.example.com.evil/sites/acme/mcp",
		"https://erpgate.example.com/sites/mcp",
	} {
		f.Add(seed)
	}
	s := &Server{issuer: "https://erpgate.example.com"}
	f.Fuzz(func(t *testing.T, raw string) {
		r, ok := s.parseResource(raw)
		if !ok {
			return
		}
		if r.URL != strings.TrimSuffix(raw, "/") {
			t.Fatalf("parseResource(%q) = %q", raw, r.URL)
		}
		if r.generic() {
			if r.URL != "https://erpgate.example.com/mcp" {
				t.Fatalf("parseResource(%q) is the generic endpoint", raw)
			}
			return
		}
		if sites.ValidateSlug(r.Slug) != nil || r.URL != "https://erpgate.example.com/sites/"+r.Slug+"/mcp" {
			t.Fatalf("parseResource(%q) = site %q", raw, r.Slug)
		}
	})
}

// FuzzAuthorizeQuery: whatever query an authorization request has, the
// query fosite is given holds only the parameters erpgate understands,
// each once, with the value the request gave first; its scope is erp:read
// plus only scopes erpgate issues; and a parameter over its size limit is
// named.
func FuzzAuthorizeQuery(f *testing.F) {
	for _, seed := range []string{
		"response_type=code&client_id=https%3A%2F%2Fapp.example%2Fc.json&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&state=abcdefgh&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&resource=https%3A%2F%2Ferpgate.example.com%2Fmcp&scope=openid+profile+erp%3Aread",
		"response_type=code&response_mode=query&scope=offline_access&extra=1",
		"redirect_uri=a&redirect_uri=b&scope=erp:read%20erp:read",
		"state=" + strings.Repeat("x", 600),
		"%zz=1&scope=",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		form, err := url.ParseQuery(raw)
		if err != nil {
			return // ParseForm refuses it
		}
		if name, limit, ok := oversizedAuthorizeParameter(form); !ok {
			found := false
			for _, v := range form[name] {
				found = found || len(v) > limit
			}
			if !found {
				t.Fatalf("%q: %s named as longer than %d bytes", raw, name, limit)
			}
			return
		}
		q := normalizedAuthorizeQuery(form)
		for k, vs := range q {
			if len(vs) != 1 {
				t.Fatalf("%q: %s given %d times to fosite", raw, k, len(vs))
			}
			if k == "scope" {
				continue
			}
			if vs[0] != form.Get(k) {
				t.Fatalf("%q: %s = %q, the request's is %q", raw, k, vs[0], form.Get(k))
			}
			if !strings.Contains(" response_type client_id redirect_uri state code_challenge code_challenge_method resource response_mode ", " "+k+" ") {
				t.Fatalf("%q: unknown parameter %s passed on", raw, k)
			}
		}
		scopes := strings.Fields(q.Get("scope"))
		if len(scopes) == 0 || scopes[0] != ScopeRead {
			t.Fatalf("%q: scope %q", raw, q.Get("scope"))
		}
		for i, sc := range scopes {
			if sc != ScopeRead && sc != scopeOfflineAccess {
				t.Fatalf("%q: scope %q granted", raw, sc)
			}
			for _, other := range scopes[:i] {
				if other == sc {
					t.Fatalf("%q: scope %q twice", raw, sc)
				}
			}
		}
	})
}

// FuzzRedirectURIRefusal: a refused redirect URI is explained in one
// printable line: the URI is quoted shortened, in valid UTF-8 and without
// the control characters it may hold.
func FuzzRedirectURIRefusal(f *testing.F) {
	for _, c := range redirectURICases {
		f.Add(c.uri)
	}
	f.Add("https://app.example/cb#x\n" + strings.Repeat("é", 60))
	f.Add("http://evil.example/\x1b[31mred")
	f.Fuzz(func(t *testing.T, raw string) {
		err := checkRedirectURI(raw)
		if err == nil {
			return
		}
		var e *errInvalidMetadata
		if !errors.As(err, &e) {
			t.Fatalf("checkRedirectURI(%q): %v", raw, err)
		}
		if !utf8.ValidString(e.description) {
			t.Fatalf("checkRedirectURI(%q): description %q is not valid UTF-8", raw, e.description)
		}
		for _, r := range e.description {
			if unicode.IsControl(r) {
				t.Fatalf("checkRedirectURI(%q): description %q holds a control character", raw, e.description)
			}
		}
	})
}

// FuzzRegistrationIsStored: a registration erpgate accepts is stored;
// whatever text its fields hold, the database does not refuse it (which
// would answer an anonymous caller with a server error and log one).
func FuzzRegistrationIsStored(f *testing.F) {
	for _, seed := range []string{
		`{"redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none","client_name":"Claude"}`,
		`{"redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"client_uri":"https://claude.ai","contacts":["a@b.example"]}`,
		`{"redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none","client_name":"a\u0000b"}`,
		`{"redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"none","software_id":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	store := testStore(f)
	s := &Server{}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > maxRegistrationBytes {
			return
		}
		var req registrationRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		c, err := s.registeredClient(req)
		if err != nil {
			return
		}
		if c.TokenEndpointAuthMethod != "none" {
			c.SecretHash = make([]byte, 32) // as serveRegister sets it
		}
		if err := store.CreateClient(context.Background(), c); err != nil {
			t.Fatalf("registration %s accepted but not stored: %v", body, err)
		}
	})
}

// FuzzCIMDDocumentIsCached: a client metadata document erpgate accepts is
// cached; whatever else it holds, the database does not refuse it (which
// would fail every sign-in with the client as a server error).
func FuzzCIMDDocumentIsCached(f *testing.F) {
	const id = "https://app.example/oauth/client.json"
	for _, seed := range []string{
		`{"client_id":"https://app.example/oauth/client.json","client_name":"App","redirect_uris":["http://127.0.0.1/cb"]}`,
		`{"client_id":"https://app.example/oauth/client.json","redirect_uris":["http://127.0.0.1/cb"],"logo_uri":"x\u0000"}`,
		"{\"client_id\":\"https://app.example/oauth/client.json\",\"redirect_uris\":[\"http://127.0.0.1/cb\"],\"client_name\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	store := testStore(f)
	r := newCIMDResolver(store, CIMDOptions{}, false)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := r.check(id, raw); err != nil {
			return
		}
		if err := store.CacheDocument(context.Background(), id, raw, time.Minute); err != nil {
			t.Fatalf("document %q accepted but not cached: %v", raw, err)
		}
	})
}
