package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// A site at its bound of active service tokens (100 by default: the one
// registration issued and 99 more through the admin API): its owner, on
// the owner's page, asks for one more and is told in a sentence why not and
// what to do, at a laptop's width and a phone's; nothing is issued, and
// the refusal is audited.
func TestChromiumOwnerPageRefusesAServiceTokenPastTheBound(t *testing.T) {
	needChromium(t)
	const bound = 100
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	site := frappeOAuthSite(t, gw, "acme", sim)
	for range bound - 1 {
		var issued tokenResponse
		if err := gw.admin.do(context.Background(), http.MethodPost, "/sites/"+site.ID+"/service-tokens", map[string]any{"name": "nightly", "expires_in_days": 30}, &issued); err != nil {
			t.Fatalf("issue through the admin API: %v", err)
		}
	}
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	activeTokens := `SELECT count(*) FROM service_tokens t JOIN sites s ON s.id = t.site_id WHERE s.slug = 'acme' AND NOT t.revoked`
	if n := queryInt(t, gw.DBURL, activeTokens); n != bound {
		t.Fatalf("acme has %d active tokens before the owner's, want %d", n, bound)
	}

	ctx := newChromium(t)
	docs := recordDocumentResponses(t, ctx)
	viewAt(t, ctx, desktopWidth, desktopHeight)
	signInToOwnerPage(t, ctx, gw, admin)
	navigate(t, ctx, "issue one token too many",
		chromedp.SendKeys(chromedp.CSS("#token_name"), "one too many"),
		chromedp.Click(chromedp.CSS(`form[action$="/manage/tokens"] button`)))
	waitForNewTitle(t, ctx, "Manage Test acme")
	const sentence = "This site already has 100 active service tokens; revoke one you no longer use first."
	if text := pageBody(t, ctx); !strings.Contains(text, sentence) {
		t.Errorf("the owner page does not say %q: %s", sentence, text)
	}
	if h, _ := docs.last("/sites/acme/manage/tokens"); h.status != http.StatusConflict {
		t.Errorf("the refusal is HTTP %d, want %d", h.status, http.StatusConflict)
	}
	if n := queryInt(t, gw.DBURL, activeTokens); n != bound {
		t.Errorf("acme has %d active tokens after the refusal, want %d", n, bound)
	}
	assertOwnerEvent(t, gw, "acme", "issue_service_token", "refused", admin.Email)
	saveScreenshot(t, ctx, "owner-token-bound-desktop.png")
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="tokens"]`, "owner-token-bound-section-desktop.png")
	notWiderThanTheScreen(t, ctx, "the refusal at a laptop's width")
	viewAt(t, ctx, phoneWidth, phoneHeight)
	notWiderThanTheScreen(t, ctx, "the refusal at a phone's width")
	saveScreenshot(t, ctx, "owner-token-bound-phone.png")
	saveSectionScreenshot(t, ctx, `section[aria-labelledby="tokens"]`, "owner-token-bound-section-phone.png")
}

// The operator's setting reaches the bound: with
// ERPGATE_LIMIT_SERVICE_TOKENS_PER_SITE=2, a site with the token its
// registration issued gets one more through the admin API, then 409.
func TestServiceTokensPerSiteSettingBoundsTheAdminAPI(t *testing.T) {
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", map[string]string{"ERPGATE_LIMIT_SERVICE_TOKENS_PER_SITE": "2"})
	site := gw.registerFrappe(t, "acme", sim, userWithRole(t, sim, "service"))
	path := "/sites/" + site.ID + "/service-tokens"
	var issued tokenResponse
	if err := gw.admin.do(context.Background(), http.MethodPost, path, map[string]any{"name": "second"}, &issued); err != nil {
		t.Fatalf("the second token: %v", err)
	}
	err := gw.admin.do(context.Background(), http.MethodPost, path, map[string]any{"name": "third"}, &issued)
	var refused *apiError
	if !errors.As(err, &refused) || refused.Status != http.StatusConflict || refused.Code != "conflict" || !strings.Contains(refused.Message, "at most 2") {
		t.Fatalf("the third token = %v, want 409 conflict naming the bound of 2", err)
	}
}
