package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/erpgate/erpgate/platform/connector/connectortest/e2e/signin"
)

// headlessBrowser plays the user in an OAuth sign-in (signin.Browser) for
// the SDK client.
type headlessBrowser struct {
	*signin.Browser
	t *testing.T
	// runs counts authorizations, so a test can tell a silent refresh from
	// a new sign-in.
	runs int
	// codes are the authorization codes erpgate sent the client, so a
	// test can look for them where they must not be.
	codes []string
}

func newHeadlessBrowser(t *testing.T, redirectURI string, fields map[string]string) *headlessBrowser {
	return &headlessBrowser{Browser: signin.NewBrowser(redirectURI, fields), t: t}
}

// fetcher is the SDK's AuthorizationCodeFetcher.
func (b *headlessBrowser) fetcher(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	b.runs++
	final, err := b.Run(ctx, "GET", args.URL, nil)
	if err != nil {
		return nil, err
	}
	q := final.Query()
	if e := q.Get("error"); e != "" {
		return nil, fmt.Errorf("authorization failed: %s: %s", e, q.Get("error_description"))
	}
	b.codes = append(b.codes, q.Get("code"))
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

func pageText(page string) string { return signin.PageText(page) }
