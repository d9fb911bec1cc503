package siteadmin

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/livesettings"
	"github.com/erpgate/erpgate/platform/sites"
)

// ChangeSetting sets a live setting from text as a person typed it
// (livesettings.Def.Parse), for the deployment (site nil) or one site, or
// with reset removes the stored value so that the default applies again.
// The audit event keeps the old and new values in force.
func (s *Service) ChangeSetting(ctx context.Context, actor Actor, site *sites.Site, name, text string, reset bool) (any, error) {
	var siteID uuid.UUID
	slug := ""
	if site != nil {
		siteID, slug = site.ID, site.Slug
	}
	after, details, err := s.changeSetting(ctx, siteID, name, text, reset)
	s.record(ctx, actor, siteID, slug, ActionChangeSetting, details, err)
	return after, err
}

func (s *Service) changeSetting(ctx context.Context, siteID uuid.UUID, name, text string, reset bool) (any, map[string]any, error) {
	if s.deps.Settings == nil {
		return nil, nil, internal(errors.New("siteadmin: no live settings store"))
	}
	d, ok := livesettings.Lookup(name)
	if !ok {
		return nil, map[string]any{"setting": name}, invalid("there is no setting %q", name)
	}
	details := map[string]any{"setting": name}
	var value any
	if !reset {
		v, err := d.Parse(text)
		if err != nil {
			return nil, details, invalid("%s", err.Error())
		}
		value = v
	}
	before, after, err := s.deps.Settings.Set(ctx, siteID, name, value)
	switch {
	case errors.Is(err, livesettings.ErrScope):
		where := "for the whole deployment"
		if siteID != uuid.Nil {
			where = "per site"
		}
		return nil, details, invalid("%s cannot be set %s", d.Label, where)
	case errors.Is(err, livesettings.ErrNoSite):
		return nil, details, newError(NotFound, err, "the site does not exist")
	case err != nil:
		return nil, details, internal(err)
	}
	details["old"], details["new"] = before, after
	if reset {
		details["reset"] = true
	}
	return after, details, nil
}
