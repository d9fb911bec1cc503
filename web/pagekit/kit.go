package pagekit

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

//go:embed templates/*.html
var kitTemplates embed.FS

// Kit renders pages for one public base URL.
type Kit struct {
	base   string // public base URL, no trailing slash
	origin string // scheme://host of base
	secure bool   // base is https: cookies are Secure and __Host-
	layout *template.Template
	errorP *Page
}

// Page is a page template parsed into the layout. A page file defines the
// templates "title" (the text before " — erpgate" in the tab) and "main"
// (the page's content).
type Page struct {
	t *template.Template
}

// New builds the kit for the public base URL, an absolute http or https
// URL such as https://erpgate.example.com.
func New(publicBaseURL string) (*Kit, error) {
	base := strings.TrimRight(publicBaseURL, "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pagekit: the public base URL must be an absolute http or https URL, got %q", publicBaseURL)
	}
	k := &Kit{base: base, origin: originOf(u), secure: u.Scheme == "https"}
	k.layout, err = template.New("layout.html").Funcs(template.FuncMap{
		"url":        k.URL,
		"stylesheet": func() string { return k.URL(StylesheetPath) + "?v=" + stylesheetVersion },
		"script":     func() string { return k.URL(ScriptPath) + "?v=" + scriptVersion },
		"long":       HasLongWord,
		"count":      Count,
	}).ParseFS(kitTemplates, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("pagekit: layout: %w", err)
	}
	if k.errorP, err = k.Parse(kitTemplates, "templates/error.html"); err != nil {
		return nil, err
	}
	return k, nil
}

// originOf is the origin of u as a browser sends it in an Origin header:
// scheme://host[:port], without the scheme's default port. The page kit
// imports nothing of erpgate's, so this is its own copy of config.Origin's
// rule; TestCrossOriginAndFormAction and TestAcceptsOrigin check both.
func originOf(u *url.URL) string {
	host := u.Host
	if p := u.Port(); (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		host = strings.TrimSuffix(host, ":"+p)
	}
	return u.Scheme + "://" + host
}

// URL joins the public base URL and path: every link a page shows is made
// with it (an advertised URL always comes from the configured base).
func (k *Kit) URL(path string) string {
	if path == "" {
		return k.base
	}
	return k.base + "/" + strings.TrimLeft(path, "/")
}

// Secure reports whether pages are served over https.
func (k *Kit) Secure() bool { return k.secure }

// Parse reads a page file from fsys into a copy of the layout.
func (k *Kit) Parse(fsys fs.FS, name string) (*Page, error) {
	t, err := k.layout.Clone()
	if err == nil {
		t, err = t.ParseFS(fsys, name)
	}
	if err != nil {
		return nil, fmt.Errorf("pagekit: page %s: %w", name, err)
	}
	for _, want := range []string{"title", "main"} {
		if t.Lookup(want) == nil {
			return nil, fmt.Errorf("pagekit: page %s defines no %q template", name, want)
		}
	}
	return &Page{t: t}, nil
}

// MustParse is Parse for package-level pages, which are known to parse.
func (k *Kit) MustParse(fsys fs.FS, name string) *Page {
	p, err := k.Parse(fsys, name)
	if err != nil {
		panic(err)
	}
	return p
}

// Options are what differs between pages in their headers.
type Options struct {
	// FormAction lists the CSP sources the page's forms may post to,
	// redirects that answer a post included (CSP applies form-action to
	// them). Empty: none. "'self'" is erpgate itself.
	FormAction []string
	// Script lets the page run the kit's script (ScriptPath: copy
	// buttons, held buttons): script-src allows erpgate's own files, never
	// inline code.
	// A page must work without it.
	Script bool
}

// Render writes the page with its headers and status. The page is rendered
// in full before anything is sent, so that a template failure becomes the
// error page instead of half a page; that failure is returned for the
// caller to log.
func (k *Kit) Render(w http.ResponseWriter, status int, p *Page, data any, opts Options) error {
	body, err := k.RenderBody(p, data)
	if err != nil {
		k.renderFallback(w)
		return err
	}
	k.SetHeaders(w.Header(), opts)
	w.WriteHeader(status)
	_, err = w.Write(body)
	return err
}

// RenderBody is the page's HTML, which Render sends: for a page whose
// data never changes, rendered once and sent with SetHeaders' headers.
func (k *Kit) RenderBody(p *Page, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := p.t.ExecuteTemplate(&buf, "layout.html", data); err != nil {
		return nil, fmt.Errorf("pagekit: render: %w", err)
	}
	return buf.Bytes(), nil
}

// renderFallback answers when a page could not be rendered: the error
// page, which has no data that can fail.
func (k *Kit) renderFallback(w http.ResponseWriter) {
	var buf bytes.Buffer
	if err := k.errorP.t.ExecuteTemplate(&buf, "layout.html", internalError()); err != nil {
		http.Error(w, "erpgate could not show this page.", http.StatusInternalServerError)
		return
	}
	k.SetHeaders(w.Header(), Options{})
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write(buf.Bytes())
}

// Count is n as a page's sentence writes it, its thousands grouped with
// commas: "1,000", "12,345".
func Count(n int) string {
	s := strconv.Itoa(n)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}

// LongWord is the length in characters from which a word may be broken
// anywhere to fit its table column: shorter ones keep their column as wide
// as they are.
const LongWord = 24

// HasLongWord reports whether s holds a word (a run of characters without
// white space) of LongWord characters or more: an e-mail address, an item
// code, a name run together. Pages give its table cell the class "long"
// (templates: {{if long .}} class="long"{{end}}), which breaks such a word
// anywhere to fit the column. Without it a table's column is at least as
// wide as its longest word, and a word of the ERP's or the model's could
// widen a table past its card and the screen, its end out of sight.
func HasLongWord(s string) bool {
	n := 0
	for _, r := range s {
		if unicode.IsSpace(r) {
			n = 0
			continue
		}
		if n++; n >= LongWord {
			return true
		}
	}
	return false
}
