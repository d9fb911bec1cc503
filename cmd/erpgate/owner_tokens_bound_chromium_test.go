package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// An owner (or a script) who issues and revokes tokens in a loop stays
// under the bound of active tokens, but each revoked one stays a row.
// Before, the owner's page listed every one: 300 revoked tokens were 300
// rows, and the page grew without bound. Now it lists the active tokens
// and the 20 most recently revoked or expired, with a sentence saying how
// many older ones it leaves out, counted up to 1000 (past that: "more
// than 1000").
func TestChromiumOwnerPageListsOnlyTheLatestEndedTokens(t *testing.T) {
	needChromium(t)
	const loops, shown = 300, 20
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	path := "/sites/" + site.ID + "/service-tokens"
	for i := range loops {
		var issued tokenResponse
		if err := gw.admin.do(context.Background(), http.MethodPost, path, map[string]any{"name": fmt.Sprintf("loop %d", i), "expires_in_days": 30}, &issued); err != nil {
			t.Fatalf("issue %d: %v", i, err)
		}
		if err := gw.admin.do(context.Background(), http.MethodDelete, path+"/"+issued.ID, nil, nil); err != nil {
			t.Fatalf("revoke %d: %v", i, err)
		}
	}
	var kept tokenResponse
	if err := gw.admin.do(context.Background(), http.MethodPost, path, map[string]any{"name": "kept", "expires_in_days": 30}, &kept); err != nil {
		t.Fatal(err)
	}

	ctx := newChromium(t)
	viewAt(t, ctx, desktopWidth, desktopHeight)
	signInToOwnerPage(t, ctx, gw, admin)
	rows := browserResult(t, ctx, "read the tokens", chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('section[aria-labelledby="tokens"] tbody tr')].map(r => r.innerText.replace(/\s+/g, " ").trim())`))
	// The registration's token and "kept" are active.
	if len(rows) != 2+shown {
		t.Fatalf("the owner page lists %d tokens, want the 2 active and the %d most recently revoked", len(rows), shown)
	}
	has := func(name string) bool {
		for _, r := range rows {
			if strings.HasPrefix(r, name+" egs_") {
				return true
			}
		}
		return false
	}
	for _, name := range []string{"dev", "kept", fmt.Sprintf("loop %d", loops-1), fmt.Sprintf("loop %d", loops-shown)} {
		if !has(name) {
			t.Errorf("the owner page does not list %q: %q", name, rows)
		}
	}
	if has(fmt.Sprintf("loop %d", loops-shown-1)) {
		t.Errorf("the owner page lists loop %d, revoked before the last %d", loops-shown-1, shown)
	}
	sentence := fmt.Sprintf("%d older revoked or expired tokens are not shown.", loops-shown)
	if text := pageBody(t, ctx); !strings.Contains(text, sentence) {
		t.Errorf("the owner page does not say %q", sentence)
	}
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="tokens"]`, "owner-tokens-ended-desktop.png")
	viewAt(t, ctx, phoneWidth, phoneHeight)
	notWiderThanTheScreen(t, ctx, "the tokens on a phone")
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="tokens"]`, "owner-tokens-ended-phone.png")

	// A year of such a loop leaves far more ended tokens than the page
	// counts: past 1,000 older ones it says "more than 1,000".
	execSQL(t, gw.DBURL, `
		INSERT INTO service_tokens (id, site_id, name, token_hash, prefix, created_at, revoked, revoked_at)
		SELECT gen_random_uuid(), s.id, 'older ' || i, sha256(convert_to('older ' || i, 'UTF8')), 'egs_x',
		       now() - interval '300 days', true, now() - interval '1 day' - i * interval '1 minute'
		FROM sites s, generate_series(1, 1000) i WHERE s.slug = 'acme'`)
	viewAt(t, ctx, desktopWidth, desktopHeight)
	navigate(t, ctx, "open the owner page again", chromedp.Reload())
	waitForNewTitle(t, ctx, "Manage ")
	const more = "More than 1,000 older revoked or expired tokens are not shown."
	if text := pageBody(t, ctx); !strings.Contains(text, more) || strings.Contains(text, sentence) {
		t.Errorf("with %d older ended tokens, the owner page does not say %q", loops-shown+1000, more)
	}
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="tokens"]`, "owner-tokens-more-desktop.png")
	viewAt(t, ctx, phoneWidth, phoneHeight)
	notWiderThanTheScreen(t, ctx, "the tokens on a phone, more than the bound not shown")
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="tokens"]`, "owner-tokens-more-phone.png")
}
