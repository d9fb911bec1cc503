package adminapi

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/sites"
)

// oauthCredentialFields are the fields of an oauth connection: the OAuth
// client registered on the ERP for erpgate, whose redirect URI is
// <public base URL>/oauth/callback.
var oauthCredentialFields = []connector.CredentialField{
	{Name: "client_id", Description: "client id of the OAuth client registered on the ERP for erpgate"},
	{Name: "client_secret", Description: "client secret of that OAuth client", Secret: true},
}

// putOAuthConnection stores the site's OAuth client. There is nothing to
// verify it with before a user signs in (an OAuth client authenticates
// nobody by itself), so it is saved as given; the first sign-in proves it.
func (a *API) putOAuthConnection(c echo.Context, site sites.Site) error {
	var req putConnectionRequest
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	if req.Credentials == nil {
		return invalidRequest("missing required field: credentials")
	}
	conn, err := a.connectorOf(site)
	if err != nil {
		return err
	}
	if _, ok := conn.(connector.UpstreamOAuth); !ok {
		return invalidRequest("%s sites do not support user sign-in with OAuth", site.Kind)
	}
	fields, err := credentialFields(oauthCredentialFields, req.Credentials)
	if err != nil {
		return err
	}
	saved, err := a.deps.Store.PutConnection(c.Request().Context(), site.ID, sites.ConnectionOAuth, "", fields)
	if err != nil {
		if errors.Is(err, sites.ErrNotFound) {
			return notFound("site %q was deleted; nothing was saved", site.Slug)
		}
		return classify(err)
	}
	return c.JSON(http.StatusOK, connectionViewOf(saved))
}
