package main

import (
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// MCP4Acumatica served its tool reference at /docs; people who set up an
// AI client or run a site have no source checkout, so erpgate serves its
// tool catalogue as a page too. The page is the registry the engine
// serves: every kind, every tool with its effect, its whole description
// and each argument with its description.
func TestToolReferencePageIsTheRegistry(t *testing.T) {
	gw := startGateway(t, "", nil)
	reg, err := newRegistry()
	if err != nil {
		t.Fatal(err)
	}

	status, header, raw := getPage(t, gw.URL+"/docs/tools")
	if status != http.StatusOK || !strings.HasPrefix(header.Get("Content-Type"), "text/html") {
		t.Fatalf("/docs/tools = %d %s", status, header.Get("Content-Type"))
	}
	if !strings.Contains(header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("/docs/tools has no page-kit headers: %v", header)
	}
	// The page shows a description's `code` spans as code: compare text.
	body := html.UnescapeString(regexp.MustCompile(`</?code>`).ReplaceAllString(raw, ""))
	for _, kind := range reg.Kinds() {
		tools := reg.Tools(kind)
		if len(tools) == 0 {
			t.Fatalf("the registry has no %s tools", kind)
		}
		if !strings.Contains(raw, `id="`+kind+`"`) {
			t.Errorf("no section for %s", kind)
		}
		for _, tool := range tools {
			anchor := `id="` + kind + "-" + tool.Name + `"`
			start := strings.Index(body, anchor)
			if start < 0 {
				t.Errorf("%s: no entry for %s", kind, tool.Name)
				continue
			}
			section := body[start:]
			if end := strings.Index(section[len(anchor):], `<h3 id="`); end >= 0 {
				section = section[:len(anchor)+end]
			}
			for _, want := range []string{tool.Name, tool.Effect.String(), strings.ReplaceAll(tool.Description, "`", "")} {
				if !strings.Contains(section, want) {
					t.Errorf("%s %s: the entry lacks %q", kind, tool.Name, want)
				}
			}
			for name, p := range tool.Input.Properties {
				if !strings.Contains(section, name) || !strings.Contains(section, strings.ReplaceAll(p.Description, "`", "")) {
					t.Errorf("%s %s: argument %s or its description is missing", kind, tool.Name, name)
				}
			}
			if len(tool.Input.Properties) == 0 && !strings.Contains(section, "No arguments.") {
				t.Errorf("%s %s: a tool without arguments does not say so", kind, tool.Name)
			}
		}
	}

	// The landing page links it, and /docs leads there.
	if _, _, landing := getPage(t, gw.URL+"/"); !strings.Contains(landing, `href="`+gw.URL+`/docs/tools"`) {
		t.Errorf("the landing page does not link the tool reference")
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(gw.URL + "/docs")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != gw.URL+"/docs/tools" {
		t.Errorf("/docs = %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// getPage GETs url as a browser would and returns the status, headers and
// body.
func getPage(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}
