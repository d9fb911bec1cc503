// Package example is the smallest complete connector: Example ERP, a
// fictional ERP (its simulator is exampletest), with two read tools and a
// service connection by API key. It is the example of docs/connectors.md,
// and it keeps the connector kit honest: it needs nothing outside this
// folder but one registration line (cmd/erpgate/connectors_example.go,
// built only with -tags erpgate_example, so no release or dev build serves
// it).
package example

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/infra/secrets"
)

// Kind is the site kind this connector serves.
const Kind = "example"

// Connector is the Example ERP connector.
type Connector struct{}

// New returns the connector.
func New() *Connector { return &Connector{} }

var _ connector.Connector = (*Connector)(nil)

// Kind returns "example".
func (*Connector) Kind() string { return Kind }

// Tools returns the catalogue.
func (*Connector) Tools() []connector.Tool {
	return []connector.Tool{listCustomersTool(), getCustomerTool()}
}

// NormalizeSettings: Example ERP has no settings, so any setting is refused
// (DecodeSettings names it) and the canonical form is {}.
func (*Connector) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) {
	if _, err := connector.DecodeSettings[struct{}](raw); err != nil {
		return nil, err
	}
	return json.RawMessage(`{}`), nil
}

// APICredentialFields: the service connection is one API key.
func (*Connector) APICredentialFields() []connector.CredentialField {
	return []connector.CredentialField{{Name: "api_key", Description: "API key of the Example ERP user the service connection runs as", Secret: true}}
}

// APIAuthorizer sends "Authorization: Key <api key>".
func (*Connector) APIAuthorizer(_ connector.Site, fields map[string]secrets.Secret) (connector.Authorizer, error) {
	key := fields["api_key"].Reveal()
	if key == "" {
		return nil, fmt.Errorf("example: the api_token connection lacks api_key")
	}
	return connector.AuthorizerFunc(func(r *http.Request) error {
		r.Header.Set("Authorization", "Key "+key)
		return nil
	}), nil
}

// VerifyAPICredential asks the ERP who the key belongs to.
func (*Connector) VerifyAPICredential(ctx context.Context, site connector.Site, hc *http.Client) (string, error) {
	var me struct {
		User string `json:"user"`
	}
	if err := get(ctx, site, hc, "/api/me", nil, &me); err != nil {
		return "", err
	}
	return me.User, nil
}

// SiteRules: a site is an origin, one company per address.
func (*Connector) SiteRules() connector.SiteRules { return connector.SiteRules{} }

// get reads one JSON answer of the ERP into out. An unsuccessful status is
// the kit's tool error for it, with the ERP's own sentence.
func get(ctx context.Context, site connector.Site, hc *http.Client, path string, q url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, site.URL(path, q), nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err // the transport's errors are classified already
	}
	body, err := outbound.ReadBody(resp) // bounded; its errors are classified
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		if e.Error == "" {
			e.Error = "Example ERP answered HTTP " + strconv.Itoa(resp.StatusCode)
		}
		return connector.HTTPError(resp.StatusCode, "Example ERP: "+e.Error+".", 0)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return toolerr.Wrap(toolerr.UpstreamInvalidResponse, err, "Example ERP answered something that is not the JSON expected")
	}
	return nil
}
