package frappetest

import (
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"
)

// sessionStore maps sid cookies to users, like Frappe's Sessions table.
type sessionStore struct {
	mu   sync.Mutex
	sids map[string]string
}

func (s *sessionStore) create(email string) string {
	sid := excID()
	s.mu.Lock()
	s.sids[sid] = email
	s.mu.Unlock()
	return sid
}

func (s *sessionStore) get(sid string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sids[sid]
}

func (s *sessionStore) drop(sid string) {
	s.mu.Lock()
	delete(s.sids, sid)
	s.mu.Unlock()
}

// userByEmail returns a demo user or nil.
func (s *Simulator) userByEmail(email string) *User {
	users := s.userList()
	for i := range users {
		if strings.EqualFold(users[i].Email, email) {
			return &users[i]
		}
	}
	return nil
}

// authenticate mirrors frappe.auth: the sid cookie session first, then
// validate_auth() on the Authorization header. It returns the user (nil =
// Guest) or a 401/400 error.
func (s *Simulator) authenticate(r *http.Request) (*User, *apiError) {
	var sessionUser *User
	if c, err := r.Cookie("sid"); err == nil && c.Value != "" && c.Value != "Guest" {
		sessionUser = s.userByEmail(s.sessions.get(c.Value))
	}
	user := sessionUser
	parts := strings.Split(r.Header.Get("Authorization"), " ")
	if len(parts) != 2 {
		// No header, or not exactly two space-separated parts: ignored.
		return user, nil
	}
	// validate_oauth: the second part is looked up as an OAuth Bearer
	// Token whatever the prefix is.
	if email, ok := s.tokens.lookup(parts[1]); ok {
		if u := s.userByEmail(email); u != nil {
			user = u
		}
	}
	// validate_auth_via_api_keys.
	var key, secret string
	haveKey := false
	switch strings.ToLower(parts[0]) {
	case "basic":
		raw, err := pyB64Decode(parts[1])
		if err != nil {
			return nil, frappeThrow("InvalidAuthorizationToken", "Failed to decode token, please provide a valid base64-encoded token.", "")
		}
		if utf8.Valid(raw) {
			kv := strings.Split(string(raw), ":")
			if len(kv) == 2 {
				key, secret, haveKey = kv[0], kv[1], true
			}
		}
	case "token":
		kv := strings.Split(parts[1], ":")
		if len(kv) == 2 {
			key, secret, haveKey = kv[0], kv[1], true
		}
	}
	if haveKey {
		var match *User
		users := s.userList()
		for i := range users {
			if users[i].APIKey == key {
				match = &users[i]
			}
		}
		if match == nil {
			return nil, bareError("AuthenticationError")
		}
		if match.APISecret == secret && sessionUser == nil && user == nil {
			user = match
		}
	}
	if user == nil {
		return nil, bareError("AuthenticationError")
	}
	return user, nil
}

// pyB64Decode decodes like Python's base64.b64decode(s) without validate:
// characters outside the alphabet are discarded; bad padding is an error.
func pyB64Decode(s string) ([]byte, error) {
	var data []byte
	pads := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/':
			if pads > 0 {
				// Data after padding: Python stops at the first complete
				// quad; treat the rest as garbage.
				continue
			}
			data = append(data, c)
		case c == '=':
			pads++
		}
	}
	switch len(data) % 4 {
	case 1:
		return nil, base64.CorruptInputError(len(data))
	case 2:
		if pads < 2 {
			return nil, base64.CorruptInputError(len(data))
		}
	case 3:
		if pads < 1 {
			return nil, base64.CorruptInputError(len(data))
		}
	}
	return base64.RawStdEncoding.DecodeString(string(data))
}
