package frappetest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
)

var (
	sharedOnce sync.Once
	shared     *Server
)

// testServer returns a simulator shared by read-only tests (data never
// changes); tests that set faults or sessions start their own.
func testServer(t *testing.T) *Server {
	t.Helper()
	sharedOnce.Do(func() { shared = NewServer(Options{}) })
	return shared
}

func newServer(t *testing.T, opts Options) *Server {
	t.Helper()
	s := NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

// resp is a decoded response.
type resp struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

func tokenAuth(u User) string { return "token " + u.APIKey + ":" + u.APISecret }

// call performs a GET with the given Authorization header ("" = none).
func call(t *testing.T, s *Server, auth, path string, params map[string]string) resp {
	t.Helper()
	u := s.URL + path
	if len(params) > 0 {
		v := url.Values{}
		for k, val := range params {
			v.Set(k, val)
		}
		u += "?" + v.Encode()
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return doReq(t, req)
}

func doReq(t *testing.T, req *http.Request) resp {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := resp{status: res.StatusCode, header: res.Header, raw: string(b)}
	dec := json.NewDecoder(strings.NewReader(r.raw))
	dec.UseNumber()
	_ = dec.Decode(&r.body)
	return r
}

// admin calls as the all-companies user.
func admin(t *testing.T, s *Server, path string, params map[string]string) resp {
	t.Helper()
	return call(t, s, tokenAuth(s.User("all-companies")), path, params)
}

// rows returns the list under "data" (or "message").
func (r resp) rows(t *testing.T) []map[string]any {
	t.Helper()
	v, ok := r.body["data"]
	if !ok {
		v = r.body["message"]
	}
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("no list in response %d: %.400s", r.status, r.raw)
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		out[i], _ = e.(map[string]any)
	}
	return out
}

func (r resp) expectStatus(t *testing.T, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d: %.600s", r.status, want, r.raw)
	}
}

// names extracts the "name" column.
func names(rows []map[string]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i], _ = r["name"].(string)
	}
	return out
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

// js marshals a value for a query parameter.
func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// filterDocs walks the dataset.
func filterDocs(s *Server, doctype string, keep func(d *Doc) bool) []*Doc {
	var out []*Doc
	for _, d := range s.Data().List(doctype) {
		if keep(d) {
			out = append(out, d)
		}
	}
	return out
}

func docNames(docs []*Doc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Name
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
