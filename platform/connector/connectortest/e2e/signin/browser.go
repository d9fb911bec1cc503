// Package signin plays the person in erpgate's OAuth sign-in, for the
// end-to-end tests and the benchmark: a cookie-keeping browser that follows
// redirects and fills in the forms it meets (the ERP's login and confirm
// pages, erpgate's "which ERP" and consent pages) until it is sent to the
// MCP client's redirect URI.
package signin

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// Browser is one person's browser.
type Browser struct {
	HC          *http.Client
	RedirectURI string
	// Fields are typed into inputs of that name (usr, pwd, erp_url, …).
	Fields map[string]string
	// Decision is the consent button pressed: "accept" or "deny".
	Decision string
	// Avoid, when set, names the form actions the browser does not send:
	// a page whose form is one ends the run, as a page without a form does.
	Avoid func(action string) bool
	// Pages records each page shown, for assertions.
	Pages []Page
}

// Page is one page the browser was shown.
type Page struct {
	Status int
	URL    string
	Body   string
}

// NewBrowser returns a browser with an empty cookie jar that accepts
// consent.
func NewBrowser(redirectURI string, fields map[string]string) *Browser {
	jar, _ := cookiejar.New(nil) // never fails without options
	return &Browser{
		RedirectURI: redirectURI, Fields: fields, Decision: "accept",
		HC: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

// run navigates from a request until the browser is sent to the redirect
// URI, and returns that URL. A page without a form to submit ends the run
// with an error describing the page.
func (b *Browser) Run(ctx context.Context, method, target string, form url.Values) (*url.URL, error) {
	// A person who gets the same form back after sending it reads the page
	// instead of sending it again.
	sent := map[string]bool{}
	for step := 0; step < 25; step++ {
		if strings.HasPrefix(target, b.RedirectURI) {
			return url.Parse(target)
		}
		var body io.Reader
		if form != nil && method == http.MethodPost {
			body = strings.NewReader(form.Encode())
		} else if form != nil {
			u, err := url.Parse(target)
			if err != nil {
				return nil, err
			}
			u.RawQuery = form.Encode()
			target = u.String()
		}
		req, err := http.NewRequestWithContext(ctx, method, target, body)
		if err != nil {
			return nil, err
		}
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := b.HC.Do(req)
		if err != nil {
			return nil, err
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		b.Pages = append(b.Pages, Page{Status: resp.StatusCode, URL: target, Body: string(raw)})
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			next, err := req.URL.Parse(loc)
			if err != nil {
				return nil, err
			}
			method, target, form = http.MethodGet, next.String(), nil
			continue
		}
		f, ok := b.formOf(string(raw), req.URL)
		if ok && b.Avoid != nil && b.Avoid(f.action) {
			ok = false
		}
		if !ok {
			return nil, fmt.Errorf("stopped at %s (HTTP %d): %s", target, resp.StatusCode, PageText(string(raw)))
		}
		key := f.method + " " + f.action + "?" + f.values.Encode()
		if sent[key] {
			return nil, fmt.Errorf("stopped at %s (HTTP %d), which answered its own form again: %s", target, resp.StatusCode, PageText(string(raw)))
		}
		sent[key] = true
		method, target, form = f.method, f.action, f.values
	}
	return nil, fmt.Errorf("too many steps")
}

// LastPage returns the last page shown.
func (b *Browser) LastPage() Page {
	if len(b.Pages) == 0 {
		return Page{}
	}
	return b.Pages[len(b.Pages)-1]
}

type htmlForm struct {
	method, action string
	values         url.Values
}

// formOf finds the page's first form and fills it in: hidden inputs as
// they are, known fields from b.fields, and the submit button whose value
// is b.Decision (else the first one).
func (b *Browser) formOf(page string, base *url.URL) (htmlForm, bool) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return htmlForm{}, false
	}
	var form *html.Node
	var find func(n *html.Node)
	find = func(n *html.Node) {
		if form != nil {
			return
		}
		if n.Type == html.ElementNode && n.Data == "form" {
			form = n
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c)
		}
	}
	find(doc)
	if form == nil {
		return htmlForm{}, false
	}
	f := htmlForm{method: strings.ToUpper(attr(form, "method")), values: url.Values{}}
	if f.method == "" {
		f.method = http.MethodGet
	}
	action, err := base.Parse(attr(form, "action"))
	if err != nil {
		return htmlForm{}, false
	}
	f.action = action.String()
	var buttons [][2]string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			name := attr(n, "name")
			switch {
			case n.Data == "input" && attr(n, "type") != "submit" && name != "":
				v := attr(n, "value")
				if typed, ok := b.Fields[name]; ok {
					v = typed
				}
				f.values.Set(name, v)
			case n.Data == "button" && name != "":
				buttons = append(buttons, [2]string{name, attr(n, "value")})
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(form)
	if len(buttons) > 0 {
		pick := buttons[0]
		for _, btn := range buttons {
			if btn[1] == b.Decision || (b.Decision == "accept" && btn[1] == "yes") {
				pick = btn
			}
		}
		f.values.Set(pick[0], pick[1])
	}
	return f, true
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// PageText is a page's visible text, shortened, for failure messages.
func PageText(page string) string {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return page
	}
	var sb strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "style" || n.Data == "script") {
			return
		}
		if n.Type == html.TextNode {
			sb.WriteString(strings.TrimSpace(n.Data) + " ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	s := strings.Join(strings.Fields(sb.String()), " ")
	if len(s) > 400 {
		s = s[:400]
	}
	return s
}
