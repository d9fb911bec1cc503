package main

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/erpgate/erpgate/connectors/acumatica"
	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/outbound"
	"github.com/erpgate/erpgate/platform/schema"
	"github.com/erpgate/erpgate/platform/secrets"
	"github.com/erpgate/erpgate/platform/toolerr"
)

// acumaticaStandIn is the smallest Acumatica connector the OAuth tests
// need: the real upstream sign-in (acumatica.OAuth) and one read tool. It
// is registered only while this build has no Acumatica connector of its
// own.
type acumaticaStandIn struct{ acumatica.OAuth }

var registerStandIn sync.Once

// useAcumaticaStandIn makes gateways started afterwards serve kind
// "acumatica".
func useAcumaticaStandIn() {
	registerStandIn.Do(func() {
		registerTestConnectors = func(reg *connector.Registry) error {
			if _, ok := reg.Get("acumatica"); ok {
				return nil
			}
			return reg.Register(acumaticaStandIn{})
		}
	})
}

func (acumaticaStandIn) Kind() string { return "acumatica" }

func (acumaticaStandIn) Tools() []connector.Tool {
	return []connector.Tool{{
		Name:        "list_customers",
		Title:       "Customers",
		Description: "List a few customers' ids, as the signed-in user.",
		Input:       schema.Object(),
		Output:      schema.Object(schema.Prop("customers", schema.Array(schema.String("Customer id."), "Customer ids.")).Required()),
		Effect:      connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, call.Site.URL("/entity/Default/24.200.001/Customer", map[string][]string{"$top": {"3"}, "$select": {"CustomerID"}}), nil)
			if err != nil {
				return nil, err
			}
			resp, err := call.HTTP.Do(req)
			if err != nil {
				return nil, err
			}
			body, err := outbound.ReadBody(resp)
			if err != nil {
				return nil, err
			}
			switch {
			case resp.StatusCode == http.StatusForbidden:
				return nil, toolerr.New(toolerr.PermissionDenied, "Acumatica refused access to customers for this user")
			case resp.StatusCode == http.StatusUnauthorized:
				return nil, toolerr.New(toolerr.AuthExpired, "Acumatica did not accept the token")
			case resp.StatusCode != http.StatusOK:
				return nil, toolerr.New(toolerr.UpstreamUnavailable, "Acumatica answered HTTP %d", resp.StatusCode)
			}
			var rows []struct {
				CustomerID struct {
					Value string `json:"value"`
				} `json:"CustomerID"`
			}
			if err := json.Unmarshal(body, &rows); err != nil {
				return nil, toolerr.Wrap(toolerr.UpstreamInvalidResponse, err, "unreadable customers")
			}
			ids := []string{}
			for _, r := range rows {
				ids = append(ids, r.CustomerID.Value)
			}
			return map[string]any{"customers": ids}, nil
		},
	}}
}

func (acumaticaStandIn) NormalizeSettings(raw json.RawMessage) (json.RawMessage, error) {
	var s struct {
		Tenant   string `json:"tenant"`
		CanaryGI string `json:"canary_gi,omitempty"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "invalid settings")
		}
	}
	return json.Marshal(s)
}

func (acumaticaStandIn) APICredentialFields() []connector.CredentialField { return nil }

func (acumaticaStandIn) APIAuthorizer(connector.Site, map[string]secrets.Secret) (connector.Authorizer, error) {
	return nil, toolerr.New(toolerr.InvalidArgument, "the stand-in has no service connections")
}

func (acumaticaStandIn) VerifyAPICredential(context.Context, connector.Site, *http.Client) (string, error) {
	return "", toolerr.New(toolerr.InvalidArgument, "the stand-in has no service connections")
}
