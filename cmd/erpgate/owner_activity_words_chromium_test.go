package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/acumatica/acumaticatest"
)

// TestChromiumOwnerActivityRefusalsInPlainWords: the owner page's recent
// activity tells a refused action's reason as a sentence, whoever was
// refused (the owner on the settings form, the operator through the admin
// API), never in the admin API's words ("settings: invalid Acumatica
// settings: …").
func TestChromiumOwnerActivityRefusalsInPlainWords(t *testing.T) {
	needChromium(t)
	sim := acumaticatest.NewServer(acumaticatest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	acumaticaOAuthSite(t, gw, "acu", sim)
	admin := sim.User(acumaticatest.RoleFull)

	// The operator's refused changes, through the admin API.
	for _, settings := range []map[string]any{
		{"tenant": sim.Tenant(), "endpoint_version": "latest"},
		{"tenant": sim.Tenant(), "colour": "blue"},
	} {
		err := gw.admin.do(context.Background(), http.MethodPatch, "/sites/acu", map[string]any{"settings": settings}, nil)
		if ae := (*apiError)(nil); !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
			t.Fatalf("settings %v: %v, want a refusal", settings, err)
		}
	}

	ctx := newChromium(t)
	manageURL := gw.URL + "/sites/acu/manage"
	navigate(t, ctx, "open the owner page", chromedp.Navigate(manageURL))
	waitForNewTitle(t, ctx, "Manage site acu")
	navigate(t, ctx, "start the sign-in", chromedp.Click(chromedp.CSS(`form[action$="/manage/sign-in"] button`)))
	finishAcumaticaSignIn(t, ctx, admin, "Manage Acumatica acu")
	navigate(t, ctx, "give an invalid version",
		chromedp.SetValue(chromedp.CSS("#setting_endpoint_version"), "latest"),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/settings"] button`)))
	waitForNewTitle(t, ctx, "Manage Acumatica acu")
	saveScreenshot(t, ctx, "TestChromiumOwnerActivityRefusalsInPlainWords.png")

	rows := browserResult(t, ctx, "read the recent activity", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("tr")].map(r => r.innerText.replace(/\s+/g, " ").trim()).filter(r => r.includes("refused"))`))
	want := []string{
		// Newest first: the owner's, then the operator's two.
		"Endpoint version is not a version such as 24.200.001.",
		"The settings are not valid for an Acumatica site",
		"Endpoint version is not a version such as 24.200.001.",
	}
	if len(rows) != len(want) {
		t.Fatalf("%d refused rows, want %d: %q", len(rows), len(want), rows)
	}
	for i, row := range rows {
		if !strings.Contains(row, want[i]) {
			t.Errorf("row %d: %q, want it to say %q", i, row, want[i])
		}
		for _, words := range []string{"settings:", "invalid Acumatica settings", "invalid_request", `"latest"`} {
			if strings.Contains(row, words) {
				t.Errorf("row %d: %q says %q, the admin API's words", i, row, words)
			}
		}
	}
}
