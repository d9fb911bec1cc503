package adminapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// settingView is one live setting as in force.
type settingView struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	Type  string `json:"type"`
	Value any    `json:"value"`
	// Source is default, deployment or site.
	Source string `json:"source"`
	// DefaultFrom names the environment variable of the default, if any.
	DefaultFrom string     `json:"default_from,omitempty"`
	UpdatedAt   *time.Time `json:"updated_at,omitempty"`
	// DeploymentValue is, for a site's additive setting (its redaction
	// patterns), the deployment's value, which applies as well.
	DeploymentValue any `json:"deployment_value,omitempty"`
	// InForce is, for a site's setting that only lowers the deployment's
	// (max_records), the value that applies: Value, or the deployment's
	// where the operator lowered it below the site's own later.
	InForce any `json:"in_force,omitempty"`
}

type settingsList struct {
	Version  int64         `json:"version"`
	Settings []settingView `json:"settings"`
}

type settingBody struct {
	Value json.RawMessage `json:"value"`
}

func (a *API) settingsOf(ctx context.Context, siteID uuid.UUID) settingsList {
	snap := a.deps.Settings.Fresh(ctx)
	scope := livesettings.Deployment
	if siteID != uuid.Nil {
		scope = livesettings.Site
	}
	out := settingsList{Version: snap.Version, Settings: []settingView{}}
	for _, d := range livesettings.Defs {
		if d.Scope&scope == 0 {
			continue
		}
		out.Settings = append(out.Settings, a.settingViewOf(snap, siteID, d))
	}
	return out
}

func (a *API) settingViewOf(snap *livesettings.Snapshot, siteID uuid.UUID, d livesettings.Def) settingView {
	v, source, at := snap.Effective(siteID, d.Name)
	sv := settingView{Name: d.Name, Label: d.Label, Type: string(d.Type), Value: v, Source: string(source), DefaultFrom: d.Env}
	if !at.IsZero() {
		sv.UpdatedAt = &at
	}
	if siteID != uuid.Nil && d.Additive {
		sv.DeploymentValue, _, _ = snap.Effective(uuid.Nil, d.Name)
	}
	if in, ok := snap.InForce(siteID, d.Name); ok {
		sv.InForce = in
	}
	return sv
}

// listSettings answers GET /settings.
func (a *API) listSettings(c echo.Context) error {
	return c.JSON(http.StatusOK, a.settingsOf(c.Request().Context(), uuid.Nil))
}

// listSiteSettings answers GET /sites/{id}/settings.
func (a *API) listSiteSettings(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a.settingsOf(c.Request().Context(), site.ID))
}

// putSetting answers PUT /settings/{name}: the deployment's value.
func (a *API) putSetting(c echo.Context) error { return a.changeSetting(c, nil) }

// putSiteSetting answers PUT /sites/{id}/settings/{name}. The site must
// exist: an empty id (echo matches /sites//settings/...) is no site, never
// the deployment, whose value every site's calls use.
func (a *API) putSiteSetting(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	return a.changeSetting(c, &site)
}

func (a *API) changeSetting(c echo.Context, site *sites.Site) error {
	var body settingBody
	if err := decodeBody(c, &body, false); err != nil {
		return err
	}
	if body.Value == nil {
		return invalidRequest("the body must give the new value as {\"value\": ...}")
	}
	if _, err := a.layer.ChangeSettingJSON(c.Request().Context(), siteadmin.Operator, site, c.Param("name"), body.Value); err != nil {
		return err
	}
	return a.settingAnswer(c, site)
}

// resetSetting answers DELETE /settings/{name}: the default applies
// again.
func (a *API) resetSetting(c echo.Context) error { return a.reset(c, nil) }

// resetSiteSetting answers DELETE /sites/{id}/settings/{name}; the site
// must exist, as for putSiteSetting.
func (a *API) resetSiteSetting(c echo.Context) error {
	site, err := a.siteParam(c)
	if err != nil {
		return err
	}
	return a.reset(c, &site)
}

func (a *API) reset(c echo.Context, site *sites.Site) error {
	if _, err := a.layer.ChangeSetting(c.Request().Context(), siteadmin.Operator, site, c.Param("name"), "", true); err != nil {
		return err
	}
	return a.settingAnswer(c, site)
}

func (a *API) settingAnswer(c echo.Context, site *sites.Site) error {
	siteID := uuid.Nil
	if site != nil {
		siteID = site.ID
	}
	d, _ := livesettings.Lookup(c.Param("name"))
	return c.JSON(http.StatusOK, a.settingViewOf(a.deps.Settings.Current(), siteID, d))
}
