package main

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// The owner page's service tokens fit their card at a phone's width, a
// tablet's and two laptops': the table does not scroll sideways in its
// box, and every Revoke button is whole inside the card, so the owner
// sees and can press it. The tokens are of every kind the list shows:
// used, never used, expiring, never expiring, expired, revoked, and one
// with the longest name without a space a token may have.
func TestChromiumOwnerPageTokensFitTheirCard(t *testing.T) {
	needChromium(t)
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	issue := func(name string, days int) string {
		t.Helper()
		body := map[string]any{"name": name}
		if days > 0 {
			body["expires_in_days"] = days
		}
		var issued tokenResponse
		if err := gw.admin.do(context.Background(), http.MethodPost, "/sites/"+site.ID+"/service-tokens", body, &issued); err != nil {
			t.Fatalf("issue %q: %v", name, err)
		}
		return issued.ID
	}
	issue("nightly report", 90)
	issue("voice agent for the warehouse team", 0)
	issue(strings.Repeat("x", 100), 365)
	used := issue("used", 30)
	execSQL(t, gw.DBURL, `UPDATE service_tokens SET last_used_at = now() WHERE id = $1`, used)
	expired := issue("expired", 30)
	execSQL(t, gw.DBURL, `UPDATE service_tokens SET created_at = now() - interval '40 days', expires_at = now() - interval '10 days' WHERE id = $1`, expired)
	revoked := issue("revoked", 90)
	if err := gw.admin.do(context.Background(), http.MethodDelete, "/sites/"+site.ID+"/service-tokens/"+revoked, nil, nil); err != nil {
		t.Fatalf("revoke: %v", err)
	}

	ctx := newChromium(t)
	viewAt(t, ctx, desktopWidth, desktopHeight)
	signInToOwnerPage(t, ctx, gw, admin)
	for _, width := range []int64{phoneWidth, 768, 1024, desktopWidth} {
		what := "the tokens at " + strconv.FormatInt(width, 10) + " px"
		viewAt(t, ctx, width, desktopHeight)
		buttons := browserResult(t, ctx, "count the Revoke buttons", chromedp.Evaluate[int](
			`document.querySelectorAll('section[aria-labelledby="tokens"] table button').length`))
		if buttons != 5 {
			t.Fatalf("%s: %d Revoke buttons, want 5 (one per active token): %s", what, buttons, pageBody(t, ctx))
		}
		for _, p := range tokensOutOfTheirCard(t, ctx) {
			t.Errorf("%s: %s", what, p)
		}
		notWiderThanTheScreen(t, ctx, what)
		name := "owner-tokens-" + strconv.FormatInt(width, 10) + ".png"
		saveSectionScreenshot(t, ctx, `section[aria-labelledby="tokens"]`, name)
	}
}

// tokensOutOfTheirCard lists what of the owner page's tokens table is out
// of sight: the table scrolling sideways in its box, a Revoke button not
// whole inside the card or the box.
func tokensOutOfTheirCard(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return browserResult(t, ctx, "measure the tokens table", chromedp.Evaluate[[]string](`(() => {
  const problems = [];
  const card = document.querySelector('section[aria-labelledby="tokens"]');
  const table = card.querySelector('table');
  const box = table.closest('.table-wrap') || table.parentElement;
  if (box.scrollWidth > box.clientWidth) {
    problems.push('the table scrolls sideways in its box: ' + box.scrollWidth + ' px in ' + box.clientWidth + ' px');
  }
  const c = card.getBoundingClientRect(), b = box.getBoundingClientRect();
  for (const button of table.querySelectorAll('button')) {
    const r = button.getBoundingClientRect();
    if (r.left < c.left - 0.5 || r.right > c.right + 0.5 || r.left < b.left - 0.5 || r.right > b.right + 0.5) {
      problems.push('"' + button.getAttribute('aria-label') + '" spans ' + Math.round(r.left) + '-' + Math.round(r.right) + ' px, its card ' + Math.round(c.left) + '-' + Math.round(c.right) + ' px and its box ' + Math.round(b.left) + '-' + Math.round(b.right) + ' px');
    }
  }
  return problems;
})()`))
}
