package frappe

import (
	"context"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

func getCurrentUserTool() connector.Tool {
	return connector.Tool{
		Name:  "get_current_user",
		Title: "Current user",
		Description: "Show which ERP site this connection reads and which ERP user the calls run as. " +
			"Every other tool sees exactly what this user may see in the ERP.",
		Input: schema.Object(),
		Output: schema.Object(
			schema.Prop("user", schema.String("The ERP user (Frappe user id, usually an e-mail address).")).Required(),
			schema.Prop("site", schema.Object(
				schema.Prop("slug", schema.String("erpgate's name for the site.")).Required(),
				schema.Prop("name", schema.String("Display name of the site.")).Required(),
				schema.Prop("url", schema.String("The ERP's address.")).Required(),
				schema.Prop("kind", schema.String("ERP kind.")).Required(),
			)).Required(),
			schema.Prop("auth_type", schema.String("How this connection authenticates: oauth (a person) or service_token (a bot).")).Required(),
		),
		Effect:  connector.Read,
		Handler: getCurrentUser,
	}
}

func getCurrentUser(ctx context.Context, call *connector.Call) (any, error) {
	user, err := callClient(call).loggedUser(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"user": user,
		"site": map[string]any{
			"slug": call.Site.Slug,
			"name": call.Site.DisplayName,
			"url":  call.Site.BaseURL.String(),
			"kind": call.Site.Kind,
		},
		"auth_type": call.Principal.AuthType,
	}, nil
}
