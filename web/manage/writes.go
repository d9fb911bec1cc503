package manage

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/livesettings"
)

// writeToolView is one write tool of the site's connector.
type writeToolView struct {
	Name, Title, Effect, Sentence string
	Enabled                       bool
}

// writesView is the Writes section: which write tools the site enables
// and whether programs (service tokens) may propose writes, approved by
// whom. The values are the site's live settings (platform/store/livesettings).
type writesView struct {
	Tools         []writeToolView
	ServiceWrites bool
	Approver      string
	// ReadOnly: the operator made the site read-only, which offers no
	// write tool whatever is enabled here.
	ReadOnly bool
}

// effectSentence says in a sentence what a write tool's effect means.
func effectSentence(t connector.Tool) (word, sentence string) {
	switch {
	case t.Effect == connector.Destructive:
		return "cannot be undone", "What it does stays done in the ERP; it cannot be changed back."
	case t.Idempotent:
		return "changes data", "It sets values in the ERP, replacing the ones there; repeating it changes nothing more."
	}
	return "adds data", "It adds to the ERP's data (a draft, a note); each call adds again, and what it adds can be changed or deleted in the ERP."
}

// writeTools lists the write tools of kind's catalogue.
func (h *Handler) writeTools(kind string) []connector.Tool {
	var out []connector.Tool
	for _, t := range h.deps.Registry.Tools(kind) {
		if t.Effect == connector.Write || t.Effect == connector.Destructive {
			out = append(out, t)
		}
	}
	return out
}

// writesData reads the Writes section of o's site, as in Postgres: the
// page shown after a change, and the change that follows it, may be on
// another replica than the change before.
func (h *Handler) writesData(ctx context.Context, o owner) *writesView {
	if h.deps.Settings == nil {
		return nil
	}
	snap := h.deps.Settings.Fresh(ctx)
	v := &writesView{}
	enabled, _, _ := snap.Effective(o.site.ID, livesettings.WriteTools)
	names, _ := enabled.([]string)
	for _, t := range h.writeTools(o.site.Kind) {
		word, sentence := effectSentence(t)
		v.Tools = append(v.Tools, writeToolView{Name: t.Name, Title: t.Title, Effect: word, Sentence: sentence, Enabled: slices.Contains(names, t.Name)})
	}
	sw, _, _ := snap.Effective(o.site.ID, livesettings.ServiceWrites)
	v.ServiceWrites, _ = sw.(bool)
	ap, _, _ := snap.Effective(o.site.ID, livesettings.ServiceWriteApprover)
	v.Approver, _ = ap.(string)
	ro, _, _ := snap.Effective(o.site.ID, livesettings.ReadOnly)
	v.ReadOnly, _ = ro.(bool)
	return v
}

// changeWrites saves the Writes section: each setting that changed goes
// through siteadmin.ChangeSetting, which records an admin_events row
// naming the owner. Approval itself is not a setting: no form field or
// value here turns it off.
func (h *Handler) changeWrites(w http.ResponseWriter, r *http.Request, o owner) {
	if h.deps.Settings == nil {
		h.refused(w, r, o, "writes", siteadmin.Refusal(siteadmin.Conflict, "write settings cannot be changed on this deployment's owner page"))
		return
	}
	// A site the operator disabled cannot be changed by its owner, whatever
	// the form holds (even nothing new): ChangeSetting refuses the post
	// and records the refusal.
	if siteadmin.OperatorDisabled(o.site) {
		if _, err := h.deps.Admin.ChangeSetting(r.Context(), o.actor(), &o.site, livesettings.WriteTools, strings.Join(r.PostForm["write_tool"], ","), false); err != nil {
			h.refused(w, r, o, "writes", err)
			return
		}
	}
	catalogue := h.writeTools(o.site.Kind)
	var tools []string
	for _, name := range r.PostForm["write_tool"] {
		if !slices.ContainsFunc(catalogue, func(t connector.Tool) bool { return t.Name == name }) {
			h.refused(w, r, o, "writes", siteadmin.Refusal(siteadmin.Invalid, "there is no write tool "+name+" on this site; nothing was changed"))
			return
		}
		if !slices.Contains(tools, name) {
			tools = append(tools, name)
		}
	}
	service := r.PostFormValue("service_writes") == "on"
	approver := strings.TrimSpace(r.PostFormValue("approver"))
	if service && approver == "" {
		h.refused(w, r, o, "writes", siteadmin.Refusal(siteadmin.Invalid,
			"to let service tokens propose writes, name the ERP user who approves them; nothing was changed"))
		return
	}
	current := h.writesData(r.Context(), o)
	var enabled []string
	for _, t := range current.Tools {
		if t.Enabled {
			enabled = append(enabled, t.Name)
		}
	}
	type change struct {
		name, text string
		changed    bool
	}
	changes := []change{
		{livesettings.WriteTools, strings.Join(tools, ","), !sameSet(enabled, tools)},
		{livesettings.ServiceWrites, onOff(service), service != current.ServiceWrites},
		{livesettings.ServiceWriteApprover, approver, approver != current.Approver},
	}
	// Every value is checked before any is saved, so that a refusal
	// leaves all of them as they were, as the page then shows. The
	// refused one goes to ChangeSetting alone, which refuses it again
	// and records the refusal.
	for _, c := range changes {
		if d, ok := livesettings.Lookup(c.name); ok && c.changed {
			if _, err := d.Parse(c.text); err != nil {
				changes = []change{c}
				break
			}
		}
	}
	for _, c := range changes {
		if !c.changed {
			continue
		}
		if _, err := h.deps.Admin.ChangeSetting(r.Context(), o.actor(), &o.site, c.name, c.text, false); err != nil {
			h.refused(w, r, o, "writes", err)
			return
		}
	}
	h.done(w, r, o, "writes")
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
