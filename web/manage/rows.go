package manage

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/erpgate/erpgate/platform/front/siteadmin"
	"github.com/erpgate/erpgate/platform/store/livesettings"
)

// rowsView is the Rows section: the site's own cap on the rows of one
// query (the live setting max_records), which only lowers the
// deployment's. Own is the site's own number, "" while it has none;
// Deployment is the deployment's, which applies then.
type rowsView struct {
	Own        string
	Deployment string
	// Field is what the box holds: Own, or what was typed when refused.
	Field string
	// InForce is the cap that applies: the lower of the two.
	InForce string
}

// rowsData reads the Rows section of o's site, as in Postgres (writesData
// says why).
func (h *Handler) rowsData(ctx context.Context, o owner) *rowsView {
	if h.deps.Settings == nil {
		return nil
	}
	snap := h.deps.Settings.Fresh(ctx)
	dep, _, _ := snap.Effective(uuid.Nil, livesettings.MaxRecords)
	v := &rowsView{Deployment: livesettings.Format(dep), InForce: livesettings.Format(dep)}
	own, src, _ := snap.Effective(o.site.ID, livesettings.MaxRecords)
	if src == livesettings.SourceSite {
		v.Own = livesettings.Format(own)
		v.Field = v.Own
	}
	if n, ok := snap.InForce(o.site.ID, livesettings.MaxRecords); ok {
		v.InForce = livesettings.Format(n)
	}
	return v
}

// changeRows saves the Rows section through siteadmin.ChangeSetting, which
// refuses a number above the deployment's and records an admin_events row
// naming the owner; an empty box returns the site to the deployment's.
func (h *Handler) changeRows(w http.ResponseWriter, r *http.Request, o owner) {
	if h.deps.Settings == nil {
		h.refused(w, r, o, "rows", siteadmin.Refusal(siteadmin.Conflict, "the rows per query cannot be changed on this deployment's owner page"))
		return
	}
	text := strings.TrimSpace(r.PostFormValue("max_records"))
	if _, err := h.deps.Admin.ChangeSetting(r.Context(), o.actor(), &o.site, livesettings.MaxRecords, text, text == ""); err != nil {
		h.refused(w, r, o, "rows", err)
		return
	}
	h.done(w, r, o, "rows")
}
