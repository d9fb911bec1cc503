package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestAccessLogNamesRoutesNotCapabilities: the access line of each
// request names the route it matched, never the address as sent. An
// approval link and a registration's address carry an id with its check
// value in the path, and an address erpgate does not have is whatever
// its sender chose; none of them may reach the log (the ids alone may:
// the audit names a registration by its id), while each request still
// has its line with the route's shape.
func TestAccessLogNamesRoutesNotCapabilities(t *testing.T) {
	gw, _, link := salesOrderAwaitingAlice(t)
	ref := link[strings.LastIndexByte(link, '/')+1:]
	_, check, tagged := strings.Cut(ref, ".")
	if !tagged || check == "" {
		t.Fatalf("the approval link %s has no check value", link)
	}
	html := map[string]string{"Accept": "text/html"}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if status, _, page := sendForm(t, hc, http.MethodGet, link, nil, html); status != http.StatusOK {
		t.Fatalf("GET the approval link: %d %s", status, pageText(page))
	}
	// An address under the link that erpgate does not have.
	if status, _, _ := sendForm(t, hc, http.MethodGet, link+"/no-such-step", nil, html); status != http.StatusNotFound {
		t.Fatalf("GET an unknown step of the approval link: %d, want 404", status)
	}

	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	registrant := newRegistrationClient(t, gw.URL)
	regPath := registrant.startRegistration(sim.URL)
	if status, _, page := registrant.do(http.MethodGet, regPath, nil, html); status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", regPath, status, pageText(page))
	}
	regRef := regPath[strings.LastIndexByte(regPath, '/')+1:]
	regID, regCheck, _ := strings.Cut(regRef, ".")
	if regID == "" || regCheck == "" {
		t.Fatalf("the registration's address %s has no check value", regPath)
	}

	// A made-up address: long, and with a line break of its own.
	const marker = "made-up-address-7d1e"
	junk := "/" + strings.Repeat("x", 4000) + "/" + marker + "%0A%7B%22msg%22:%22forged%22%7D"
	if status, _, _ := sendForm(t, hc, http.MethodGet, gw.URL+junk, nil, nil); status != http.StatusNotFound {
		t.Fatalf("GET a made-up address: %d, want 404", status)
	}

	logs := gw.Logs.String()
	for what, s := range map[string]string{
		"approval link":                       ref,
		"approval link's check value":         check,
		"registration's address":              regRef,
		"registration's check value":          regCheck,
		"made-up address":                     marker,
		"a run of the made-up address's text": strings.Repeat("x", 100),
	} {
		for _, l := range strings.Split(logs, "\n") {
			if strings.Contains(l, s) {
				t.Errorf("the logs contain the %s (%q): %.600s", what, s, l)
			}
		}
	}
	for _, want := range []string{
		`"msg":"http_request","method":"GET","path":"/approve/:id","status":200`,
		`"msg":"http_request","method":"POST","path":"/register","status":303`,
		`"msg":"http_request","method":"GET","path":"/register/:id","status":200`,
		`"msg":"http_request","method":"GET","path":"/*","status":404`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("no access line %s", want)
		}
	}
	if t.Failed() {
		var lines []string
		for _, l := range strings.Split(logs, "\n") {
			if strings.Contains(l, `"http_request"`) {
				lines = append(lines, l[:min(len(l), 300)])
			}
		}
		t.Logf("access lines:\n%s", strings.Join(lines, "\n"))
	}
}
