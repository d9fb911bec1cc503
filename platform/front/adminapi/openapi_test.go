package adminapi_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// openAPIDoc fetches and decodes the served description.
func openAPIDoc(t *testing.T, h *harness) map[string]any {
	t.Helper()
	r := h.send(http.MethodGet, "/api/v1/openapi.json", nil, "")
	expect(t, r, http.StatusOK, "")
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type = %q", ct)
	}
	return r.JSON(t)
}

var echoParam = regexp.MustCompile(`:([a-z_]+)`)

// Every route echo has under /api/v1 is described in openapi.json, and
// every operation there is a route: the document cannot drift.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	h := newHarness(t)
	doc := openAPIDoc(t, h)

	routes := map[string]bool{}
	for _, r := range h.e.Routes() {
		if r.Method == echo.RouteNotFound || !strings.HasPrefix(r.Path, "/api/v1/") {
			continue
		}
		path := echoParam.ReplaceAllString(strings.TrimPrefix(r.Path, "/api/v1"), "{$1}")
		routes[strings.ToUpper(r.Method)+" "+path] = true
	}
	documented := map[string]bool{}
	paths := doc["paths"].(map[string]any)
	for path, item := range paths {
		for method := range item.(map[string]any) {
			if method == "parameters" {
				continue
			}
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	for r := range routes {
		if !documented[r] {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for d := range documented {
		if !routes[d] {
			t.Errorf("openapi.json describes %s, which is not a route", d)
		}
	}
	if len(routes) < 11 {
		t.Errorf("only %d routes found; is the walk broken?", len(routes))
	}
}

// The document's own invariants: 3.1, bearer security on every operation
// but its own, every path parameter declared, every $ref resolvable, and
// every operation documenting its error responses.
func TestOpenAPIDocumentIsConsistent(t *testing.T) {
	h := newHarness(t)
	doc := openAPIDoc(t, h)
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi = %v", doc["openapi"])
	}
	scheme := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)["adminToken"].(map[string]any)
	if scheme["type"] != "http" || scheme["scheme"] != "bearer" {
		t.Fatalf("security scheme = %v", scheme)
	}

	var refs []string
	collectRefs(doc, &refs)
	for _, ref := range refs {
		if resolve(doc, ref) == nil {
			t.Errorf("unresolvable $ref %s", ref)
		}
	}

	for path, rawItem := range doc["paths"].(map[string]any) {
		item := rawItem.(map[string]any)
		declared := map[string]bool{}
		for _, p := range asList(item["parameters"]) {
			declared[paramName(doc, p)] = true
		}
		for method, rawOp := range item {
			if method == "parameters" {
				continue
			}
			op := rawOp.(map[string]any)
			for _, p := range asList(op["parameters"]) {
				declared[paramName(doc, p)] = true
			}
			for _, m := range regexp.MustCompile(`\{([a-z_]+)\}`).FindAllStringSubmatch(path, -1) {
				if !declared[m[1]] {
					t.Errorf("%s %s: path parameter %s is not declared", method, path, m[1])
				}
			}
			responses := op["responses"].(map[string]any)
			if path == "/openapi.json" {
				if sec, ok := op["security"].([]any); !ok || len(sec) != 0 {
					t.Errorf("openapi.json must be public (security: [])")
				}
				continue
			}
			if _, overridden := op["security"]; overridden {
				t.Errorf("%s %s overrides the bearer security", method, path)
			}
			for _, status := range []string{"401", "500"} {
				if _, ok := responses[status]; !ok {
					t.Errorf("%s %s does not document %s", method, path, status)
				}
			}
			if op["operationId"] == nil {
				t.Errorf("%s %s has no operationId", method, path)
			}
		}
	}
	if doc["security"] == nil {
		t.Error("no global security requirement")
	}
}

func collectRefs(v any, refs *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "$ref" {
				*refs = append(*refs, s)
			}
			collectRefs(x, refs)
		}
	case []any:
		for _, x := range v {
			collectRefs(x, refs)
		}
	}
}

// resolve follows a local "#/a/b" reference.
func resolve(doc map[string]any, ref string) any {
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	var cur any = doc
	for _, part := range strings.Split(ref[2:], "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func paramName(doc map[string]any, p any) string {
	m := p.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		m, _ = resolve(doc, ref).(map[string]any)
	}
	name, _ := m["name"].(string)
	return name
}

// The error codes the document lists are the ones the API uses.
func TestOpenAPIErrorCodes(t *testing.T) {
	h := newHarness(t)
	doc := openAPIDoc(t, h)
	raw, _ := json.Marshal(resolve(doc, "#/components/schemas/Error/properties/error/properties/code/enum"))
	var codes []string
	if err := json.Unmarshal(raw, &codes); err != nil {
		t.Fatal(err)
	}
	want := []string{"conflict", "credential_rejected", "internal", "invalid_request", "method_not_allowed",
		"not_found", "unauthorized", "unavailable", "upstream_unreachable"}
	slices.Sort(codes)
	if !slices.Equal(codes, want) {
		t.Errorf("documented codes = %v, want %v", codes, want)
	}
}
