package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/platform/store/approval"
)

// TestChromiumApprovalHoldsApproveWhenTheWindowIsFocused: clickjacking
// by a window brought to the front. The approval page is open in a window
// beside another one, shown but not focused; a page the person works with
// brings it to the front under the pointer (a pop-up it opened can be
// moved and focused) as they click. The page was visible all along, so no
// visibilitychange marks the moment: the window's focus must hold Approve
// too, and its blur must hold it until it is focused again. A keyboard
// user who had Approve focused finds it focused again after the hold and
// approves with Enter.
func TestChromiumApprovalHoldsApproveWhenTheWindowIsFocused(t *testing.T) {
	ap, update, pageURL, signedIn := signedInAtAnApproval(t)
	const approve = `button[value="approve"]`
	// The same browser opens the page again in a window beside the focused
	// one: shown, not focused.
	var side target.ID
	browserDo(t, signedIn, "open a window beside", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		no, yes := false, true
		res, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, target.CreateTarget, target.CreateTargetParams{URL: "about:blank", NewWindow: &yes, Focus: &no})
		side = res.TargetID
		return chromedp.Void{}, err
	})
	ctx, cancel := chromedp.NewContext(signedIn, chromedp.WithTargetID(side))
	t.Cleanup(cancel)
	navigate(t, ctx, "open the approval page beside", chromedp.Navigate(pageURL))
	waitForNewTitle(t, ctx, "Approve a change on Test acme")
	browserDo(t, ctx, "wait for the hold of the page's opening to end", chromedp.WaitEnabled(chromedp.CSS(approve)))
	if s := browserResult(t, ctx, "read whether the page is shown and focused", chromedp.Evaluate[string](`document.visibilityState + " " + document.hasFocus()`)); s != "visible false" {
		t.Fatalf("the page is %q, want visible and not focused: the test proves nothing", s)
	}
	// The second click of a double-click lands as the window comes to the
	// front: the page presses Approve as it takes focus.
	browserResult(t, ctx, "press Approve as the window takes focus", chromedp.Evaluate[bool](`(function () {
		window.erpgateVisibilityChanges = 0;
		document.addEventListener("visibilitychange", function () { window.erpgateVisibilityChanges++; });
		addEventListener("focus", function (e) {
			if (e.target !== window || window.erpgateHeldAtFocus !== undefined) { return; }
			var b = document.querySelector('button[value="approve"]');
			window.erpgateHeldAtFocus = b.disabled;
			b.click();
		});
		return true;
	})()`))
	browserDo(t, ctx, "bring the window to the front", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, page.BringToFront, cdp.Empty{})
		return chromedp.Void{}, err
	})
	var seen struct {
		Title             string
		Held              *bool
		Focused           bool
		Visibility        string
		VisibilityChanges int
	}
	for {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({Title: document.title, Held: window.erpgateHeldAtFocus,
			Focused: document.hasFocus(), Visibility: document.visibilityState, VisibilityChanges: window.erpgateVisibilityChanges || 0})`))
		if err == nil && json.Unmarshal([]byte(s), &seen) == nil && (seen.Held != nil || strings.HasPrefix(seen.Title, "Change approved")) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the window never took focus: %v (page: %s)", ctx.Err(), currentPage(ctx))
		case <-time.After(20 * time.Millisecond):
		}
	}
	if seen.Held == nil || !*seen.Held {
		waitForNewTitle(t, ctx, "Change approved on Test acme")
		t.Fatalf("a click as the window took focus, with no change of visibility, approved the change (it is %s)", ap.status(t, update))
	}
	if !seen.Focused || seen.Visibility != "visible" || seen.VisibilityChanges != 0 {
		t.Fatalf("the window took focus with %d changes of visibility (focused %t, %s): the test proves nothing", seen.VisibilityChanges, seen.Focused, seen.Visibility)
	}
	if s := ap.status(t, update); s != approval.Proposed {
		t.Fatalf("a click as the window took focus: the change is %s", s)
	}

	// A keyboard user has Approve focused; the window loses focus and gets
	// it back (headless Chromium never takes focus from a window, so the
	// test sends the window the events the browser would).
	browserDo(t, ctx, "focus Approve", chromedp.WaitEnabled(chromedp.CSS(approve)), chromedp.Focus(chromedp.CSS(approve)))
	if held := browserResult(t, ctx, "blur the window", chromedp.Evaluate[bool](`(function () {
		window.dispatchEvent(new FocusEvent("blur"));
		return document.querySelector('button[value="approve"]').disabled;
	})()`)); !held {
		t.Error("Approve is not held while the window is not focused")
	}
	if held := browserResult(t, ctx, "focus the window", chromedp.Evaluate[bool](`(function () {
		window.dispatchEvent(new FocusEvent("focus"));
		return document.querySelector('button[value="approve"]').disabled;
	})()`)); !held {
		t.Error("Approve is not held as the window is focused again")
	}
	browserDo(t, ctx, "wait for the hold to end", chromedp.WaitEnabled(chromedp.CSS(approve)))
	if focused := browserResult(t, ctx, "read what has the keyboard's focus", chromedp.Evaluate[bool](`document.activeElement === document.querySelector('button[value="approve"]')`)); !focused {
		t.Fatal("after the hold, Approve no longer has the keyboard's focus")
	}
	navigate(t, ctx, "press Enter", chromedp.KeyEvent("\r"))
	waitForNewTitle(t, ctx, "Change approved on Test acme")
	if s := ap.status(t, update); s != approval.Approved {
		t.Errorf("after approving with the keyboard: the change is %s", s)
	}
}
