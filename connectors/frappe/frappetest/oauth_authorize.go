package frappetest

import (
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// oauthAuthorize is GET .../oauth2.authorize.
func (rc *reqCtx) oauthAuthorize() *apiError {
	// Frappe sends a Guest to the login page before it validates anything
	// (shared/erp-api/frappe/api-facts.md §2.2): a wrong client or redirect URI shows only after
	// sign-in.
	if rc.user == nil {
		http.Redirect(rc.w, rc.r, "/login?"+url.Values{"redirect-to": {rc.r.URL.RequestURI()}}.Encode(), http.StatusFound)
		return nil
	}
	// oauthlib's validate_authorization_request first refuses a request
	// that repeats one of these (InvalidRequestFatalError): the first value
	// does not win.
	query := rc.r.URL.Query()
	for _, k := range []string{"client_id", "response_type", "redirect_uri", "scope", "state"} {
		if len(query[k]) > 1 {
			return authorizeErrorDescribed(rc.w, http.StatusBadRequest, "invalid_request", "Duplicate "+k+" parameter.")
		}
	}
	p := rc.s.oauth()
	clientID, redirectURI := rc.formString("client_id"), rc.formString("redirect_uri")
	p.mu.Lock()
	client := p.clients[clientID]
	p.mu.Unlock()
	if client == nil || !client.allows(rc.user) {
		return authorizeError(rc.w, http.StatusBadRequest, "invalid_client_id")
	}
	if !slices.Contains(client.RedirectURIs, redirectURI) {
		return authorizeError(rc.w, http.StatusBadRequest, "mismatching_redirect_uri")
	}
	if rc.formString("response_type") != "code" {
		return authorizeError(rc.w, http.StatusBadRequest, "unsupported_response_type")
	}
	// validate_response_type: the client's own response type (or an
	// OpenID Connect one); a "Token" client may not use the code flow.
	if !strings.EqualFold(client.withDefaults().ResponseType, "code") {
		return authorizeError(rc.w, http.StatusBadRequest, "unauthorized_client")
	}
	if m := rc.formString("code_challenge_method"); m != "" && m != "S256" && m != "plain" {
		return authorizeError(rc.w, http.StatusBadRequest, "invalid_request")
	}
	// validate_scopes: every requested scope must be one of the client's.
	allowed := strings.Fields(client.withDefaults().Scopes)
	for _, sc := range strings.Fields(rc.formString("scope")) {
		if !slices.Contains(allowed, sc) {
			return authorizeError(rc.w, http.StatusBadRequest, "invalid_scope")
		}
	}
	approve := "/api/method/frappe.integrations.oauth2.approve?" + rc.r.URL.RawQuery
	if client.SkipAuthorization {
		http.Redirect(rc.w, rc.r, approve, http.StatusFound)
		return nil
	}
	deny := redirectURI + sep(redirectURI) + url.Values{"error": {"access_denied"}, "state": {rc.formString("state")}}.Encode()
	params := url.Values{}
	for k, v := range rc.r.URL.Query() {
		params[k] = v
	}
	rc.w.Header().Set("Content-Type", "text/html; charset=utf-8")
	rc.w.WriteHeader(http.StatusOK)
	_ = confirmAccessPage.Execute(rc.w, map[string]any{
		"User": rc.user.FullName, "App": client.AppName, "Scopes": strings.Fields(rc.formString("scope")), "Params": params, "Deny": deny,
	})
	return nil
}

// oauthApprove is GET .../oauth2.approve: issue a code and redirect.
func (rc *reqCtx) oauthApprove() *apiError {
	p := rc.s.oauth()
	clientID, redirectURI := rc.formString("client_id"), rc.formString("redirect_uri")
	p.mu.Lock()
	client := p.clients[clientID]
	if client != nil && !client.allows(rc.user) {
		p.mu.Unlock()
		return authorizeError(rc.w, http.StatusBadRequest, "invalid_client_id")
	}
	if client == nil || !slices.Contains(client.RedirectURIs, redirectURI) {
		p.mu.Unlock()
		return authorizeError(rc.w, http.StatusBadRequest, "invalid_request")
	}
	method := strings.ToLower(rc.formString("code_challenge_method"))
	challenge := rc.formString("code_challenge")
	if challenge != "" && method == "" {
		method = "plain"
	}
	code := randomToken(30)
	p.codes[code] = &oauthCode{client: clientID, redirectURI: redirectURI, user: rc.user.Email,
		scope: rc.formString("scope"), challenge: challenge, method: method, valid: true}
	p.mu.Unlock()
	q := url.Values{"code": {code}}
	if st := rc.formString("state"); st != "" {
		q.Set("state", st)
	}
	http.Redirect(rc.w, rc.r, redirectURI+sep(redirectURI)+q.Encode(), http.StatusFound)
	return nil
}

func sep(u string) string {
	if strings.Contains(u, "?") {
		return "&"
	}
	return "?"
}

// authorizeError is Frappe's JSON for a failed authorize/approve.
func authorizeError(w http.ResponseWriter, status int, code string) *apiError {
	return authorizeErrorDescribed(w, status, code, code)
}

// authorizeErrorDescribed is generate_json_error_response for an oauthlib
// error with its description.
func authorizeErrorDescribed(w http.ResponseWriter, status int, code, description string) *apiError {
	writeJSONResponse(w, status, map[string]any{"description": description, "status_code": status, "error": code})
	return nil
}

// serveWebsite answers the non-API pages the OAuth flow needs: /login and
// the /.well-known/openid-configuration redirect. It reports whether it
// answered.
func (s *Simulator) serveWebsite(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		http.Redirect(w, r, "/api/method/frappe.integrations.oauth2.openid_configuration", http.StatusMovedPermanently)
		return true
	case "/login":
		s.serveLogin(w, r)
		return true
	}
	if name, ok := strings.CutPrefix(r.URL.Path, "/app/oauth-client/"); ok && name != "" && !strings.Contains(name, "/") {
		s.serveOAuthClientDesk(w, r, name)
		return true
	}
	return false
}

// serveLogin shows the login form (GET) or signs in and follows
// redirect-to (POST).
func (s *Simulator) serveLogin(w http.ResponseWriter, r *http.Request) {
	redirectTo := r.FormValue("redirect-to")
	if !strings.HasPrefix(redirectTo, "/") || strings.HasPrefix(redirectTo, "//") {
		redirectTo = "/app"
	}
	if r.Method == http.MethodPost {
		u := s.userByEmail(r.PostFormValue("usr"))
		if u == nil || u.Password != r.PostFormValue("pwd") {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusUnauthorized)
			_ = loginPage.Execute(w, map[string]string{"RedirectTo": redirectTo, "Error": "Invalid login credentials"})
			return
		}
		sid := s.sessions.create(u.Email)
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: sid, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		http.Redirect(w, r, redirectTo, http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = loginPage.Execute(w, map[string]string{"RedirectTo": redirectTo})
}

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html><head><title>Login</title></head><body>
<h1>Login to Frappe</h1>{{if .Error}}<p class="error">{{.Error}}</p>{{end}}
<form method="post" action="/login">
<input type="hidden" name="redirect-to" value="{{.RedirectTo}}">
<label>Email <input name="usr" type="email"></label>
<label>Password <input name="pwd" type="password"></label>
<button type="submit">Login</button>
</form></body></html>`))

var confirmAccessPage = template.Must(template.New("confirm").Parse(`<!doctype html>
<html><head><title>Confirm Access</title></head><body>
<h1>Confirm Access</h1>
<p>Hi {{.User}}, {{if .App}}{{.App}}{{else}}an app{{end}} would like to access:</p><ul>{{range .Scopes}}<li>{{.}}</li>{{end}}</ul>
<form method="get" action="/api/method/frappe.integrations.oauth2.approve">
{{range $k, $vs := .Params}}{{range $vs}}<input type="hidden" name="{{$k}}" value="{{.}}">{{end}}{{end}}
<button type="submit" id="allow">Allow</button>
</form>
<a href="{{.Deny}}" id="deny">Deny</a>
</body></html>`))
