package manage

import (
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/erpgate/erpgate/web/pagekit"
)

// TestOwnerSettingsRefuseBytesThatAreNotText posts the owner's settings
// form with a default company that is not UTF-8 (a bad paste, a form sent
// by a program). It is refused in a sentence naming the form's label, as
// the new-site forms refuse it, with the rest of what the owner typed
// kept in the form and the refusal in the site's recent activity; before,
// the bytes were stored as U+FFFD without a word.
func TestOwnerSettingsRefuseBytesThatAreNotText(t *testing.T) {
	for _, c := range []struct {
		name, displayName, company, want, kept string
	}{
		{"default company", "Acme renamed", "Acme \xff Ltd", "Default company is not valid text.", "Acme renamed"},
		{"display name", "Acme \xff renamed", "Acme Ltd", "Display name is not valid text.", ""},
	} {
		t.Run(c.name, func(t *testing.T) { ownerSettingsRefused(t, c.displayName, c.company, c.want, c.kept) })
	}
}

// ownerSettingsRefused posts the owner's settings form with displayName
// and company, and checks the refusal says want, keeps the name typed as
// kept (when not empty), changes nothing and is recorded.
func ownerSettingsRefused(t *testing.T, displayName, company, want, kept string) {
	p := newPages(t)
	session := p.session(p.acme, "admin@example.com")
	rec := httptest.NewRecorder()
	key := p.h.csrfKey(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	csrfCookie := rec.Result().Cookies()[0]
	form := url.Values{
		"csrf":                    {pagekit.CSRFToken(key, csrfPurpose(p.acme))},
		"display_name":            {displayName},
		"setting_default_company": {company},
	}
	req, err := http.NewRequest(http.MethodPost, p.srv.URL+"/sites/acme/manage/settings", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(session)
	req.AddCookie(csrfCookie)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("HTTP %d, want 400 (Location %q)", resp.StatusCode, resp.Header.Get("Location"))
	}
	m := regexp.MustCompile(`<p class="error" role="alert">([^<]*)</p>`).FindStringSubmatch(page)
	if m == nil || html.UnescapeString(m[1]) != want {
		t.Errorf("the settings section's refusal %q, want %q", m, want)
	}
	if kept != "" {
		if shown := regexp.MustCompile(`<input[^>]*name="display_name"[^>]*value="([^"]*)"`).FindStringSubmatch(page); shown == nil || html.UnescapeString(shown[1]) != kept {
			t.Errorf("the typed display name was not kept: %q", shown)
		}
	}
	site, err := p.h.deps.Store.GetSite(t.Context(), p.acme.ID)
	if err != nil {
		t.Fatal(err)
	}
	if site.DisplayName != p.acme.DisplayName || string(site.Settings) != string(p.acme.Settings) {
		t.Errorf("the refused form changed the site: %q, %s", site.DisplayName, site.Settings)
	}
	events, err := p.h.deps.Store.ListEvents(t.Context(), p.acme.ID, time.Time{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Action != "update_site" || events[0].Outcome != "refused" || events[0].Sentence != want {
		t.Errorf("the site's last event %+v, want the refused update", events)
	}
}
