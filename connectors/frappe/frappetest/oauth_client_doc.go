package frappetest

import (
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The OAuth Client doctype as an administrator creates it: through the REST
// API (POST /api/resource/OAuth Client) or the desk form
// (/app/oauth-client/new). Only a System Manager may create one (the
// doctype's only permission row); Frappe generates client_id (the name)
// and client_secret. The real desk is a JavaScript application; the
// simulator's pages are plain forms a person, or a headless browser, can
// fill in.

const oauthClientDoctype = "OAuth Client"

// oauthClientFields are the doctype's editable fields, as the REST body or
// the desk form gives them.
type oauthClientFields struct {
	appName, scopes, redirectURIs, defaultRedirectURI, grantType, responseType string
	skipAuthorization                                                          bool
}

// newClient validates fields as OAuthClient.validate and the doctype's
// mandatory fields and options do, and saves the client.
func (s *Simulator) newOAuthClient(f oauthClientFields) (OAuthClient, *apiError) {
	d := OAuthClient{Scopes: f.scopes, GrantType: f.grantType, ResponseType: f.responseType}.withDefaults()
	f.scopes, f.grantType, f.responseType = d.Scopes, d.GrantType, d.ResponseType
	var missing []string
	if strings.TrimSpace(f.appName) == "" {
		missing = append(missing, "App Name")
	}
	if strings.TrimSpace(f.defaultRedirectURI) == "" {
		missing = append(missing, "Default Redirect URI")
	}
	if len(missing) > 0 {
		return OAuthClient{}, frappeThrow("MandatoryError", "Error: Value missing for OAuth Client: "+strings.Join(missing, ", "), "Missing Fields")
	}
	if f.grantType != "Authorization Code" && f.grantType != "Implicit" {
		return OAuthClient{}, validationError(`Grant Type cannot be "` + f.grantType + `". It should be one of "Authorization Code", "Implicit"`)
	}
	if f.responseType != "Code" && f.responseType != "Token" {
		return OAuthClient{}, validationError(`Response Type cannot be "` + f.responseType + `". It should be one of "Code", "Token"`)
	}
	if f.grantType == "Authorization Code" && f.responseType != "Code" || f.grantType == "Implicit" && f.responseType != "Token" {
		return OAuthClient{}, validationError("Combination of Grant Type (<code>" + f.grantType + "</code>) and Response Type (<code>" + f.responseType + "</code>) not allowed")
	}
	var uris []string
	if t := strings.TrimSpace(f.redirectURIs); t != "" {
		// validate_redirect_uri splits on single spaces, nothing else.
		uris = strings.Split(t, " ")
	}
	c := s.AddClient(OAuthClient{AppName: strings.TrimSpace(f.appName), RedirectURIs: uris, DefaultRedirectURI: strings.TrimSpace(f.defaultRedirectURI),
		Scopes: f.scopes, GrantType: f.grantType, ResponseType: f.responseType, SkipAuthorization: f.skipAuthorization})
	return c, nil
}

// insertOAuthClient is POST /api/resource/OAuth Client: the new document
// under "data".
func (rc *reqCtx) insertOAuthClient() *apiError {
	if rc.user == nil || !rc.user.IsSystemManager() {
		return rc.readOnly(oauthClientDoctype)
	}
	str := func(k string) string { v, _ := rc.arg(k); return cstr(v) }
	skip, _ := rc.arg("skip_authorization")
	c, err := rc.s.newOAuthClient(oauthClientFields{appName: str("app_name"), scopes: str("scopes"), redirectURIs: str("redirect_uris"),
		defaultRedirectURI: str("default_redirect_uri"), grantType: str("grant_type"), responseType: str("response_type"), skipAuthorization: sbool(skip)})
	if err != nil {
		return err
	}
	return rc.respond("data", oauthClientDoc(c, rc.user.Email))
}

// oauthClientDoc is the saved document as Frappe returns it.
func oauthClientDoc(c OAuthClient, owner string) *object {
	now := time.Now().UTC().Format("2006-01-02 15:04:05.000000")
	o := newObject(18)
	for _, kv := range [][2]any{
		{"name", c.ID}, {"owner", owner}, {"creation", now}, {"modified", now}, {"modified_by", owner},
		{"docstatus", int64(0)}, {"idx", int64(0)}, {"client_id", c.ID}, {"app_name", c.AppName}, {"user", nil},
		{"client_secret", c.Secret}, {"skip_authorization", boolInt(c.SkipAuthorization)}, {"scopes", c.Scopes},
		{"redirect_uris", strings.Join(c.RedirectURIs, " ")}, {"default_redirect_uri", c.DefaultRedirectURI},
		{"grant_type", c.GrantType}, {"response_type", c.ResponseType}, {"doctype", oauthClientDoctype},
		{"allowed_roles", allowedRoleRows(c, owner, now)},
	} {
		o.set(kv[0].(string), kv[1])
	}
	return o
}

// allowedRoleRows is the client's allowed_roles table (OAuth Client Role
// rows) as a document read returns it.
func allowedRoleRows(c OAuthClient, owner, stamp string) []any {
	var rows []any
	for i, role := range c.withDefaults().AllowedRoles {
		r := newObject(13)
		for _, kv := range [][2]any{
			{"name", generateHash(10)}, {"owner", owner}, {"creation", stamp}, {"modified", stamp}, {"modified_by", owner},
			{"docstatus", int64(0)}, {"idx", int64(i + 1)}, {"role", role}, {"parent", c.ID}, {"parentfield", "allowed_roles"},
			{"parenttype", oauthClientDoctype}, {"doctype", "OAuth Client Role"},
		} {
			r.set(kv[0].(string), kv[1])
		}
		rows = append(rows, r)
	}
	return rows
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// deskCSRF is the csrf_token of a desk session, bound to its sid.
func deskCSRF(sid string) string {
	sum := sha256.Sum256([]byte("frappetest-csrf:" + sid))
	return hex.EncodeToString(sum[:16])
}

// serveOAuthClientDesk answers /app/oauth-client/new (the form; POST
// creates) and /app/oauth-client/<name> (the saved document with its
// client id and secret). A Guest is sent to /login first; a signed-in
// user without System Manager gets the desk's "Not permitted" page.
func (s *Simulator) serveOAuthClientDesk(w http.ResponseWriter, r *http.Request, name string) {
	var user *User
	sid := ""
	if c, err := r.Cookie("sid"); err == nil && c.Value != "" && c.Value != "Guest" {
		sid = c.Value
		user = s.userByEmail(s.sessions.get(sid))
	}
	if user == nil {
		http.Redirect(w, r, "/login?"+url.Values{"redirect-to": {r.URL.RequestURI()}}.Encode(), http.StatusFound)
		return
	}
	page := func(status int, data map[string]any) {
		data["User"] = user.FullName
		data["CSRF"] = deskCSRF(sid)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_ = deskPage.Execute(w, data)
	}
	if !user.IsSystemManager() {
		page(http.StatusForbidden, map[string]any{"Title": "Not Permitted",
			"Error": "You do not have enough permissions to access this resource. Please contact your manager to get access."})
		return
	}
	if name != "new" {
		c, ok := s.Client(name)
		if !ok || r.Method != http.MethodGet {
			page(http.StatusNotFound, map[string]any{"Title": "Not Found", "Error": "OAuth Client " + name + " not found"})
			return
		}
		page(http.StatusOK, map[string]any{"Title": c.AppName, "Saved": c, "URIs": strings.Join(c.RedirectURIs, " ")})
		return
	}
	form := map[string]any{"Title": "New OAuth Client", "New": true, "Scopes": "all openid", "GrantType": "Authorization Code", "ResponseType": "Code"}
	if r.Method != http.MethodPost {
		page(http.StatusOK, form)
		return
	}
	if r.PostFormValue("csrf_token") != deskCSRF(sid) {
		page(http.StatusBadRequest, map[string]any{"Title": "Invalid Request", "Error": "Invalid Request: the CSRF token is missing or wrong. Reload the page and try again."})
		return
	}
	f := oauthClientFields{appName: r.PostFormValue("app_name"), scopes: r.PostFormValue("scopes"), redirectURIs: r.PostFormValue("redirect_uris"),
		defaultRedirectURI: r.PostFormValue("default_redirect_uri"), grantType: r.PostFormValue("grant_type"),
		responseType: r.PostFormValue("response_type"), skipAuthorization: r.PostFormValue("skip_authorization") == "1"}
	c, err := s.newOAuthClient(f)
	if err != nil {
		for k, v := range map[string]any{"AppName": f.appName, "Scopes": f.scopes, "RedirectURIs": f.redirectURIs, "DefaultRedirectURI": f.defaultRedirectURI,
			"GrantType": f.grantType, "ResponseType": f.responseType, "Skip": f.skipAuthorization, "Error": err.message} {
			form[k] = v
		}
		page(http.StatusUnprocessableEntity, form)
		return
	}
	http.Redirect(w, r, "/app/oauth-client/"+url.PathEscape(c.ID), http.StatusSeeOther)
}

var deskPage = template.Must(template.New("desk").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} | Frappe</title></head><body>
<header><p>Signed in as {{.User}}</p></header>
<main>
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" id="error" role="alert">{{.Error}}</p>{{end}}
{{if .New}}
<form method="post" action="/app/oauth-client/new" id="oauth-client">
<input type="hidden" name="csrf_token" value="{{.CSRF}}">
<p><label for="app_name">App Name</label> <input id="app_name" name="app_name" value="{{.AppName}}" required></p>
<p><label for="scopes">Scopes</label> <textarea id="scopes" name="scopes">{{.Scopes}}</textarea></p>
<p><label for="redirect_uris">Redirect URIs</label> <textarea id="redirect_uris" name="redirect_uris">{{.RedirectURIs}}</textarea></p>
<p><label for="default_redirect_uri">Default Redirect URI</label> <input id="default_redirect_uri" name="default_redirect_uri" value="{{.DefaultRedirectURI}}" required></p>
<p><label for="grant_type">Grant Type</label> <select id="grant_type" name="grant_type">
<option{{if eq .GrantType "Authorization Code"}} selected{{end}}>Authorization Code</option>
<option{{if eq .GrantType "Implicit"}} selected{{end}}>Implicit</option></select></p>
<p><label for="response_type">Response Type</label> <select id="response_type" name="response_type">
<option{{if eq .ResponseType "Code"}} selected{{end}}>Code</option>
<option{{if eq .ResponseType "Token"}} selected{{end}}>Token</option></select></p>
<p><input type="checkbox" id="skip_authorization" name="skip_authorization" value="1"{{if .Skip}} checked{{end}}> <label for="skip_authorization">Skip Authorization</label></p>
<p><button type="submit" id="save">Save</button></p>
</form>
{{end}}
{{with .Saved}}
<dl id="oauth-client-doc">
<dt>App Name</dt><dd id="app-name">{{.AppName}}</dd>
<dt>App Client ID</dt><dd id="client-id">{{.ID}}</dd>
<dt>App Client Secret</dt><dd id="client-secret">{{.Secret}}</dd>
<dt>Scopes</dt><dd>{{.Scopes}}</dd>
<dt>Redirect URIs</dt><dd id="redirect-uris">{{$.URIs}}</dd>
<dt>Default Redirect URI</dt><dd>{{.DefaultRedirectURI}}</dd>
<dt>Grant Type</dt><dd>{{.GrantType}}</dd>
<dt>Response Type</dt><dd>{{.ResponseType}}</dd>
<dt>Skip Authorization</dt><dd>{{if .SkipAuthorization}}Yes{{else}}No{{end}}</dd>
</dl>
<p><a href="/app/oauth-client/new">New OAuth Client</a></p>
{{end}}
</main></body></html>`))
