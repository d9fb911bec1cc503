package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestChromiumConsoleSettingsNameNoInternalCounter: the settings page
// ended with "Settings version 2.", the settings' internal version, which
// one change can move by more than one and which means nothing to an
// operator (the page already says that changes reach every replica within
// a second). It is not shown, before or after a change.
func TestChromiumConsoleSettingsNameNoInternalCounter(t *testing.T) {
	needChromium(t)
	gw := startGateway(t, "", nil)
	ctx := newChromium(t)
	signInToConsole(t, ctx, gw, "/console")
	browserDo(t, ctx, "open the settings", chromedp.Navigate(gw.URL+"/console/settings"))
	waitForTitle(t, ctx, "Settings")
	page := func(what string) string {
		return browserResult(t, ctx, what, chromedp.Text(chromedp.CSS(`main`)))
	}
	if got := page("read the page before a change"); strings.Contains(got, "version") {
		t.Errorf("before any change the settings name a version: %q", got)
	}
	submitAndWait(t, ctx, "change max records", "Settings",
		chromedp.SetValue(chromedp.CSS(`#value-max_records`), "250"),
		chromedp.Click(chromedp.CSS(`#setting-max_records button[type="submit"]`)))
	got := page("read the page after a change")
	if !strings.Contains(got, "Max records per query is changed") {
		t.Fatalf("the change was not made: %q", got)
	}
	if strings.Contains(got, "version") {
		t.Errorf("after a change the settings name a version: %q", got)
	}
	saveScreenshot(t, ctx, "console-settings-changed-no-version.png")
}
