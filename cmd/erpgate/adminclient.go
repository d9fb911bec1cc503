package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/erpgate/erpgate/platform/store/livesettings"
)

// adminClient talks to a gateway's own admin API, the way an operator's
// script would. `erpgate dev` registers its demo sites through it.
type adminClient struct {
	base  string
	token string
	http  http.Client
}

type siteRequest struct {
	Slug, Kind, DisplayName, BaseURL string
	Settings                         map[string]any
	Credentials                      map[string]string
}

type siteResponse struct {
	ID            string `json:"id"`
	Slug          string `json:"slug"`
	Kind          string `json:"kind"`
	BaseURL       string `json:"base_url"`
	MCPURL        string `json:"mcp_url"`
	ServiceMCPURL string `json:"service_mcp_url"`
	// OAuthRedirectURI is the redirect URI the site's OAuth client must
	// have; SharedCallback says it is the shared one.
	OAuthRedirectURI string `json:"oauth_redirect_uri"`
	SharedCallback   bool   `json:"shared_callback"`
}

type tokenResponse struct {
	ID      string `json:"id"`
	Prefix  string `json:"prefix"`
	Revoked bool   `json:"revoked"`
	Expired bool   `json:"expired"`
	Token   string `json:"token"`
}

// apiError is an admin API error answer.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("admin API: HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

func (c *adminClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v1"+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		return &apiError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// ensureSite registers (or updates) a site, stores its API credential and
// makes sure a service token exists, reusing the one in previous when it is
// still valid (only its hash is stored, so a lost token cannot be shown).
func (c *adminClient) ensureSite(ctx context.Context, previous devState, in siteRequest) (devSite, error) {
	var site siteResponse
	body := map[string]any{"slug": in.Slug, "kind": in.Kind, "display_name": in.DisplayName, "base_url": in.BaseURL}
	if in.Settings != nil {
		body["settings"] = in.Settings
	}
	err := c.do(ctx, http.MethodPost, "/sites", body, &site)
	if ae := (*apiError)(nil); errors.As(err, &ae) && ae.Status == http.StatusConflict {
		if err = c.do(ctx, http.MethodGet, "/sites/"+url.PathEscape(in.Slug), nil, &site); err == nil && site.BaseURL != in.BaseURL {
			// A site with a stored credential cannot move (the credential
			// would follow it); drop the credential, move, add it again.
			err = c.do(ctx, http.MethodDelete, "/sites/"+site.ID+"/connections/api_token", nil, nil)
			if ae := (*apiError)(nil); errors.As(err, &ae) && ae.Status == http.StatusNotFound {
				err = nil
			}
			if err == nil {
				err = c.do(ctx, http.MethodPatch, "/sites/"+site.ID, map[string]any{"base_url": in.BaseURL}, &site)
			}
		}
	}
	if err == nil && site.SharedCallback {
		// A site of a run before sites had their own redirect URI: the
		// simulators' OAuth clients are made with the site's own.
		err = c.do(ctx, http.MethodPatch, "/sites/"+site.ID, map[string]any{"shared_callback": false}, &site)
	}
	if err != nil {
		return devSite{}, err
	}
	if err := c.do(ctx, http.MethodPut, "/sites/"+site.ID+"/connections/api_token",
		map[string]any{"credentials": in.Credentials}, nil); err != nil {
		return devSite{}, err
	}
	token, err := c.serviceToken(ctx, site.ID, previousToken(previous, in.Slug))
	if err != nil {
		return devSite{}, err
	}
	return devSite{
		ID: site.ID, Slug: site.Slug, Kind: site.Kind,
		MCPURL: site.MCPURL, ServiceMCPURL: site.ServiceMCPURL, ServiceToken: token,
	}, nil
}

func previousToken(s devState, slug string) string {
	for _, site := range s.Sites {
		if site.Slug == slug {
			return site.ServiceToken
		}
	}
	return ""
}

func (c *adminClient) serviceToken(ctx context.Context, siteID, previous string) (string, error) {
	if previous != "" {
		tokens, err := c.listTokens(ctx, siteID)
		if err != nil {
			return "", err
		}
		for _, t := range tokens {
			if !t.Revoked && !t.Expired && t.Prefix != "" && strings.HasPrefix(previous, t.Prefix) {
				return previous, nil
			}
		}
	}
	var created tokenResponse
	if err := c.do(ctx, http.MethodPost, "/sites/"+siteID+"/service-tokens", map[string]any{"name": "dev"}, &created); err != nil {
		return "", err
	}
	return created.Token, nil
}

func (c *adminClient) listTokens(ctx context.Context, siteID string) ([]tokenResponse, error) {
	var out struct {
		ServiceTokens []tokenResponse `json:"service_tokens"`
	}
	err := c.do(ctx, http.MethodGet, "/sites/"+siteID+"/service-tokens", nil, &out)
	return out.ServiceTokens, err
}

// putOAuthClient stores the site's OAuth client (its oauth connection).
func (c *adminClient) putOAuthClient(ctx context.Context, siteID, clientID, clientSecret string) error {
	return c.do(ctx, http.MethodPut, "/sites/"+url.PathEscape(siteID)+"/connections/oauth",
		map[string]any{"credentials": map[string]string{"client_id": clientID, "client_secret": clientSecret}}, nil)
}

// putSiteSetting changes one of a site's live settings.
func (c *adminClient) putSiteSetting(ctx context.Context, siteID, name string, value any) error {
	return c.do(ctx, http.MethodPut, "/sites/"+url.PathEscape(siteID)+"/settings/"+url.PathEscape(name), map[string]any{"value": value}, nil)
}

// enableWrites enables the write tools on a site (docs/writes.md) and lets
// its service tokens propose writes for approver, an ERP user, to approve
// (serviceApprover empty leaves service-token writes off).
func (c *adminClient) enableWrites(ctx context.Context, siteID string, tools []string, serviceApprover string) error {
	if err := c.putSiteSetting(ctx, siteID, livesettings.WriteTools, tools); err != nil {
		return fmt.Errorf("enable the write tools: %w", err)
	}
	if err := c.putSiteSetting(ctx, siteID, livesettings.ServiceWriteApprover, serviceApprover); err != nil {
		return fmt.Errorf("name the approver of service-token writes: %w", err)
	}
	if err := c.putSiteSetting(ctx, siteID, livesettings.ServiceWrites, serviceApprover != ""); err != nil {
		return fmt.Errorf("let service tokens propose writes: %w", err)
	}
	return nil
}
