package acumaticatest

import (
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

var (
	reHiddenRequest = regexp.MustCompile(`name="` + FormRequest + `" value="([^"]*)"`)
	reFormAction    = regexp.MustCompile(`<form [^>]*action="([^"]*)"`)
)

// formAction resolves the action of the page's form against base, as a
// browser would.
func formAction(base *url.URL, page string) (string, error) {
	m := reFormAction.FindStringSubmatch(page)
	if m == nil {
		return "", errors.New("acumaticatest: the page has no form action")
	}
	ref, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		return "", err
	}
	return base.ResolveReference(ref).String(), nil
}

// CompleteAuthorization plays the user in the authorization-code flow:
// it opens authorizeURL (an /identity/connect/authorize URL built by the
// code under test), submits the sign-in form with the credentials,
// approves the consent page and returns the redirect to the client's
// redirect_uri (carrying code, scope and state, or error) without
// following it. client may be nil.
func CompleteAuthorization(client *http.Client, authorizeURL, username, password string) (*url.URL, error) {
	if client == nil {
		client = &http.Client{}
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	base, err := url.Parse(authorizeURL)
	if err != nil {
		return nil, err
	}
	resp, err := c.Get(authorizeURL)
	if err != nil {
		return nil, err
	}
	page, loc, err := readPage(resp)
	if err != nil || loc != nil {
		return loc, err
	}
	req := reHiddenRequest.FindStringSubmatch(page)
	if req == nil {
		return nil, errors.New("acumaticatest: no sign-in form in the authorize response")
	}
	form := url.Values{FormRequest: {req[1]}, FormUsername: {username}, FormPassword: {password}}
	action, err := formAction(base, page)
	if err != nil {
		return nil, err
	}
	resp, err = c.PostForm(action, form)
	if err != nil {
		return nil, err
	}
	if page, loc, err = readPage(resp); err != nil || loc != nil {
		return loc, err
	}
	if strings.Contains(page, `id="error"`) {
		return nil, errors.New("acumaticatest: sign-in rejected: invalid credentials")
	}
	req = reHiddenRequest.FindStringSubmatch(page)
	if req == nil {
		return nil, errors.New("acumaticatest: no consent form after sign-in")
	}
	if action, err = formAction(base, page); err != nil {
		return nil, err
	}
	resp, err = c.PostForm(action,
		url.Values{FormRequest: {req[1]}, FormButton: {"yes"}})
	if err != nil {
		return nil, err
	}
	_, loc, err = readPage(resp)
	if err == nil && loc == nil {
		err = errors.New("acumaticatest: consent did not redirect")
	}
	return loc, err
}

// readPage returns the body of a 200 page or the Location of a redirect.
func readPage(resp *http.Response) (string, *url.URL, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", nil, err
	}
	switch {
	case resp.StatusCode == http.StatusFound || resp.StatusCode == http.StatusSeeOther:
		loc, err := resp.Location()
		return "", loc, err
	case resp.StatusCode != http.StatusOK:
		return "", nil, fmt.Errorf("acumaticatest: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return string(b), nil, nil
}
