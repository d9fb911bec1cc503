package main

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestChromiumApprovalOfALongValueFitsADesktop asks, through the real
// Frappe connector, to set a customer's e-mail to an address as long as
// the tool allows (140 characters, one word with its domain at the end)
// and opens the approval link on a desktop: the table of fields stays in
// its card and the whole address, its domain included, is on the screen.
// A word that long must not widen its column past the screen's edge, where
// the approver would not see where the customer's mail is to go.
func TestChromiumApprovalOfALongValueFitsADesktop(t *testing.T) {
	f := newFrappeWrite(t, "update_customer")
	rows := mustSucceed(t, callTool(t, f.client.cs, "list_customers", map[string]any{"limit": 1}), "list_customers")["data"].([]any)
	customer := rows[0].(map[string]any)["name"].(string)
	const domain = "@mail.attacker.example"
	email := strings.Repeat("accountspayable.", 8)
	email = email[:140-len(domain)] + domain
	first := callTool(t, f.client.cs, "update_customer", map[string]any{"customer": customer, "email_id": email})
	if !first.IsError || first.errorCode() != "APPROVAL_REQUIRED" {
		t.Fatalf("the first call: %s", first.Text)
	}
	link := approvalURL.FindString(first.Text)
	ctx := newChromium(t)
	viewAt(t, ctx, desktopWidth, desktopHeight)
	navigate(t, ctx, "open the approval link", chromedp.Navigate(link))
	waitForNewTitle(t, ctx, "Approve a change on Test acme")
	clickAndSignInAtFrappe(t, ctx, `form[action$="/sign-in"] button`, f.user, "Approve a change on Test acme")
	if text := pageBody(t, ctx); !strings.Contains(strings.ReplaceAll(text, "\n", ""), email) {
		t.Fatalf("the approval page lacks the new e-mail %s: %s", email, text)
	}
	saveScreenshot(t, ctx, "desktop-approval-long-value.png")
	fitsTheScreen(t, ctx, "the approval of a long e-mail address on a desktop")
	// The cell with the address ends on the screen, inside the card.
	off := browserResult(t, ctx, "measure the new value's cell", chromedp.Evaluate[[]string](`(() => {
  const cell = [...document.querySelectorAll('table.preview td')].find(c => c.textContent.includes(`+jsString(domain)+`));
  if (!cell) return ['no cell shows the new e-mail'];
  const card = cell.closest('.card').getBoundingClientRect(), r = cell.getBoundingClientRect();
  const out = [];
  if (r.right > document.documentElement.clientWidth + 0.5) out.push('the cell ends at ' + Math.round(r.right) + ' px, past the screen (' + document.documentElement.clientWidth + ' px)');
  if (r.right > card.right + 0.5) out.push('the cell ends at ' + Math.round(r.right) + ' px, past its card (' + Math.round(card.right) + ' px)');
  return out;
})()`))
	for _, p := range off {
		t.Errorf("the approval of a long e-mail address on a desktop: %s", p)
	}
}
