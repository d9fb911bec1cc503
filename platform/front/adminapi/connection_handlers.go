package adminapi

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
)

type putConnectionRequest struct {
	Credentials map[string]string `json:"credentials"`
}

// putConnection answers PUT /sites/{id}/connections/{type}. The credential
// is verified against the ERP first; nothing is saved unless the ERP
// accepts it.
func (a *API) putConnection(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	typ, err := connectionTypeParam(c)
	if err != nil {
		return err
	}
	var req putConnectionRequest
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	put := a.layer.PutAPIConnection
	if typ == sites.ConnectionOAuth {
		put = a.layer.PutOAuthConnection
	}
	saved, err := put(c.Request().Context(), siteadmin.Operator, site, req.Credentials)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, connectionViewOf(saved))
}

// deleteConnection answers DELETE /sites/{id}/connections/{type}.
func (a *API) deleteConnection(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	typ, err := connectionTypeParam(c)
	if err != nil {
		return err
	}
	if err := a.layer.DeleteConnection(c.Request().Context(), siteadmin.Operator, site, typ); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// connectionTypeParam reads the :type path parameter.
func connectionTypeParam(c echo.Context) (sites.ConnectionType, error) {
	typ := sites.ConnectionType(c.Param("type"))
	if !typ.Valid() {
		names := make([]string, len(sites.ConnectionTypes))
		for i, t := range sites.ConnectionTypes {
			names[i] = string(t)
		}
		return "", notFound("unknown connection type %s; use one of: %s", toolerr.Quote(c.Param("type")), strings.Join(names, ", "))
	}
	return typ, nil
}
