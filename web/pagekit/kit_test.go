package pagekit

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func newKit(t testing.TB, base string) *Kit {
	t.Helper()
	k, err := New(base)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestNewRefusesABaseThatIsNotAnHTTPURL(t *testing.T) {
	for _, base := range []string{"", "erpgate.example.com", "ftp://erpgate.example.com", "https://"} {
		if _, err := New(base); err == nil {
			t.Errorf("New(%q) accepted it", base)
		}
	}
}

func TestRenderWrapsThePageInTheLayoutWithTheHeaders(t *testing.T) {
	k := newKit(t, "https://gw.example/prefix/")
	page := k.MustParse(fstest.MapFS{"hello.html": {Data: []byte(`{{define "title"}}Hello {{.}}{{end}}{{define "main"}}<p id="x">Hi {{.}}</p>{{end}}`)}}, "hello.html")
	rec := httptest.NewRecorder()
	if err := k.Render(rec, http.StatusTeapot, page, "<Ann>", Options{FormAction: []string{"'self'", "https://client.example"}}); err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`<html lang="en">`,
		"<title>Hello &lt;Ann&gt; — erpgate</title>",
		`<p id="x">Hi &lt;Ann&gt;</p>`,
		`href="https://gw.example/prefix/assets/erpgate.css?v=` + stylesheetVersion + `"`,
		`href="https://gw.example/prefix/"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
	if rec.Code != http.StatusTeapot {
		t.Errorf("status %d", rec.Code)
	}
	want := "default-src 'none'; style-src 'self' https://gw.example; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action 'self' https://client.example"
	if got := rec.Header().Get("Content-Security-Policy"); got != want {
		t.Errorf("CSP\n got %s\nwant %s", got, want)
	}
	for name, want := range map[string]string{
		"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
		"Cache-Control": "no-store", "Content-Type": "text/html; charset=utf-8",
	} {
		if got := rec.Header().Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestAPageWithoutFormsMayPostNowhere(t *testing.T) {
	k := newKit(t, "http://127.0.0.1:8080")
	if csp := k.CSP(nil); !strings.HasSuffix(csp, "form-action 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("CSP %s", csp)
	}
}

func TestParseRefusesAPageWithoutTitleOrMain(t *testing.T) {
	k := newKit(t, "https://gw.example")
	fsys := fstest.MapFS{"half.html": {Data: []byte(`{{define "main"}}x{{end}}`)}}
	if _, err := k.Parse(fsys, "half.html"); err == nil || !strings.Contains(err.Error(), `"title"`) {
		t.Errorf("Parse = %v", err)
	}
}

func TestAFailingPageBecomesTheErrorPage(t *testing.T) {
	k := newKit(t, "https://gw.example")
	page := k.MustParse(fstest.MapFS{"bad.html": {Data: []byte(`{{define "title"}}t{{end}}{{define "main"}}{{.Missing}}{{end}}`)}}, "bad.html")
	rec := httptest.NewRecorder()
	if err := k.Render(rec, http.StatusOK, page, struct{}{}, Options{}); err == nil {
		t.Fatal("Render reported no error")
	}
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "Something went wrong") || strings.Contains(rec.Body.String(), "Missing") {
		t.Errorf("HTTP %d: %s", rec.Code, rec.Body)
	}
}

func TestErrorPageSaysWhatToDoAndEscapes(t *testing.T) {
	k := newKit(t, "https://gw.example")
	rec := httptest.NewRecorder()
	ref := NewReference()
	err := k.RenderError(rec, http.StatusBadGateway, ErrorPage{
		Title: "The ERP did not answer", Message: "erpgate could not reach <b>the ERP</b>.",
		Causes: []string{"It is down."}, Next: "Try again later.", Reference: ref,
	})
	if err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	for _, want := range []string{"<h1>The ERP did not answer</h1>", "&lt;b&gt;the ERP&lt;/b&gt;", "<li>It is down.</li>", "Try again later.", "<code>" + ref + "</code>", `role="alert"`} {
		if !strings.Contains(body, want) {
			t.Errorf("error page lacks %q:\n%s", want, body)
		}
	}
	if rec.Code != http.StatusBadGateway {
		t.Errorf("status %d", rec.Code)
	}
}

func TestNewReferenceIsShortAndVaries(t *testing.T) {
	a, b := NewReference(), NewReference()
	if len(a) != 9 || a[4] != '-' || a == b || strings.ContainsAny(a, "01ILO") {
		t.Errorf("references %q, %q", a, b)
	}
}

func TestCSRFTokenIsBoundToCookieAndPurpose(t *testing.T) {
	tok := CSRFToken("cookie-a", "flow-1")
	if !CheckCSRF("cookie-a", "flow-1", tok) {
		t.Fatal("the right token was refused")
	}
	for _, bad := range [][3]string{
		{"cookie-b", "flow-1", tok}, {"cookie-a", "flow-2", tok}, {"cookie-a", "flow-1", ""},
		{"cookie-a", "flow-1", tok + "x"}, {"", "flow-1", CSRFToken("", "flow-1")},
	} {
		if CheckCSRF(bad[0], bad[1], bad[2]) {
			t.Errorf("CheckCSRF%q passed", bad)
		}
	}
}

func TestCookiesAreHostBoundOverHTTPS(t *testing.T) {
	c := newKit(t, "https://gw.example").Cookie("erpgate_x", "v", time.Minute)
	if c.Name != "__Host-erpgate_x" || !c.Secure || !c.HttpOnly || c.Path != "/" || c.Domain != "" || c.SameSite != http.SameSiteLaxMode || c.MaxAge != 60 {
		t.Errorf("https cookie %+v", c)
	}
	d := newKit(t, "http://127.0.0.1:8080").Cookie("erpgate_x", "v", time.Minute)
	if d.Name != "erpgate_x" || d.Secure || !d.HttpOnly {
		t.Errorf("http cookie %+v", d)
	}
	if gone := newKit(t, "https://gw.example").Cookie("erpgate_x", "v", 0); gone.MaxAge >= 0 || gone.Value != "" {
		t.Errorf("deleting cookie %+v", gone)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(&http.Cookie{Name: "erpgate_x", Value: "plain"})
	if _, ok := newKit(t, "https://gw.example").ReadCookie(r, "erpgate_x"); ok {
		t.Error("over https the plain-named cookie was read")
	}
}

func TestStylesheetIsServedFromTheBinary(t *testing.T) {
	srv := httptest.NewServer(StylesheetHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + StylesheetPath + "?v=" + stylesheetVersion)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/css; charset=utf-8" || !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
		t.Errorf("HTTP %d %v", resp.StatusCode, resp.Header)
	}
	if strings.Contains(string(stylesheet), "@import") || strings.Contains(string(stylesheet), "url(") {
		t.Error("the stylesheet loads something else")
	}
}

// FuzzErrorPage: whatever text an error page is given, it is shown as
// text: no markup of its own reaches the page.
func FuzzErrorPage(f *testing.F) {
	k := newKit(f, "https://gw.example")
	f.Add("Title", "<script>alert(1)</script>", "next", "ref")
	f.Add("\"><img src=x>", "a & b", "</main>", "K7QM-4XD2")
	f.Fuzz(func(t *testing.T, title, msg, next, ref string) {
		rec := httptest.NewRecorder()
		if err := k.RenderError(rec, http.StatusBadRequest, ErrorPage{Title: title, Message: msg, Next: next, Reference: ref}); err != nil {
			t.Fatal(err)
		}
		body := rec.Body.String()
		for _, tag := range []string{"<script", "<img", "</main>\n</main>"} {
			if strings.Count(body, tag) > strings.Count(k.errorPageSkeleton(t), tag) {
				t.Fatalf("%q reached the page: %s", tag, body)
			}
		}
	})
}

// errorPageSkeleton is the error page with empty fields.
func (k *Kit) errorPageSkeleton(t *testing.T) string {
	rec := httptest.NewRecorder()
	if err := k.RenderError(rec, http.StatusBadRequest, ErrorPage{}); err != nil {
		t.Fatal(err)
	}
	return rec.Body.String()
}

// Only a page that asks for the kit's script may run a script, and then
// only files from erpgate itself: never inline code.
func TestOnlyAScriptPageMayRunTheKitScript(t *testing.T) {
	k := newKit(t, "https://gw.example")
	with := k.policy(Options{Script: true})
	if !strings.Contains(with, "script-src 'self' https://gw.example;") || strings.Contains(with, "unsafe-inline") {
		t.Errorf("script page CSP %s", with)
	}
	if without := k.policy(Options{}); strings.Contains(without, "script-src") {
		t.Errorf("plain page CSP %s", without)
	}
	rec := httptest.NewRecorder()
	ScriptHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, ScriptPath+"?v="+scriptVersion, nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/javascript; charset=utf-8" || !strings.Contains(rec.Body.String(), "data-copy") {
		t.Errorf("script: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
}

func TestWithPartialsAddsTemplatesAndBlocks(t *testing.T) {
	k := newKit(t, "https://gw.example")
	wide, err := k.WithPartials(fstest.MapFS{"parts.html": {Data: []byte(`{{define "bodyclass"}}wide{{end}}{{define "nav"}}<nav>N</nav>{{end}}{{define "part"}}<b>P</b>{{end}}`)}}, "parts.html")
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{"p.html": {Data: []byte(`{{define "title"}}T{{end}}{{define "main"}}{{template "part" .}}{{end}}`)}}
	rec := httptest.NewRecorder()
	if err := wide.Render(rec, http.StatusOK, wide.MustParse(fsys, "p.html"), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<body class="wide">`, `erpgate</a><nav>N</nav></header>`, `<b>P</b>`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("page lacks %q:\n%s", want, rec.Body)
		}
	}
	// The kit it came from is unchanged.
	rec = httptest.NewRecorder()
	plain := fstest.MapFS{"q.html": {Data: []byte(`{{define "title"}}T{{end}}{{define "main"}}x{{end}}`)}}
	if err := k.Render(rec, http.StatusOK, k.MustParse(plain, "q.html"), nil, Options{}); err != nil {
		t.Fatal(err)
	}
	if body := rec.Body.String(); !strings.Contains(body, `<body class="">`) || strings.Contains(body, "<nav>") {
		t.Errorf("the original kit changed:\n%s", body)
	}
	if _, err := k.WithPartials(fstest.MapFS{}, "missing.html"); err == nil {
		t.Error("WithPartials accepted a pattern matching nothing")
	}
}

func TestHasLongWord(t *testing.T) {
	for s, want := range map[string]bool{
		"":                                 false,
		"Commercial":                       false,
		"All Territories and more words":   false,
		"ap@acme.example":                  false,
		strings.Repeat("x", LongWord-1):    false,
		strings.Repeat("x", LongWord):      true,
		"to " + strings.Repeat("é", 30):    true,
		strings.Repeat("ab ", 40):          false,
		"accountspayable.accountspayable@": true,
	} {
		if got := HasLongWord(s); got != want {
			t.Errorf("HasLongWord(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestPagesMarkACellWithALongWord(t *testing.T) {
	k := newKit(t, "https://gw.example")
	page := k.MustParse(fstest.MapFS{"p.html": {Data: []byte(`{{define "title"}}T{{end}}{{define "main"}}{{range .}}<td{{if long .}} class="long"{{end}}>{{.}}</td>{{end}}{{end}}`)}}, "p.html")
	body, err := k.RenderBody(page, []string{"short", strings.Repeat("accountspayable.", 3) + "@x.example"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `<td>short</td><td class="long">accountspayable.`) {
		t.Errorf("cells:\n%s", body)
	}
}

func TestCountGroupsThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
