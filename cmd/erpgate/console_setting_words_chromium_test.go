package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestChromiumConsoleSettingRefusalsInPlainWords: the operator types, in
// a Frappe site's settings, a tool name that is not a write tool into
// "Write tools enabled", then a misspelt tool name into "Tools offered".
// The console tells both as a page does (siteadmin.Error.ConsoleSentence):
// the kind of site as people call it, said once that nothing was changed;
// never the admin API's words after "Nothing was changed: " (the kind's
// code, "frappe sites").
func TestChromiumConsoleSettingRefusalsInPlainWords(t *testing.T) {
	gw, ctx := consoleOfAcme(t, time.Minute)
	browserDo(t, ctx, "open the site's settings", chromedp.Navigate(gw.URL+"/console/settings?site=acme"))
	waitForTitle(t, ctx, "Settings")
	for _, c := range []struct {
		what, setting, value, screenshot, want string
	}{
		{"a read tool among the write tools", "write_tools", "list_customers", "console-setting-not-a-write-tool.png",
			"Write tools enabled: “list_customers” is not a write tool of Frappe/ERPNext sites, whose write tools are create_sales_order, update_customer, add_comment and submit_document; nothing was changed."},
		{"a misspelt tool among the tools offered", "tools", "list_customer", "console-setting-unknown-tool.png",
			"Tools offered: “list_customer” is neither a tool of Frappe/ERPNext sites nor one of the groups read, write and destructive; nothing was changed."},
	} {
		browserDo(t, ctx, "type "+c.value, chromedp.SetValue(chromedp.CSS(`#value-`+c.setting), c.value))
		submitAndWait(t, ctx, c.what, "Settings", chromedp.Click(chromedp.CSS(`#setting-`+c.setting+` button[type="submit"]`)))
		saveScreenshot(t, ctx, c.screenshot)
		problem := browserResult(t, ctx, "read the refusal", chromedp.Text(chromedp.CSS(`p.error`)))
		if problem != c.want {
			t.Errorf("%s: the console says %q, want %q", c.what, problem, c.want)
		}
		if strings.Contains(problem, "frappe sites") || strings.Count(strings.ToLower(problem), "nothing was changed") != 1 {
			t.Errorf("%s: the console says %q, the admin API's words", c.what, problem)
		}
	}
}
