package acumaticatest

import (
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

// The browser side an administrator uses to register erpgate: sign in at
// /Frames/Login.aspx, then Connected Applications (SM303010) at
// /Main?ScreenId=SM303010, where a new application gets a client name, an
// OAuth 2.0 flow, a redirect URI and a shared secret. On save the
// instance generates the client ID (GUID@Tenant); the secret's value is
// shown once. The real screens are a JavaScript application; these are
// plain forms a person, or a headless browser, can fill in. The UI
// session is kept apart from API sessions (it takes no API seat) in the
// cookie UICookie.

// Paths and screen of the administrator's pages.
const (
	PathUILogin         = "/Frames/Login.aspx"
	PathMain            = "/Main"
	ScreenConnectedApps = "SM303010"
	// UICookie holds the simulator's UI session.
	UICookie = "acumaticatest_ui"
)

// uiUser returns the user of the request's UI session, and its id.
func (s *Simulator) uiUser(r *http.Request) (*User, string) {
	c, err := r.Cookie(UICookie)
	if err != nil || c.Value == "" {
		return nil, ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.uiSessions[c.Value], c.Value
}

// uiCSRF is the request verification token of a UI session.
func uiCSRF(session string) string {
	sum := sha256.Sum256([]byte("acumaticatest-ui:" + session))
	return hex.EncodeToString(sum[:16])
}

// handleUILogin is the sign-in page (GET) and sign-in (POST), which
// follows ReturnUrl when it stays on the instance.
func (s *Simulator) handleUILogin(w http.ResponseWriter, r *http.Request) {
	prefix := pathPrefix(r)
	ret := r.FormValue("ReturnUrl")
	if !strings.HasPrefix(ret, prefix+"/") || strings.HasPrefix(ret, "//") {
		ret = prefix + PathMain + "?ScreenId=" + ScreenConnectedApps
	}
	data := map[string]any{"Action": prefix + PathUILogin, "ReturnUrl": ret, "Tenant": s.tenant}
	if r.Method != http.MethodPost {
		renderUI(w, http.StatusOK, "login", data)
		return
	}
	u := s.checkPassword(r.PostFormValue("UserName"), r.PostFormValue("Password"))
	if u == nil {
		data["Error"] = "Invalid credentials. Please try again."
		data["UserName"] = r.PostFormValue("UserName")
		renderUI(w, http.StatusOK, "login", data)
		return
	}
	id := opaqueToken()
	s.mu.Lock()
	if s.uiSessions == nil {
		s.uiSessions = map[string]*User{}
	}
	s.uiSessions[id] = u
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: UICookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, ret, http.StatusFound)
}

// handleMain serves /Main?ScreenId=SM303010: the Connected Applications
// list and form (GET) and saving a new application (POST). Other screens
// are not simulated.
func (s *Simulator) handleMain(w http.ResponseWriter, r *http.Request) {
	prefix := pathPrefix(r)
	if !strings.EqualFold(r.URL.Query().Get("ScreenId"), ScreenConnectedApps) {
		renderUI(w, http.StatusNotFound, "error", map[string]any{"Title": "Error", "Error": "The screen is not available in this simulator; only " + ScreenConnectedApps + " is."})
		return
	}
	u, session := s.uiUser(r)
	if u == nil {
		http.Redirect(w, r, prefix+PathUILogin+"?"+url.Values{"ReturnUrl": {prefix + r.URL.RequestURI()}}.Encode(), http.StatusFound)
		return
	}
	if !u.IsAdministrator() {
		renderUI(w, http.StatusForbidden, "error", map[string]any{"Title": "Error", "User": u.DisplayName(), "Error": insufficientRights(ScreenConnectedApps)})
		return
	}
	action := prefix + PathMain + "?ScreenId=" + ScreenConnectedApps
	data := map[string]any{"Title": "Connected Applications", "User": u.DisplayName(), "Action": action, "CSRF": uiCSRF(session),
		"Tenant": s.tenant, "Flow": FlowAuthorizationCode}
	data["Apps"] = s.Clients()
	if r.Method != http.MethodPost {
		renderUI(w, http.StatusOK, "apps", data)
		return
	}
	if r.PostFormValue("__RequestVerificationToken") != uiCSRF(session) {
		renderUI(w, http.StatusBadRequest, "error", map[string]any{"Title": "Error", "User": u.DisplayName(), "Error": "The request could not be verified. Reload the page and try again."})
		return
	}
	name := strings.TrimSpace(r.PostFormValue("ClientName"))
	flow := r.PostFormValue("Flow")
	redirect := strings.TrimSpace(r.PostFormValue("RedirectUri"))
	data["ClientName"], data["Flow"], data["RedirectUri"] = name, flow, redirect
	fail := func(msg string) { data["Error"] = msg; renderUI(w, http.StatusUnprocessableEntity, "apps", data) }
	switch {
	case name == "":
		fail("'Client Name' cannot be empty.")
		return
	case flow != FlowAuthorizationCode && flow != FlowPassword:
		fail("'OAuth 2.0 Flow' is not one of the flows of a connected application.")
		return
	case flow == FlowAuthorizationCode && !absoluteURL(redirect):
		fail("The authorization code flow needs a redirect URI: an absolute http or https URL.")
		return
	}
	c := Client{Name: name, Flow: flow}
	if flow == FlowAuthorizationCode {
		c.RedirectURIs = []string{redirect}
	}
	c = s.AddClient(c)
	data["Saved"] = c
	renderUI(w, http.StatusOK, "saved", data)
}

func absoluteURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

func renderUI(w http.ResponseWriter, status int, page string, data map[string]any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = uiPages.ExecuteTemplate(w, page, data)
}

var uiPages = template.Must(template.New("ui").Parse(`
{{define "head"}}<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{{.Title}} - Acumatica ERP</title></head><body>
{{if .User}}<header><p>Signed in as {{.User}}</p></header>{{end}}<main>{{end}}
{{define "foot"}}</main></body></html>{{end}}

{{define "login"}}<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sign In - Acumatica ERP</title></head><body><main>
<h1>Sign In</h1><p>Tenant: {{.Tenant}}</p>
{{if .Error}}<p class="error" id="error" role="alert">{{.Error}}</p>{{end}}
<form id="login" method="post" action="{{.Action}}">
<input type="hidden" name="ReturnUrl" value="{{.ReturnUrl}}">
<p><label for="UserName">Username</label> <input id="UserName" name="UserName" value="{{.UserName}}" autocomplete="username"></p>
<p><label for="Password">Password</label> <input id="Password" type="password" name="Password" autocomplete="current-password"></p>
<p><button type="submit" id="signin">Sign In</button></p>
</form></main></body></html>{{end}}

{{define "error"}}{{template "head" .}}<h1>{{.Title}}</h1><p class="error" id="error" role="alert">{{.Error}}</p>{{template "foot"}}{{end}}

{{define "apps"}}{{template "head" .}}<h1>Connected Applications (SM303010)</h1>
{{if .Apps}}<table id="apps"><caption>Applications</caption><thead><tr><th scope="col">Client ID</th><th scope="col">Client Name</th><th scope="col">OAuth 2.0 Flow</th></tr></thead><tbody>
{{range .Apps}}<tr><td>{{.ID}}</td><td>{{.Name}}</td><td>{{if eq .Flow "password"}}Resource Owner Password Credentials{{else}}Authorization Code{{end}}</td></tr>{{end}}
</tbody></table>{{end}}
<h2>New application</h2>
{{if .Error}}<p class="error" id="error" role="alert">{{.Error}}</p>{{end}}
<form id="connected-app" method="post" action="{{.Action}}">
<input type="hidden" name="__RequestVerificationToken" value="{{.CSRF}}">
<p><label for="ClientName">Client Name</label> <input id="ClientName" name="ClientName" value="{{.ClientName}}" required></p>
<p><label for="Flow">OAuth 2.0 Flow</label> <select id="Flow" name="Flow">
<option value="authorization_code"{{if eq .Flow "authorization_code"}} selected{{end}}>Authorization Code</option>
<option value="password"{{if eq .Flow "password"}} selected{{end}}>Resource Owner Password Credentials</option></select></p>
<p><label for="RedirectUri">Redirect URI</label> <input id="RedirectUri" name="RedirectUri" value="{{.RedirectUri}}"></p>
<p>A shared secret is added when the application is saved; its value is shown once.</p>
<p><button type="submit" id="save">Save</button></p>
</form>{{template "foot"}}{{end}}

{{define "saved"}}{{template "head" .}}<h1>Connected Applications (SM303010)</h1>
<p id="saved" role="status">The application was saved. Copy the shared secret now: it is not shown again.</p>
{{with .Saved}}<dl>
<dt>Client ID</dt><dd id="client-id">{{.ID}}</dd>
<dt>Client Name</dt><dd id="client-name">{{.Name}}</dd>
<dt>Shared secret (value)</dt><dd id="client-secret">{{.Secret}}</dd>
<dt>Redirect URI</dt><dd id="redirect-uri">{{range .RedirectURIs}}{{.}}{{end}}</dd>
</dl>{{end}}
<p><a href="{{.Action}}">Back to Connected Applications</a></p>{{template "foot"}}{{end}}
`))
