package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/netguard"
	"github.com/erpgate/erpgate/platform/sites"
	"github.com/erpgate/erpgate/platform/toolerr"
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
	req.DisplayName = strings.TrimSpace(req.DisplayName)
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"slug", req.Slug}, {"kind", req.Kind}, {"display_name", req.DisplayName}, {"base_url", req.BaseURL},
	} {
		if strings.TrimSpace(f.value) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return invalidRequest("missing required %s: %s", plural(len(missing), "field", "fields"), strings.Join(missing, ", "))
	}
	if err := sites.ValidateSlug(req.Slug); err != nil {
		return validationError(err)
	}
	conn, ok := a.deps.Registry.Get(req.Kind)
	if !ok {
		return invalidRequest("unknown kind %q; this deployment serves: %s", req.Kind, strings.Join(a.deps.Registry.Kinds(), ", "))
	}
	if err := sites.ValidateDisplayName(req.DisplayName); err != nil {
		return validationError(err)
	}
	rules := conn.SiteRules()
	baseURL, err := a.normalizeBaseURL(rules, req.BaseURL)
	if err != nil {
		return err
	}
	if err := a.checkERPAddress(c.Request().Context(), baseURL); err != nil {
		return err
	}
	settings, err := normalizeSettings(conn, nullToNil(req.Settings))
	if err != nil {
		return err
	}
	site, err := a.deps.Store.CreateSite(c.Request().Context(), sites.NewSite{
		Slug: req.Slug, Kind: req.Kind, DisplayName: req.DisplayName, BaseURL: baseURL, Settings: settings,
		IdentityKey: rules.IdentityOf(settings),
	})
	if err != nil {
		return siteWriteError(err, req.Slug, baseURL, rules)
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
	var upd sites.SiteUpdate
	if req.DisplayName != nil {
		name := strings.TrimSpace(*req.DisplayName)
		if err := sites.ValidateDisplayName(name); err != nil {
			return validationError(err)
		}
		upd.DisplayName = &name
	}
	var rules connector.SiteRules
	raw := nullToNil(req.Settings)
	if req.BaseURL != nil || raw != nil {
		conn, err := a.connectorOf(site)
		if err != nil {
			return err
		}
		rules = conn.SiteRules()
		if req.BaseURL != nil {
			baseURL, err := a.normalizeBaseURL(rules, *req.BaseURL)
			if err != nil {
				return err
			}
			if err := a.checkERPAddress(c.Request().Context(), baseURL); err != nil {
				return err
			}
			upd.BaseURL = &baseURL
		}
		if raw != nil {
			if upd.Settings, err = normalizeSettings(conn, raw); err != nil {
				return err
			}
			key := rules.IdentityOf(upd.Settings)
			upd.IdentityKey = &key
		}
	}
	if req.Status != nil {
		status := sites.Status(*req.Status)
		if !status.Valid() {
			return invalidRequest("status %q is not valid; use %q or %q", *req.Status, sites.StatusActive, sites.StatusDisabled)
		}
		upd.Status = &status
	}
	updated, err := a.deps.Store.UpdateSite(c.Request().Context(), site.ID, upd)
	if err != nil {
		baseURL := site.BaseURL
		if upd.BaseURL != nil {
			baseURL = *upd.BaseURL
		}
		return siteWriteError(err, site.Slug, baseURL, rules)
	}
	return a.respondSite(c, http.StatusOK, updated)
}

// deleteSite answers DELETE /sites/{id}.
func (a *API) deleteSite(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	if err := a.deps.Store.DeleteSite(c.Request().Context(), site.ID); err != nil {
		if errors.Is(err, sites.ErrNotFound) {
			return notFound("site %q does not exist", site.Slug)
		}
		return internal(err)
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
		return sites.Site{}, notFound("site %q does not exist; give its id or slug", ref)
	case err != nil:
		return sites.Site{}, internal(err)
	}
	auditSite(c, site)
	return site, nil
}

// connectorOf returns the connector serving site's kind. A missing one means
// the deployment dropped a connector its registry still has sites for.
func (a *API) connectorOf(site sites.Site) (connector.Connector, error) {
	conn, ok := a.deps.Registry.Get(site.Kind)
	if !ok {
		return nil, internal(fmt.Errorf("adminapi: site %s has kind %q, which no registered connector serves", site.Slug, site.Kind))
	}
	return conn, nil
}

// normalizeSettings checks that raw (nil for none) is a JSON object and runs
// it through the connector's NormalizeSettings.
func normalizeSettings(conn connector.Connector, raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		raw = json.RawMessage(`{}`)
	}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, invalidRequest("settings must be a JSON object")
	}
	normalized, err := conn.NormalizeSettings(raw)
	if err != nil {
		var te *toolerr.Error
		if errors.As(err, &te) && te.Code == toolerr.InvalidArgument {
			return nil, &apiError{Status: http.StatusBadRequest, Code: codeInvalidRequest, Message: "settings: " + te.Message, Err: err}
		}
		return nil, internal(fmt.Errorf("adminapi: normalize %s settings: %w", conn.Kind(), err))
	}
	return normalized, nil
}

// normalizeBaseURL checks an operator's base URL by the connector's rules:
// an origin, or an origin and a virtual directory for a connector that
// accepts a path.
func (a *API) normalizeBaseURL(rules connector.SiteRules, raw string) (string, error) {
	normalize := sites.NormalizeBaseURL
	if rules.BaseURLPath {
		normalize = sites.NormalizeBaseURLPath
	}
	baseURL, err := normalize(raw, a.deps.IsDevHost)
	if err != nil {
		return "", validationError(err)
	}
	return baseURL, nil
}

// siteWriteError maps the store's errors for a site write.
func siteWriteError(err error, slug, baseURL string, rules connector.SiteRules) error {
	switch {
	case errors.Is(err, sites.ErrSlugTaken):
		return conflict("slug %q is already in use", slug)
	case errors.Is(err, sites.ErrBaseURLTaken):
		if rules.IdentityName == "" {
			return conflict("a site for %s is already registered", baseURL)
		}
		return conflict("a site for %s with the same %s is already registered", baseURL, rules.IdentityName)
	case errors.Is(err, sites.ErrConnectionsExist):
		return conflict("site %q has connections whose credentials were verified for its current base URL; delete them before changing base_url, then add them again", slug)
	case errors.Is(err, sites.ErrNotFound):
		return notFound("site %q does not exist", slug)
	}
	return classify(err)
}

// validationError turns a *sites.ValidationError into a 400.
// privateHostsHint tells the operator how to allow an ERP on a private
// network.
const privateHostsHint = "erpgate reaches ERPs only at public addresses, except hosts listed in ERPGATE_ERP_PRIVATE_HOSTS"

// checkERPAddress refuses a base URL (a normalised origin) whose host is
// not allowed by the ERP address policy: in production, one that resolves
// to a loopback, private, link-local or other non-public address and is not
// listed. The dial-time check in the outbound transport still applies
// later, so a name that rebinds is refused then.
func (a *API) checkERPAddress(ctx context.Context, baseURL string) error {
	if a.deps.ERPAddresses == nil {
		return nil
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return internal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = a.deps.ERPAddresses.CheckHost(ctx, nil, u.Hostname())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, netguard.ErrUnresolved):
		return invalidRequest("base URL %s: the host name %s does not resolve, so erpgate cannot check that its address is public; %s", baseURL, u.Hostname(), privateHostsHint)
	case errors.Is(err, netguard.ErrForbiddenAddress):
		return invalidRequest("base URL %s: %s; %s", baseURL, err, privateHostsHint)
	}
	return internal(err)
}

func validationError(err error) error {
	var ve *sites.ValidationError
	if errors.As(err, &ve) {
		return invalidRequest("%s", ve.Message)
	}
	return internal(err)
}
