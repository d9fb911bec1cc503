package siteadmin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/store/livesettings"
	"github.com/erpgate/erpgate/platform/store/sites"
)

// ChangeSetting sets a live setting from text as a person typed it
// (livesettings.Def.Parse), for the deployment (site nil) or one site, or
// with reset removes the stored value so that the default applies again.
// The audit event keeps the old and new values in force.
func (s *Service) ChangeSetting(ctx context.Context, actor Actor, site *sites.Site, name, text string, reset bool) (any, error) {
	return s.changeSettingWith(ctx, actor, site, name, reset, func(d livesettings.Def) (any, error) { return d.Parse(text) })
}

// ChangeSettingJSON is ChangeSetting with the value given as JSON
// (livesettings.Def.FromJSON), as the admin API receives it.
func (s *Service) ChangeSettingJSON(ctx context.Context, actor Actor, site *sites.Site, name string, value json.RawMessage) (any, error) {
	return s.changeSettingWith(ctx, actor, site, name, false, func(d livesettings.Def) (any, error) { return d.FromJSON(value) })
}

func (s *Service) changeSettingWith(ctx context.Context, actor Actor, site *sites.Site, name string, reset bool, parse func(livesettings.Def) (any, error)) (any, error) {
	var siteID uuid.UUID
	slug := ""
	if site != nil {
		siteID, slug = site.ID, site.Slug
	}
	// A site's tool lists name tools of its kind: refuse says why an entry
	// does not.
	var refuse func(d livesettings.Def, t string) error
	switch {
	case site != nil && name == livesettings.Tools:
		known := s.ToolNames(site.Kind)
		refuse = func(d livesettings.Def, t string) error {
			if slices.Contains(known, t) || slices.Contains(livesettings.ToolGroups, t) {
				return nil
			}
			e := invalid("%s: %s is neither a tool of %s sites nor one of the groups %s", d.Label, toolerr.Quote(t), site.Kind, strings.Join(livesettings.ToolGroups, ", "))
			e.ForPeople = fmt.Sprintf("%s: %s is neither a tool of %s sites nor one of the groups %s; nothing was changed",
				d.Label, toolerr.Quote(t), KindName(site.Kind), andList(livesettings.ToolGroups))
			return e
		}
	case site != nil && name == livesettings.WriteTools:
		writes := s.WriteToolNames(site.Kind)
		refuse = func(d livesettings.Def, t string) error {
			if slices.Contains(writes, t) {
				return nil
			}
			which, whose := "it has none", "which have none"
			if len(writes) > 0 {
				which, whose = "they are "+strings.Join(writes, ", "), "whose write tools are "+andList(writes)
			}
			e := invalid("%s: %s is not a write tool of %s sites; %s", d.Label, toolerr.Quote(t), site.Kind, which)
			e.ForPeople = fmt.Sprintf("%s: %s is not a write tool of %s sites, %s; nothing was changed", d.Label, toolerr.Quote(t), KindName(site.Kind), whose)
			return e
		}
	}
	// A site's call ceilings protect its ERP's licence throttle, for the
	// operator: its owner, who could raise them for their own callers,
	// neither sets nor resets them, and neither does any actor but the
	// operator's (denied by default, so that a kind of actor added later
	// does not pass), for a site or the deployment.
	if d, ok := livesettings.Lookup(name); ok && d.OperatorOnly && actor.Kind != ActorOperator {
		err := invalid("%s is only erpgate's operator's to set; nothing was changed", d.Label)
		err.ForPeople = fmt.Sprintf("Only erpgate's operator sets %s for a site; ask them if your ERP needs another; nothing was changed", lowerFirst(d.Label))
		s.record(ctx, actor, siteID, slug, ActionChangeSetting, map[string]any{"setting": name}, err)
		return nil, err
	}
	// A deployment-wide setting applies to every site: only the
	// operator's actor changes or resets it, denied by default, so that
	// a site's owner, a registrant or a kind of actor added later that
	// reaches ChangeSetting does not pass.
	if site == nil && actor.Kind != ActorOperator {
		label := name
		if d, ok := livesettings.Lookup(name); ok {
			label = d.Label
		}
		err := invalid("the deployment's %s is only erpgate's operator's to change; nothing was changed", label)
		err.ForPeople = fmt.Sprintf("Only erpgate's operator changes %s for every site; nothing was changed", lowerFirst(label))
		s.record(ctx, actor, siteID, slug, ActionChangeSetting, map[string]any{"setting": name}, err)
		return nil, err
	}
	// A site's owner may not change a site the operator disabled, its
	// settings included: that is the operator's decision, as UpdateSite
	// holds it.
	if site != nil && partyOf(actor) == sites.ByOwner && OperatorDisabled(*site) {
		err := operatorDisabled(sites.ErrOperatorDisabled, ownerSettingsRefusal)
		s.record(ctx, actor, siteID, slug, ActionChangeSetting, map[string]any{"setting": name}, err)
		return nil, err
	}
	if refuse != nil {
		inner := parse
		parse = func(d livesettings.Def) (any, error) {
			v, err := inner(d)
			if err != nil {
				return nil, err
			}
			for _, t := range v.([]string) {
				if err := refuse(d, t); err != nil {
					return nil, err
				}
			}
			return v, nil
		}
	}
	// A site's row cap only lowers the deployment's: one above it is
	// refused here, and the engine applies the lower of the two should the
	// deployment's be lowered later.
	if d, ok := livesettings.Lookup(name); ok && d.LowersOnly && site != nil && s.deps.Settings != nil {
		inner := parse
		parse = func(d livesettings.Def) (any, error) {
			v, err := inner(d)
			if err != nil {
				return nil, err
			}
			dep, _, _ := s.deps.Settings.Fresh(ctx).Effective(uuid.Nil, d.Name)
			if n, ok := v.(int); ok {
				if m, ok := dep.(int); ok && n > m {
					e := invalid("%s of a site cannot be above the deployment's %d (a site's own value only lowers it)", d.Label, m)
					e.ForPeople = fmt.Sprintf("%s cannot be above %d, the number erpgate's operator set for every site; ask them if your site needs more; nothing was changed", d.Label, m)
					// Told to the operator, Message says it better.
					e.asksOperator = true
					return nil, e
				}
			}
			return v, nil
		}
	}
	after, details, err := s.changeSetting(ctx, site != nil && partyOf(actor) == sites.ByOwner, siteID, name, reset, parse)
	s.record(ctx, actor, siteID, slug, ActionChangeSetting, details, err)
	return after, err
}

// WriteToolNames lists the tools of a kind of site that write (Write or
// Destructive), in catalogue order: the names the write_tools setting
// takes.
func (s *Service) WriteToolNames(kind string) []string {
	var names []string
	for _, t := range s.deps.Registry.Tools(kind) {
		if t.Effect == connector.Write || t.Effect == connector.Destructive {
			names = append(names, t.Name)
		}
	}
	return names
}

// ToolNames lists the tools of a kind of site, in catalogue order.
func (s *Service) ToolNames(kind string) []string {
	var names []string
	for _, t := range s.deps.Registry.Tools(kind) {
		names = append(names, t.Name)
	}
	return names
}

// ownerSettingsRefusal says why the owner of a site the operator disabled
// cannot change its settings.
const ownerSettingsRefusal = "its settings cannot be changed until they enable it again; nothing was changed"

// changeSetting stores the setting; owner's change (of a site's setting)
// is refused by the write itself when the operator disabled the site
// after the owner's request loaded it.
func (s *Service) changeSetting(ctx context.Context, owner bool, siteID uuid.UUID, name string, reset bool, parse func(livesettings.Def) (any, error)) (any, map[string]any, error) {
	if s.deps.Settings == nil {
		return nil, nil, internal(errors.New("siteadmin: no live settings store"))
	}
	d, ok := livesettings.Lookup(name)
	if !ok {
		return nil, map[string]any{"setting": name}, invalid("there is no setting %s", toolerr.Quote(name))
	}
	details := map[string]any{"setting": name}
	var value any
	if !reset {
		v, err := parse(d)
		var e *Error
		if errors.As(err, &e) {
			return nil, details, e
		}
		if err != nil {
			return nil, details, invalid("%s", err.Error())
		}
		value = v
	}
	set := s.deps.Settings.Set
	if owner {
		set = s.deps.Settings.SetByOwner
	}
	before, after, err := set(ctx, siteID, name, value)
	switch {
	case errors.Is(err, livesettings.ErrOperatorDisabled):
		return nil, details, operatorDisabled(sites.ErrOperatorDisabled, ownerSettingsRefusal)
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

// andList joins items for a sentence: "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// lowerFirst is label as it reads inside a sentence: "per-site concurrent
// calls (ceiling)".
func lowerFirst(label string) string {
	if label == "" {
		return label
	}
	return strings.ToLower(label[:1]) + label[1:]
}
