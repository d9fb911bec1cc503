package acumaticatest

import (
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// pendingAuthorization is an authorize request waiting for sign-in and
// consent.
type pendingAuthorization struct {
	id          string
	client      *Client
	redirectURI string
	scopes      []string
	state       string
	nonce       string
	challenge   string
	method      string
	user        *User // set after a successful sign-in
	expires     time.Time
}

// Form field names of the sign-in and consent pages.
const (
	FormRequest  = "request"
	FormUsername = "username"
	FormPassword = "password"
	FormButton   = "button" // consent: "yes" or "no"
)

// Paths of the interactive pages.
const (
	pathLogin   = "/identity/account/login"
	pathConsent = "/identity/consent"
)

func (s *Simulator) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeMethodNotAllowed(w, r.Method)
		return
	}
	_ = r.ParseForm()
	q := r.Form
	c := s.clientByID(q.Get("client_id"))
	if c == nil {
		writeErrorPage(w, "unauthorized_client", "Unknown client or client not enabled")
		return
	}
	redirect := q.Get("redirect_uri")
	if !slices.Contains(c.RedirectURIs, redirect) {
		writeErrorPage(w, "invalid_request", "Invalid redirect_uri")
		return
	}
	state := q.Get("state")
	fail := func(code string) {
		http.Redirect(w, r, redirectWith(redirect, "error", code, "state", state), http.StatusFound)
	}
	if c.Flow != FlowAuthorizationCode {
		fail("unauthorized_client")
		return
	}
	if q.Get("response_type") != "code" {
		fail("unsupported_response_type")
		return
	}
	scopes, ok := parseScopes(q.Get("scope"))
	if !ok || len(scopes) == 0 {
		fail("invalid_scope")
		return
	}
	method := q.Get("code_challenge_method")
	challenge := q.Get("code_challenge")
	if challenge != "" && method == "" {
		method = "plain"
	}
	if challenge != "" && method != "plain" && method != "S256" || challenge == "" && method != "" {
		fail("invalid_request")
		return
	}
	p := &pendingAuthorization{id: opaqueToken(), client: c, redirectURI: redirect, scopes: scopes, state: state,
		nonce: q.Get("nonce"), challenge: challenge, method: method, expires: s.now().Add(10 * time.Minute)}
	s.mu.Lock()
	s.pending[p.id] = p
	s.mu.Unlock()
	writeLoginPage(w, r, p.id, "")
}

func (s *Simulator) pendingRequest(id string) *pendingAuthorization {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending[id]
	if p == nil || !s.now().Before(p.expires) {
		return nil
	}
	return p
}

// handleLogin checks the sign-in form and shows the consent page.
func (s *Simulator) handleLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeMethodNotAllowed(w, r.Method)
		return
	}
	_ = r.ParseForm()
	p := s.pendingRequest(r.PostForm.Get(FormRequest))
	if p == nil {
		writeErrorPage(w, "invalid_request", "The sign-in request has expired")
		return
	}
	u := s.checkPassword(r.PostForm.Get(FormUsername), r.PostForm.Get(FormPassword))
	if u == nil {
		writeLoginPage(w, r, p.id, "Invalid credentials. Please try again.")
		return
	}
	s.mu.Lock()
	p.user = u
	s.mu.Unlock()
	writeConsentPage(w, r, p)
}

// handleConsent completes the flow: redirect_uri?code=…&scope=…&state=…
func (s *Simulator) handleConsent(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeMethodNotAllowed(w, r.Method)
		return
	}
	_ = r.ParseForm()
	p := s.pendingRequest(r.PostForm.Get(FormRequest))
	if p == nil || p.user == nil {
		writeErrorPage(w, "invalid_request", "The sign-in request has expired")
		return
	}
	s.mu.Lock()
	delete(s.pending, p.id)
	s.mu.Unlock()
	if r.PostForm.Get(FormButton) != "yes" {
		http.Redirect(w, r, redirectWith(p.redirectURI, "error", "access_denied", "state", p.state), http.StatusFound)
		return
	}
	ac := &authCode{code: opaqueToken(), client: p.client.ID, redirectURI: p.redirectURI, scopes: p.scopes,
		user: p.user, challenge: p.challenge, method: p.method, nonce: p.nonce,
		expires: s.now().Add(authorizationCodeLifetime)}
	s.mu.Lock()
	s.codes[ac.code] = ac
	s.mu.Unlock()
	http.Redirect(w, r, redirectWith(p.redirectURI, "code", ac.code, "scope", strings.Join(p.scopes, " "), "state", p.state), http.StatusFound)
}

// redirectWith appends query parameters (spaces as %20, empty values
// skipped) to a redirect URI.
func redirectWith(base string, kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		parts = append(parts, kv[i]+"="+strings.ReplaceAll(url.QueryEscape(kv[i+1]), "+", "%20"))
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + strings.Join(parts, "&")
}

func writeHTML(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func writeLoginPage(w http.ResponseWriter, r *http.Request, requestID, errText string) {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><title>Acumatica ERP - Sign In</title></head><body>`)
	b.WriteString(`<h1>Sign In</h1>`)
	if errText != "" {
		b.WriteString(`<p class="error" id="error">` + html.EscapeString(errText) + `</p>`)
	}
	b.WriteString(`<form id="login" method="post" action="` + pathPrefix(r) + pathLogin + `">`)
	b.WriteString(`<input type="hidden" name="` + FormRequest + `" value="` + html.EscapeString(requestID) + `">`)
	b.WriteString(`<label>Username <input type="text" name="` + FormUsername + `" autocomplete="username"></label>`)
	b.WriteString(`<label>Password <input type="password" name="` + FormPassword + `" autocomplete="current-password"></label>`)
	b.WriteString(`<button type="submit">Sign In</button></form></body></html>`)
	writeHTML(w, http.StatusOK, b.String())
}

func writeConsentPage(w http.ResponseWriter, r *http.Request, p *pendingAuthorization) {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><title>Acumatica ERP - Consent</title></head><body>`)
	app := "The application"
	if p.client != nil && p.client.Name != "" {
		app = p.client.Name
	}
	b.WriteString(`<h1>` + html.EscapeString(app) + ` is requesting access</h1><p>Scopes: ` + html.EscapeString(strings.Join(p.scopes, " ")) + `</p>`)
	b.WriteString(`<form id="consent" method="post" action="` + pathPrefix(r) + pathConsent + `">`)
	b.WriteString(`<input type="hidden" name="` + FormRequest + `" value="` + html.EscapeString(p.id) + `">`)
	b.WriteString(`<button type="submit" name="` + FormButton + `" value="yes">Yes, Allow</button>`)
	b.WriteString(`<button type="submit" name="` + FormButton + `" value="no">No, Do Not Allow</button></form></body></html>`)
	writeHTML(w, http.StatusOK, b.String())
}

func writeErrorPage(w http.ResponseWriter, code, text string) {
	writeHTML(w, http.StatusBadRequest, `<!DOCTYPE html><html><head><title>Error</title></head><body><h1>Sorry, there was an error : `+
		html.EscapeString(code)+`</h1><p>`+html.EscapeString(text)+`</p></body></html>`)
}
