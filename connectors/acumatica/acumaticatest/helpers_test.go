package acumaticatest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTestServer(t *testing.T, opts Options) *Server {
	t.Helper()
	s := NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

// passwordToken signs a user in through the default service client.
func passwordToken(t *testing.T, s *Server, username, scope string) string {
	t.Helper()
	status, body := tokenRequest(t, s, url.Values{"grant_type": {"password"}, "username": {username},
		"password": {s.userPassword(username)}, "scope": {scope}}, DefaultServiceClientGUID+"@Demo", DefaultServiceSecret)
	if status != http.StatusOK {
		t.Fatalf("password grant for %s: %d %s", username, status, body)
	}
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" {
		t.Fatalf("token response %s: %v", body, err)
	}
	return tr.AccessToken
}

func (s *Server) userPassword(name string) string {
	if u := s.userByName(name); u != nil {
		return u.Password
	}
	return ""
}

func tokenRequest(t *testing.T, s *Server, form url.Values, clientID, secret string) (int, []byte) {
	t.Helper()
	if clientID != "" {
		form.Set("client_id", clientID)
		form.Set("client_secret", secret)
	}
	resp, err := http.Post(s.URL+"/identity/connect/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// call performs a request with an optional bearer token.
func call(t *testing.T, method, u, token string, body io.Reader) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func get(t *testing.T, u, token string) (int, []byte) {
	t.Helper()
	resp, b := call(t, http.MethodGet, u, token, nil)
	return resp.StatusCode, b
}

// entityURL builds /entity/Default/{version}/{path}?query.
func (s *Server) entityURL(version, path string, query url.Values) string {
	u := s.URL + "/entity/Default/" + version + "/" + path
	if len(query) > 0 {
		u += "?" + strings.ReplaceAll(query.Encode(), "+", "%20")
	}
	return u
}

func decodeList(t *testing.T, b []byte) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode list: %v: %.300s", err, b)
	}
	return out
}

func decodeObject(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	var out map[string]json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode object: %v: %.300s", err, b)
	}
	return out
}

// value unwraps {"value":X} to X's raw JSON ("" for {}).
func value(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var w map[string]json.RawMessage
	if err := json.Unmarshal(raw, &w); err != nil {
		t.Fatalf("not a wrapper: %s", raw)
	}
	return string(w["value"])
}

// topLevelKeys returns the member names of a JSON object in order.
func topLevelKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %.100s", b)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("unmarshal %.200s: %v", b, err)
	}
}

// testClock is a settable clock for Options.Now.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *testClock { return &testClock{t: DefaultNow} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func callForm(t *testing.T, u string, form url.Values) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Post(u, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}
