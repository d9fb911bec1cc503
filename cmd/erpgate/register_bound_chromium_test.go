package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

var (
	tryAgainIn   = regexp.MustCompile(`Try again in (a minute|\d+ minutes)\.`)
	orTryAgainIn = regexp.MustCompile(`, or try again in (a minute|\d+ minutes)\.`)
)

// inMinutes reports whether s, "N minutes", has N from lo to hi.
func inMinutes(s string, lo, hi int) bool {
	n, err := strconv.Atoi(strings.TrimSuffix(s, " minutes"))
	return err == nil && n >= lo && n <= hi
}

// oneRegistrationWaiting is a registration in Chromium on a gateway of
// env, where one registration of sim, the Frappe simulator, waits to be
// finished: started from 127.0.0.1, where the browser is too (one
// network).
func oneRegistrationWaiting(t *testing.T, env map[string]string) (r *registration, sim *frappetest.Server) {
	t.Helper()
	needChromium(t)
	sim = frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	r = &registration{t: t, gw: startGateway(t, "", env), ctx: newChromiumWithin(t, time.Minute)}
	r.docs = recordDocumentResponses(t, r.ctx)
	newRegistrationClient(t, r.gw.URL).startRegistration(sim.URL)
	return r, sim
}

// TestChromiumRegistrationRefusedWhileTooManyWait: with the deployment's
// registrations waiting to be finished at their bound, a person starting
// one on a phone is told so in a plain sentence, on a page that fits the
// screen, with when to try again. Its screenshot goes to
// ERPGATE_TEST_SCREENSHOTS.
func TestChromiumRegistrationRefusedWhileTooManyWait(t *testing.T) {
	r, sim := oneRegistrationWaiting(t, map[string]string{"ERPGATE_REGISTRATION_MAX_PENDING": "1"})

	viewAt(t, r.ctx, phoneWidth, phoneHeight)
	r.start("frappe", "Acme Ltd", sim.URL, nil)
	waitForTitle(t, r.ctx, "Too many registrations are waiting")
	r.shot("too-many-waiting")
	r.kitChecks("the refusal")
	fitsTheScreen(t, r.ctx, "the refusal on a phone")
	h, _ := r.docs.last("/register")
	if h.status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("the refusal: %d, Retry-After %q", h.status, h.Get("Retry-After"))
	}
	text := r.text()
	if want := "Too many registrations are waiting to be finished on this erpgate, so yours could not begin. Nothing was saved."; !strings.Contains(text, want) {
		t.Errorf("the refusal lacks %q:\n%s", want, text)
	}
	// The one waiting closes within the 30 minutes a registration stays
	// open.
	if m := tryAgainIn.FindStringSubmatch(text); m == nil || m[1] != "a minute" && !inMinutes(m[1], 2, 30) {
		t.Errorf("the refusal does not say to try again within 30 minutes:\n%s", text)
	}
	if n := r.count(`SELECT count(*) FROM pending_registrations`); n != 1 {
		t.Errorf("%d registrations stored; the refused one added one", n)
	}
}

// TestChromiumRegistrationRefusedWhileTooManyWaitFromTheNetwork: with
// as many registrations started from the person's network waiting as one
// network may keep, a person starting one is told so in plain sentences,
// on a page that fits a phone's screen and a desktop's, with what to do
// and when to try again; nothing is stored. Its screenshots go to
// ERPGATE_TEST_SCREENSHOTS.
func TestChromiumRegistrationRefusedWhileTooManyWaitFromTheNetwork(t *testing.T) {
	r, sim := oneRegistrationWaiting(t, map[string]string{"ERPGATE_REGISTRATION_MAX_PENDING_PER_NETWORK": "1"})

	r.networkRefusals(t, sim.URL, "too-many-from-the-network-", func(screen, text string) {
		for _, want := range []string{
			"Too many registrations started from your network are waiting to be finished, so yours could not begin. Nothing was saved.",
			"Finish a registration already started from your network, or try again in ",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("the refusal on a %s lacks %q:\n%s", screen, want, text)
			}
		}
		// The one waiting closes within the 30 minutes a registration
		// stays open.
		if m := orTryAgainIn.FindStringSubmatch(text); m == nil || m[1] != "a minute" && !inMinutes(m[1], 2, 30) {
			t.Errorf("the refusal on a %s does not say to try again within 30 minutes:\n%s", screen, text)
		}
	})
	if n := r.count(`SELECT count(*) FROM pending_registrations`); n != 1 {
		t.Errorf("%d registrations stored; the refused ones added some", n)
	}
}

// TestChromiumRegistrationRefusedAfterAddressesThatDidNotAnswer: with the
// person's network's places held by a start whose address did not answer
// as an ERP, a person starting one is told, in plain sentences on a page
// that fits a phone's screen and a desktop's, that such starts count,
// what to check and when to try again; nothing is stored. Its
// screenshots go to ERPGATE_TEST_SCREENSHOTS.
func TestChromiumRegistrationRefusedAfterAddressesThatDidNotAnswer(t *testing.T) {
	needChromium(t)
	notAnERP := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notAnERP.Close)
	sim := frappetest.NewServer(frappetest.Options{})
	t.Cleanup(sim.Close)
	r := &registration{t: t, gw: startGateway(t, "", map[string]string{"ERPGATE_REGISTRATION_MAX_PENDING_PER_NETWORK": "1"}),
		ctx: newChromiumWithin(t, time.Minute)}
	r.docs = recordDocumentResponses(t, r.ctx)
	b := newRegistrationClient(t, r.gw.URL)
	form := url.Values{"csrf": {b.csrf("/register")}, "kind": {"frappe"}, "display_name": {"Not an ERP"}, "base_url": {notAnERP.URL}}
	if status, _, page := b.do(http.MethodPost, "/register", form, nil); status != http.StatusBadGateway {
		t.Fatalf("a start naming an address that is no ERP: %d %s", status, pageText(page))
	}

	r.networkRefusals(t, sim.URL, "too-many-unanswered-from-the-network-", func(screen, text string) {
		if want := "Too many registrations were started from your network, counting those of the last 5 minutes whose address did not answer as an ERP, so yours could not begin. Nothing was saved."; !strings.Contains(text, want) {
			t.Errorf("the refusal on a %s lacks %q:\n%s", screen, want, text)
		}
		if m := regexp.MustCompile(`Check the ERP's address, then try again in (a minute|\d+ minutes)\.`).FindStringSubmatch(text); m == nil || m[1] != "a minute" && !inMinutes(m[1], 2, 5) {
			// The one place is the unanswered start's, held 5 minutes.
			t.Errorf("the refusal on a %s does not say to check the address and try again within 5 minutes:\n%s", screen, text)
		}
	})
	if n := r.count(`SELECT count(*) FROM pending_registrations`); n != 1 {
		t.Errorf("%d rows stored; want only the place the unanswered start holds", n)
	}
}

// networkRefusals starts a registration of the ERP at erpURL on a phone's
// screen and a desktop's, each refused because the person's network holds
// its places, and checks each refusal as every one must be: a 429 with
// Retry-After, on a page that fits the screen, kept as a screenshot named
// shot and the screen's name. check reads the page's text for the words
// its case needs.
func (r *registration) networkRefusals(t *testing.T, erpURL, shot string, check func(screen, text string)) {
	t.Helper()
	for _, screen := range []struct {
		name          string
		width, height int64
	}{{"phone", phoneWidth, phoneHeight}, {"desktop", desktopWidth, desktopHeight}} {
		viewAt(t, r.ctx, screen.width, screen.height)
		r.start("frappe", "Acme Ltd", erpURL, nil)
		waitForTitle(t, r.ctx, "Too many registrations from your network")
		r.shot(shot + screen.name)
		r.kitChecks("the refusal on a " + screen.name)
		fitsTheScreen(t, r.ctx, "the refusal on a "+screen.name)
		h, _ := r.docs.last("/register")
		if h.status != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
			t.Errorf("the refusal on a %s: %d, Retry-After %q", screen.name, h.status, h.Get("Retry-After"))
		}
		check(screen.name, r.text())
	}
}
