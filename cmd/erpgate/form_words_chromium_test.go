package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestChromiumNewSiteFormsRefuseInPlainWords types, in Chromium, settings
// and addresses the registry or the connector refuses into the
// registration's start form and the console's new-site form: each comes
// back as a sentence naming the form's label, with what was typed kept.
// (TestNewSiteFormsRefuseInPlainWords covers every rule over HTTP, bytes a
// browser cannot send included.)
func TestChromiumNewSiteFormsRefuseInPlainWords(t *testing.T) {
	r := newRegistration(t)
	ctx := r.ctx
	t.Run("register", func(t *testing.T) {
		for _, c := range []struct {
			name, kind, baseURL string
			extra               map[string]string
			want, keptID        string
		}{
			{"tenant", "acumatica", "https://erp.example.com/AcumaticaERP", map[string]string{"tenant": "Company\x01"}, "Tenant holds a control character.", "base_url"},
			{"address", "frappe", "https://erp.example.com/app", nil, "The ERP's address must be the site's address without a path, like https://erp.example.com.", "base_url"},
		} {
			r.start(c.kind, "Acme Ltd", c.baseURL, c.extra)
			waitForTitle(t, ctx, "Register your ERP")
			r.shot("refused-" + c.name)
			problem := browserResult(t, ctx, "read the refusal", chromedp.Text(chromedp.CSS("#start-error")))
			if problem != c.want {
				t.Errorf("%s: the page says %q, want %q", c.name, problem, c.want)
			}
			if got := browserResult(t, ctx, "read the address", chromedp.Evaluate[string](`document.querySelector("#base_url").value`)); got != c.baseURL {
				t.Errorf("%s: the address came back as %q", c.name, got)
			}
		}
	})
	t.Run("console", func(t *testing.T) {
		signInToConsole(t, ctx, r.gw, "/console")
		for _, c := range []struct {
			name, kind string
			fields     map[string]string
			want       string
		}{
			{"tenant", "acumatica", map[string]string{"#base_url": "https://erp.example.com/AcumaticaERP", "#setting_tenant": "a/b"}, `Nothing was saved: Tenant must not hold /, \, ?, # or %.`},
			{"address", "frappe", map[string]string{"#base_url": "erp.example.com"}, "Nothing was saved: ERP address must start with https://, like https://erp.example.com."},
			{"short name", "frappe", map[string]string{"#base_url": "https://erp.example.com", "#slug": "Acme Ltd"}, "Nothing was saved: Short name must be 1 to 48 of a-z, 0-9 and -, starting and ending with a letter or digit."},
		} {
			browserDo(t, ctx, "open the new-site form", chromedp.Navigate(r.gw.URL+"/console/sites/new?kind="+c.kind))
			waitForTitle(t, ctx, "Add a site")
			fields := map[string]string{"#display_name": "Acme Ltd", "#slug": "acme"}
			for k, v := range c.fields {
				fields[k] = v
			}
			for id, v := range fields {
				browserDo(t, ctx, "fill "+id, chromedp.SetValue(chromedp.CSS(id), v))
			}
			submitAndWait(t, ctx, "add "+c.name, "Add a site", chromedp.Click(chromedp.CSS(`form.card button[type="submit"]`)))
			saveScreenshot(t, ctx, "TestChromiumNewSiteFormsRefuseInPlainWords-console-"+strings.ReplaceAll(c.name, " ", "-")+".png")
			if problem := browserResult(t, ctx, "read the refusal", chromedp.Text(chromedp.CSS("#problem"))); problem != c.want {
				t.Errorf("%s: the page says %q, want %q", c.name, problem, c.want)
			}
			for id, v := range fields {
				if got := browserResult(t, ctx, "read "+id, chromedp.Evaluate[string](`document.querySelector("`+id+`").value`)); got != v {
					t.Errorf("%s: %s came back as %q, want %q", c.name, id, got, v)
				}
			}
		}
	})
}
