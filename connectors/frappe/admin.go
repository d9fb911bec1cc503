package frappe

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

var _ connector.AdminProof = (*Connector)(nil)

// systemManager is the role of a Frappe site's administrators: the one
// that may create OAuth Clients, users and role assignments.
const systemManager = "System Manager"

// adminProfile is the part of openid_profile the administrator check
// reads. Roles is a pointer so that a body without the member is told
// apart from a user without roles.
type adminProfile struct {
	Sub   string    `json:"sub"`
	Email string    `json:"email"`
	Roles *[]string `json:"roles"`
}

// CheckAdmin reads openid_profile as the signed-in user (their OAuth
// token is in hc). Frappe fills its "roles" with frappe.get_roles(user),
// the user's Has Role rows (every role for Administrator), computed on the
// server: a user cannot change the answer without already being able to
// assign roles, which takes System Manager (the User's roles table is at
// permlevel 1). See docs/registration.md.
func (*Connector) CheckAdmin(ctx context.Context, site connector.Site, hc *http.Client, user connector.UpstreamUser) (connector.AdminCheck, error) {
	var p adminProfile
	if err := newClient(site, hc).getJSON(ctx, oauthMethodPrefix+"openid_profile", nil, &p); err != nil {
		return connector.AdminCheck{}, fmt.Errorf("frappe: administrator check on %s: %w", site.Slug, outbound.WithoutURL(err))
	}
	if p.Roles == nil {
		return connector.AdminCheck{}, fmt.Errorf("frappe: administrator check on %s: %w", site.Slug,
			toolerr.New(toolerr.UpstreamInvalidResponse, "openid_profile listed no roles"))
	}
	who := strings.TrimSpace(p.Email)
	if who == "" {
		who = strings.TrimSpace(p.Sub)
	}
	if user.ID != "" && !strings.EqualFold(who, user.ID) {
		return connector.AdminCheck{Evidence: "the ERP token belongs to another user than the one who signed in"}, nil
	}
	if slices.Contains(*p.Roles, systemManager) {
		return connector.AdminCheck{Admin: true, Evidence: "has the System Manager role"}, nil
	}
	return connector.AdminCheck{Evidence: "lacks the System Manager role"}, nil
}
