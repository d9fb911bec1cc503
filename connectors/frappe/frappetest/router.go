package frappetest

import (
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// reqCtx carries one authenticated API request.
type reqCtx struct {
	s    *Simulator
	w    http.ResponseWriter
	r    *http.Request
	user *User // nil = Guest
	form *object
}

// serveAPI authenticates and routes /api and /api/v1 requests.
func (s *Simulator) serveAPI(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	var rest string
	switch {
	case strings.HasPrefix(path, "/api/v1/"):
		rest = path[len("/api/v1/"):]
	case strings.HasPrefix(path, "/api/"):
		rest = path[len("/api/"):]
	default:
		if s.serveWebsite(w, r) { // OAuth pages: oauth_authorize.go
			return
		}
		http.NotFound(w, r)
		return
	}
	user, aerr := s.authenticate(r)
	if aerr != nil {
		aerr.write(w)
		return
	}
	form, ferr := parseForm(r)
	if ferr != nil {
		ferr.write(w)
		return
	}
	rc := &reqCtx{s: s, w: w, r: r, user: user, form: form}
	if err := rc.route(rest); err != nil {
		err.write(w)
	}
}

func (rc *reqCtx) route(rest string) *apiError {
	switch {
	case strings.HasPrefix(rest, "method/"):
		method, _, _ := strings.Cut(rest[len("method/"):], "/")
		if method == "" {
			return routeNotFound()
		}
		return rc.callMethod(method)
	case strings.HasPrefix(rest, "resource/"):
		tail := rest[len("resource/"):]
		doctype, name, hasName := strings.Cut(tail, "/")
		if doctype == "" {
			return routeNotFound()
		}
		name = strings.TrimSuffix(name, "/")
		if !hasName || name == "" {
			if rc.r.Method == http.MethodPost && doctype == oauthClientDoctype {
				return rc.insertOAuthClient()
			}
			if rc.r.Method == http.MethodPost && rc.user != nil {
				return rc.insertResource(doctype)
			}
			if rc.r.Method != http.MethodGet && rc.r.Method != http.MethodHead {
				return rc.readOnly(doctype)
			}
			return rc.listResource(doctype)
		}
		if rc.r.Method == http.MethodPut && rc.user != nil && doctype != oauthClientDoctype {
			return rc.updateResource(doctype, name)
		}
		if rc.r.Method != http.MethodGet && rc.r.Method != http.MethodHead {
			return rc.readOnly(doctype)
		}
		if doctype == "OAuth Client" {
			return rc.oauthClientDoc(name)
		}
		if doctype == "System Settings" {
			return rc.systemSettings(name)
		}
		return rc.getResource(doctype, name)
	}
	return routeNotFound()
}

// readOnly answers the write verbs the simulator does not take (DELETE,
// and POST or PUT where Frappe would run a document method or Guest
// writes).
func (rc *reqCtx) readOnly(doctype string) *apiError {
	e := bareError("PermissionError")
	e.messages = []*object{printMessage("No permission for " + doctype)}
	e.errorMsg = "Insufficient Permission for " + doctype
	return e
}

// parseForm builds frappe.form_dict: a JSON body replaces the query string
// entirely; otherwise query args and form fields are merged (first value
// per key) and "_" is dropped.
func parseForm(r *http.Request) (*object, *apiError) {
	form := newObject(8)
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(r.Body, 10<<20))
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if len(body) > 0 && ct == "application/json" {
		v, err := jsonLoads(string(body))
		if err != nil {
			return nil, err
		}
		o, ok := v.(*object)
		if !ok {
			return nil, validationError("Invalid request arguments")
		}
		form = o
	} else {
		add := func(vals map[string][]string, order []string) {
			for _, k := range order {
				if len(vals[k]) > 0 {
					if _, exists := form.get(k); !exists {
						form.set(k, vals[k][0])
					}
				}
			}
		}
		q := r.URL.Query()
		add(q, queryKeyOrder(r.URL.RawQuery))
		if len(body) > 0 && (ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data") {
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			if ct == "multipart/form-data" {
				_ = r.ParseMultipartForm(10 << 20)
			} else {
				_ = r.ParseForm()
			}
			if r.PostForm != nil {
				for k, v := range r.PostForm {
					if len(v) > 0 {
						form.set(k, v[0])
					}
				}
			}
		}
	}
	out := newObject(len(form.keys))
	for i, k := range form.keys {
		if k != "_" {
			out.set(k, form.vals[i])
		}
	}
	return out, nil
}

// queryKeyOrder lists query keys in their order of appearance.
func queryKeyOrder(raw string) []string {
	var out []string
	seen := map[string]bool{}
	for _, part := range strings.Split(raw, "&") {
		k, _, _ := strings.Cut(part, "=")
		if dk, err := url.QueryUnescape(k); err == nil && !seen[dk] {
			seen[dk] = true
			out = append(out, dk)
		}
	}
	return out
}

// arg returns a form value and whether it was present.
func (rc *reqCtx) arg(k string) (any, bool) { return rc.form.get(k) }

// respond writes {"<key>": value} with status 200.
func (rc *reqCtx) respond(key string, value any) *apiError {
	o := newObject(1)
	o.set(key, value)
	writeJSONResponse(rc.w, http.StatusOK, o)
	return nil
}
