package acumaticatest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// principal is the authenticated caller of an API request.
type principal struct {
	user  *User
	token *accessToken // nil for Basic or cookie sign-in
	// session names the server session the request runs in ("" for
	// Basic authentication, which has none): a long operation locks its
	// form for that session only (longop.go).
	session string
}

// Cookie names of Acumatica's ASP.NET session.
const (
	cookieAuth    = ".ASPXAUTH"
	cookieSession = "ASP.NET_SessionId"
)

// authenticate resolves the caller of a contract or OData request. A
// Bearer token wins over cookies; for scope api the token is the session
// (no cookie is issued or read); api:concurrent_access tokens open a
// server session per request unless the ASP.NET_SessionId cookie is
// replayed. Basic authentication is accepted on the GI OData endpoint
// only. On failure the response is written and nil returned.
func (s *Simulator) authenticate(w http.ResponseWriter, r *http.Request, allowBasic bool) *principal {
	if h := r.Header.Get("Authorization"); h != "" {
		if tok := bearerToken(r); tok != "" {
			t := s.lookupAccess(tok)
			if t == nil || !t.has("api") {
				writeNotSignedIn(w)
				return nil
			}
			if s.credentialsChanged(t.user, t.passGen) {
				// The token's session signs the user in again with the
				// credentials it was issued for, which no longer work.
				writeInvalidCredentials(w)
				return nil
			}
			session, ok := s.bearerSession(w, r, t)
			if !ok {
				return nil
			}
			return &principal{user: t.user, token: t, session: session}
		}
		if user, pass, ok := r.BasicAuth(); ok && allowBasic {
			if u := s.checkPassword(user, pass); u != nil {
				return &principal{user: u}
			}
		}
		writeNotSignedIn(w)
		return nil
	}
	if c, err := r.Cookie(cookieAuth); err == nil {
		now := s.now()
		s.tokens.mu.Lock()
		sess := s.tokens.sessions[c.Value]
		ok := sess != nil && !sess.closed && now.Sub(sess.lastUsed) < sessionIdle
		if ok {
			sess.lastUsed = now
		}
		s.tokens.mu.Unlock()
		if ok {
			return &principal{user: sess.user, session: "cookie:" + c.Value}
		}
	}
	writeNotSignedIn(w)
	return nil
}

// bearerSession accounts for the server session behind a Bearer request
// and names it: for scope api the token is the session; an
// api:concurrent_access token runs in the session its cookie names, or in
// a new one.
func (s *Simulator) bearerSession(w http.ResponseWriter, r *http.Request, t *accessToken) (string, bool) {
	now := s.now()
	s.tokens.mu.Lock()
	defer s.tokens.mu.Unlock()
	if t.has("api:concurrent_access") {
		if c, err := r.Cookie(cookieSession); err == nil {
			if sess := s.tokens.sessions[c.Value]; sess != nil && sess.user == t.user && !sess.closed && now.Sub(sess.lastUsed) < sessionIdle {
				sess.lastUsed = now
				return "session:" + sess.id, true
			}
		}
		if s.tokens.seatsInUse(now) >= s.seatLimit {
			writeLoginLimitRedirect(w, r, s.seatLimit)
			return "", false
		}
		sess := &apiSession{id: opaqueToken()[:24], user: t.user, lastUsed: now}
		s.tokens.sessions[sess.id] = sess
		http.SetCookie(w, &http.Cookie{Name: cookieSession, Value: sess.id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		return "session:" + sess.id, true
	}
	if t.loggedOut {
		// The session was closed by sign-out: the next call opens a new one.
		if !s.tokens.userSeated(t.user, now) && s.tokens.seatsInUse(now) >= s.seatLimit {
			writeLoginLimitRedirect(w, r, s.seatLimit)
			return "", false
		}
		t.loggedOut = false
	}
	return "token:" + t.value, true
}

// writeLoginLimitRedirect is what a Bearer call gets when no API-user
// seat is free: a 302 to the HTML error page, not JSON.
func writeLoginLimitRedirect(w http.ResponseWriter, r *http.Request, limit int) {
	msg := fmt.Sprintf("The number of concurrent API logins (%d) permitted by the license has been reached.", limit)
	w.Header().Set("Location", pathPrefix(r)+"/Frames/Error.aspx?exceptionID="+url.QueryEscape(msgLoginLimit)+"&typeID=PX.Data.PXException&message="+url.QueryEscape(msg))
	w.WriteHeader(http.StatusFound)
}

// requireLength reproduces IIS: a POST without Content-Length (and not
// chunked) is refused with 411.
func requireLength(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Content-Length") == "" && len(r.TransferEncoding) == 0 {
		w.Header().Set("Content-Type", "text/html; charset=us-ascii")
		w.WriteHeader(http.StatusLengthRequired)
		_, _ = w.Write([]byte(`<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN""http://www.w3.org/TR/html4/strict.dtd"><HTML><HEAD><TITLE>Length Required</TITLE></HEAD><BODY><h2>Length Required</h2><hr><p>HTTP Error 411. The request must be chunked or have a content length.</p></BODY></HTML>`))
		return false
	}
	return true
}

// handleCookieLogin is POST /entity/auth/login: a cookie session that
// occupies a seat until sign-out or 10 idle minutes.
func (s *Simulator) handleCookieLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeMethodNotAllowed(w, r.Method)
		return
	}
	if !requireLength(w, r) {
		return
	}
	var creds struct {
		Name, Password, Tenant, Company, Branch, Locale string
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		v, _ := url.ParseQuery(string(body))
		creds.Name, creds.Password, creds.Tenant, creds.Company = v.Get("name"), v.Get("password"), v.Get("tenant"), v.Get("company")
	} else if json.Unmarshal(body, &creds) != nil {
		writeJSON(w, http.StatusBadRequest, `{"message":"The request is invalid."}`)
		return
	}
	tenant := creds.Tenant
	if tenant == "" {
		tenant = creds.Company
	}
	if tenant != "" && !strings.EqualFold(tenant, s.tenant) {
		writeJSON(w, http.StatusInternalServerError, exceptionError("A proper company ID cannot be determined for the request.", "PX.Data.PXUndefinedCompanyException", ""))
		return
	}
	u := s.checkPassword(creds.Name, creds.Password)
	if u == nil {
		writeInvalidCredentials(w)
		return
	}
	now := s.now()
	s.tokens.mu.Lock()
	if s.tokens.seatsInUse(now) >= s.seatLimit {
		s.tokens.mu.Unlock()
		writeJSON(w, http.StatusInternalServerError, exceptionError(msgLoginLimit+": the number of concurrent API users permitted by the license has been reached.", "PX.Data.PXException", ""))
		return
	}
	sess := &apiSession{id: opaqueToken(), user: u, lastUsed: now}
	s.tokens.sessions[sess.id] = sess
	s.tokens.mu.Unlock()
	exp := now.Add(72 * time.Hour)
	http.SetCookie(w, &http.Cookie{Name: cookieAuth, Value: sess.id, Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteNoneMode})
	http.SetCookie(w, &http.Cookie{Name: cookieSession, Value: sess.id[:24], Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: "CompanyID", Value: s.tenant, Path: "/", Expires: exp})
	http.SetCookie(w, &http.Cookie{Name: "Locale", Value: "Culture=en-US&TimeZone=GMTM0800A", Path: "/", Expires: exp})
	http.SetCookie(w, &http.Cookie{Name: "UserBranch", Value: "1", Path: "/"})
	w.WriteHeader(http.StatusNoContent)
}

// handleLogout is POST /entity/auth/logout: it ends the cookie session or,
// with a Bearer token, the token's server session.
func (s *Simulator) handleLogout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeMethodNotAllowed(w, r.Method)
		return
	}
	if !requireLength(w, r) {
		return
	}
	s.tokens.mu.Lock()
	if tok := bearerToken(r); tok != "" {
		if t := s.tokens.access[tok]; t != nil {
			t.loggedOut = true
		}
		if c, err := r.Cookie(cookieSession); err == nil {
			if sess := s.tokens.sessions[c.Value]; sess != nil {
				sess.closed = true
			}
		}
	} else if c, err := r.Cookie(cookieAuth); err == nil {
		if sess := s.tokens.sessions[c.Value]; sess != nil {
			sess.closed = true
		}
	}
	s.tokens.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieAuth, Value: "", Path: "/", MaxAge: -1})
	http.SetCookie(w, &http.Cookie{Name: cookieSession, Value: "", Path: "/", MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
}
