package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// The owner page with an ERP user whose name is one long word (an e-mail
// address of 120 characters) among who has connected, and a service token
// whose name is one long word: at a laptop's width and a phone's, both
// tables stay in their cards and each row's Revoke button is on the
// screen. A word that long must not widen its table so that the owner has
// to scroll to find the button, or does not see it at all.
func TestChromiumOwnerPageLongWordsKeepRevokeInView(t *testing.T) {
	needChromium(t)
	sim, gw, site := startFrappeOAuthGateway(t, nil)
	admin := userWithRole(t, sim, frappetest.RoleAdministrator)
	const domain = "@mail.example.com"
	user := strings.Repeat("accountspayable.", 8)
	user = user[:120-len(domain)] + domain
	execSQL(t, gw.DBURL, `INSERT INTO oauth_consents (site_id, erp_user, client_id) VALUES ($1, $2, 'long-word-client')`, site.ID, user)
	tokenName := strings.Repeat("nightlyreport", 7)[:90]
	var issued tokenResponse
	if err := gw.admin.do(context.Background(), http.MethodPost, "/sites/"+site.ID+"/service-tokens", map[string]any{"name": tokenName, "expires_in_days": 30}, &issued); err != nil {
		t.Fatalf("issue through the admin API: %v", err)
	}

	ctx := newChromium(t)
	viewAt(t, ctx, desktopWidth, desktopHeight)
	signInToOwnerPage(t, ctx, gw, admin)
	for _, w := range []struct {
		name          string
		width, height int64
	}{{"laptop", desktopWidth, desktopHeight}, {"phone", phoneWidth, phoneHeight}} {
		viewAt(t, ctx, w.width, w.height)
		saveScreenshot(t, ctx, "owner-long-words-"+w.name+".png")
		saveSectionScreenshot(t, ctx, `section[aria-labelledby="people"]`, "owner-long-words-people-"+w.name+".png")
		saveSectionScreenshot(t, ctx, `section[aria-labelledby="tokens"]`, "owner-long-words-tokens-"+w.name+".png")
		for _, c := range []struct{ what, section, button string }{
			{"the person's row", "people", "Revoke access of " + user},
			{"the token's row", "tokens", "Revoke token " + tokenName},
		} {
			off := browserResult(t, ctx, "measure "+c.what, chromedp.Evaluate[[]string](`(() => {
  const section = document.querySelector(`+jsString(`section[aria-labelledby="`+c.section+`"]`)+`);
  const button = [...section.querySelectorAll('button')].find(b => b.getAttribute('aria-label') === `+jsString(c.button)+`);
  if (!button) return ['no button ' + `+jsString(c.button)+`];
  const card = section.getBoundingClientRect(), table = section.querySelector('table').getBoundingClientRect();
  const wrap = section.querySelector('.table-wrap').getBoundingClientRect(), b = button.getBoundingClientRect();
  const screen = document.documentElement.clientWidth, out = [];
  if (table.right > card.right + 0.5) out.push('the table ends at ' + Math.round(table.right) + ' px, past its card (' + Math.round(card.right) + ' px)');
  if (b.right > screen + 0.5) out.push('the Revoke button ends at ' + Math.round(b.right) + ' px, past the screen (' + screen + ' px)');
  if (b.right > wrap.right + 0.5) out.push('the Revoke button ends at ' + Math.round(b.right) + ' px, scrolled out of its table (' + Math.round(wrap.right) + ' px)');
  return out;
})()`))
			for _, p := range off {
				t.Errorf("%s at a %s's width: %s", c.what, w.name, p)
			}
		}
	}
}
