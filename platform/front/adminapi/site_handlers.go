package adminapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/sites"
)

type createSiteRequest struct {
	Slug        string          `json:"slug"`
	Kind        string          `json:"kind"`
	DisplayName string          `json:"display_name"`
	BaseURL     string          `json:"base_url"`
	Settings    json.RawMessage `json:"settings"`
}

type updateSiteRequest struct {
	DisplayName *string         `json:"display_name"`
	BaseURL     *string         `json:"base_url"`
	Settings    json.RawMessage `json:"settings"`
	Status      *string         `json:"status"`
	// SharedCallback false moves the site to its own redirect URI.
	SharedCallback *bool `json:"shared_callback"`
}

type siteList struct {
	Sites []siteView `json:"sites"`
}

// listSites answers GET /sites.
func (a *API) listSites(c echo.Context) error {
	ctx := c.Request().Context()
	list, err := a.deps.Store.ListSites(ctx)
	if err != nil {
		return internal(err)
	}
	ids := make([]uuid.UUID, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	conns, err := a.deps.Store.ListConnectionsOfSites(ctx, ids)
	if err != nil {
		return internal(err)
	}
	out := siteList{Sites: make([]siteView, 0, len(list))}
	for _, s := range list {
		out.Sites = append(out.Sites, a.siteView(s, conns[s.ID]))
	}
	return c.JSON(http.StatusOK, out)
}

// createSite answers POST /sites.
func (a *API) createSite(c echo.Context) error {
	var req createSiteRequest
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	site, err := a.layer.CreateSite(c.Request().Context(), siteadmin.Operator, siteadmin.NewSite{
		Slug: req.Slug, Kind: req.Kind, DisplayName: req.DisplayName, BaseURL: req.BaseURL, Settings: req.Settings,
	})
	if err != nil {
		return err
	}
	auditSite(c, site)
	c.Response().Header().Set(echo.HeaderLocation, c.Path()+"/"+site.ID.String())
	return c.JSON(http.StatusCreated, a.siteView(site, nil))
}

// getSite answers GET /sites/{id}.
func (a *API) getSite(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	return a.respondSite(c, http.StatusOK, site)
}

// updateSite answers PATCH /sites/{id}.
func (a *API) updateSite(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	var req updateSiteRequest
	if err := decodeBody(c, &req, false); err != nil {
		return err
	}
	updated, err := a.layer.UpdateSite(c.Request().Context(), siteadmin.Operator, site, siteadmin.SiteChange{
		DisplayName: req.DisplayName, BaseURL: req.BaseURL, Settings: req.Settings, Status: req.Status, SharedCallback: req.SharedCallback,
	})
	if err != nil {
		return err
	}
	return a.respondSite(c, http.StatusOK, updated)
}

// deleteSite answers DELETE /sites/{id}.
func (a *API) deleteSite(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	if err := a.layer.DeleteSite(c.Request().Context(), siteadmin.Operator, site); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// respondSite writes site with its connections.
func (a *API) respondSite(c echo.Context, status int, site sites.Site) error {
	conns, err := a.deps.Store.ListConnections(c.Request().Context(), site.ID)
	if err != nil {
		return internal(err)
	}
	return c.JSON(status, a.siteView(site, conns))
}

// siteParam loads the site the :id path parameter names, by id or by slug,
// and records it for the audit line.
func (a *API) siteParam(c echo.Context) (sites.Site, error) {
	ref := c.Param("id")
	ctx := c.Request().Context()
	var (
		site sites.Site
		err  error
	)
	if id, perr := uuid.Parse(ref); perr == nil {
		site, err = a.deps.Store.GetSite(ctx, id)
	} else if sites.ValidateSlug(ref) == nil {
		site, err = a.deps.Store.GetSiteBySlug(ctx, ref)
	} else {
		err = sites.ErrNotFound
	}
	switch {
	case errors.Is(err, sites.ErrNotFound):
		return sites.Site{}, notFound("site %s does not exist; give its id or slug", toolerr.Quote(ref))
	case err != nil:
		return sites.Site{}, internal(err)
	}
	auditSite(c, site)
	return site, nil
}
