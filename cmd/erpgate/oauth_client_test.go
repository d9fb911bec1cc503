package main

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// e2eRedirectURI is the MCP client's redirect URI. Nothing listens there:
// the headless browser stops when it is sent to it.
const e2eRedirectURI = "http://127.0.0.1:9/callback"

// oauthMCPClient is an MCP client signed in with the official SDK's OAuth
// handler (discovery, dynamic registration, PKCE, token exchange, refresh).
type oauthMCPClient struct {
	browser *headlessBrowser
	source  *forceableTokenSource
	cs      *mcp.ClientSession
}

// forceableTokenSource is the SDK client's token source with one extra: a
// test can make it treat its access token as expired, as if the clock had
// moved on, so the next request refreshes it silently.
type forceableTokenSource struct {
	mu        sync.Mutex
	cfg       *oauth2.Config
	ctx       context.Context
	tok       *oauth2.Token
	expired   bool
	refreshes int
}

func (s *forceableTokenSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.expired || !s.tok.Valid() {
		stale := &oauth2.Token{RefreshToken: s.tok.RefreshToken, Expiry: time.Unix(1, 0)}
		tok, err := s.cfg.TokenSource(s.ctx, stale).Token()
		if err != nil {
			return nil, err
		}
		s.tok, s.expired = tok, false
		s.refreshes++
	}
	return s.tok, nil
}

func (s *forceableTokenSource) expire() {
	s.mu.Lock()
	s.expired = true
	s.mu.Unlock()
}

func (s *forceableTokenSource) current() *oauth2.Token {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tok
}

// connectOAuth connects to endpoint as the user whose form fields are
// given (usr/pwd for Frappe, username/password for Acumatica, erp_url for
// /mcp), signing in through the headless browser.
func connectOAuth(t *testing.T, endpoint string, fields map[string]string) *oauthMCPClient {
	t.Helper()
	return connectOAuthWith(t, endpoint, fields, nil, nil)
}

// connectOAuthWith is connectOAuth with the SDK client's options (its
// capabilities and handlers) and session options (the protocol version).
func connectOAuthWith(t *testing.T, endpoint string, fields map[string]string, opts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) *oauthMCPClient {
	t.Helper()
	b := newHeadlessBrowser(t, e2eRedirectURI, fields)
	c, err := tryConnectOAuthWith(t, endpoint, b, opts, sopts)
	if err != nil {
		t.Fatalf("connect %s: %v (last page: %s)", endpoint, err, pageText(b.LastPage().Body))
	}
	return c
}

// tryConnectOAuth is connectOAuth that reports a failed sign-in.
func tryConnectOAuth(t *testing.T, endpoint string, b *headlessBrowser) (*oauthMCPClient, error) {
	t.Helper()
	return tryConnectOAuthWith(t, endpoint, b, nil, nil)
}

func tryConnectOAuthWith(t *testing.T, endpoint string, b *headlessBrowser, opts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) (*oauthMCPClient, error) {
	t.Helper()
	c := &oauthMCPClient{browser: b}
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{e2eRedirectURI}, ClientName: "erpgate e2e client", TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"},
		}},
		RedirectURL:              e2eRedirectURI,
		AuthorizationCodeFetcher: c.browser.fetcher,
		RequestRefreshToken:      true,
		NewTokenSource: func(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			c.source = &forceableTokenSource{cfg: cfg, ctx: ctx, tok: tok}
			return c.source, nil
		},
	})
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "erpgate-oauth-e2e", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, OAuthHandler: handler, MaxRetries: -1}, sopts)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cs.Close() })
	c.cs = cs
	return c, nil
}

// anotherSession opens a second MCP session of the same OAuth client (its
// tokens), as a client does for a second conversation.
func (c *oauthMCPClient) anotherSession(t *testing.T, endpoint string) *oauthMCPClient {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "erpgate-oauth-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &oauth2.Transport{Source: c.source}}}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &oauthMCPClient{browser: c.browser, source: c.source, cs: cs}
}

// exec runs SQL against the gateway's database (to move the clock of a
// stored token, which the test cannot wait for).
func execSQL(t *testing.T, dbURL, sql string, args ...any) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag.RowsAffected()
}

// queryInt runs a counting query against the gateway's database.
func queryInt(t *testing.T, dbURL, sql string, args ...any) int {
	t.Helper()
	var n int
	queryRow(t, dbURL, sql, args, &n)
	return n
}

// queryRow runs a query of one row against the gateway's database and
// scans it into dest.
func queryRow(t *testing.T, dbURL, sql string, args []any, dest ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql, args...).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// expireUpstreamTokens makes erpgate see every stored ERP token as expired,
// as it would an hour after sign-in.
func expireUpstreamTokens(t *testing.T, dbURL string) {
	t.Helper()
	execSQL(t, dbURL, `UPDATE upstream_tokens SET expires_at = now() - interval '1 minute'`)
}

// expireAccessTokens makes every access token erpgate issued expire now.
func expireAccessTokens(t *testing.T, dbURL string) {
	t.Helper()
	execSQL(t, dbURL, `UPDATE oauth_tokens SET session = jsonb_set(session, '{expires_at,access_token}', to_jsonb('2001-01-01T00:00:00Z'::text))
		WHERE kind = 'access'`)
}

// rawMCP posts one JSON-RPC request with a bearer token and returns the
// HTTP status and headers.
func rawMCP(t *testing.T, endpoint, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, stringsReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
