package frappetest

import "strings"

// DefaultFrappeVersion is the framework release get_versions reports by
// default: the one shared/erp-api/frappe/api-facts.md was read from.
// ERPNextVersion is the ERPNext release of the report notes
// (shared/erp-api/frappe/report-notes).
const (
	DefaultFrappeVersion = "15.55.1"
	ERPNextVersion       = "15.110.0"
)

// methodGetVersions is frappe.utils.change_log.get_versions (any signed-in
// user): per installed app its hooks' title and description, its git
// branch, "branch_version" off master, and its __version__.
func (rc *reqCtx) methodGetVersions() *apiError {
	frappe := rc.s.opts.FrappeVersion
	if frappe == "" {
		frappe = DefaultFrappeVersion
	}
	app := func(title, description, version string) *object {
		o := newObject(5)
		o.set("title", title)
		o.set("description", description)
		o.set("branch", "version-15")
		o.set("branch_version", version+" (0a1b2c3)")
		o.set("version", version)
		return o
	}
	apps := newObject(2)
	apps.set("frappe", app("Frappe Framework", "Full stack web framework with Python, Javascript, MariaDB, Redis, Node", frappe))
	apps.set("erpnext", app("ERPNext", "ERP made simple", ERPNextVersion))
	return rc.respond("message", apps)
}

// oauthClientDoc is GET /api/resource/OAuth Client/<name>: the doctype's
// fields, client_secret included (a Data field, returned as it is), for
// users with the System Manager role, the only role with read permission
// on it; 404 for an unknown client.
func (rc *reqCtx) oauthClientDoc(name string) *apiError {
	p := rc.s.oauth()
	p.mu.Lock()
	c := p.clients[name]
	var cp OAuthClient
	if c != nil {
		cp = *c
	}
	p.mu.Unlock()
	if c == nil {
		return notFound("OAuth Client " + name + " not found")
	}
	if rc.user == nil || !rc.user.hasRole([]string{"System Manager"}) {
		return docPermissionError(userName(rc.user), "OAuth Client", name, false)
	}
	o := newObject(20)
	o.set("name", cp.ID)
	o.set("owner", "Administrator")
	o.set("creation", "2026-06-01 09:00:00.000000")
	o.set("modified", "2026-06-01 09:00:00.000000")
	o.set("modified_by", "Administrator")
	o.set("docstatus", 0)
	o.set("idx", 0)
	o.set("client_id", cp.ID)
	o.set("app_name", "erpgate")
	o.set("user", "Administrator")
	o.set("client_secret", cp.Secret)
	skip := 0
	if cp.SkipAuthorization {
		skip = 1
	}
	o.set("skip_authorization", skip)
	o.set("scopes", cp.Scopes)
	o.set("redirect_uris", strings.Join(cp.RedirectURIs, " "))
	if len(cp.RedirectURIs) > 0 {
		o.set("default_redirect_uri", cp.RedirectURIs[0])
	}
	o.set("grant_type", cp.GrantType)
	o.set("response_type", cp.ResponseType)
	o.set("doctype", "OAuth Client")
	o.set("allowed_roles", allowedRoleRows(cp, "Administrator", "2026-06-01 09:00:00.000000"))
	return rc.respond("data", o)
}
