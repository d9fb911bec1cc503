package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/animation"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/platform/store/approval"
	"github.com/erpgate/erpgate/web/pagekit"
)

// TestChromiumApprovalIgnoresAClickBeforeItsScriptRuns: the hold of
// Approve must not wait for erpgate.js. The page is drawn, Approve under
// the pointer, before its deferred script has arrived (a cold cache: the
// first approval after an upgrade changed the script's version, a slow
// network); the second click of a double-click whose first opened the
// page in a pop-up lands then, and must press nothing. The script's
// request is held, the cache is off, and the page's animations stand
// still, so nothing here races a clock.
func TestChromiumApprovalIgnoresAClickBeforeItsScriptRuns(t *testing.T) {
	ap, update, pageURL, ctx := signedInAtAnApproval(t)

	paused := make(chan fetch.RequestID, 8)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			select {
			case paused <- e.RequestID:
			default:
			}
		}
	}); err != nil {
		t.Fatalf("listen: %v", err)
	}
	browserDo(t, ctx, "hold the page's script, count presses and submissions", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
			window.erpgatePresses = 0; window.erpgateSubmits = 0;
			addEventListener("mousedown", function () { window.erpgatePresses++; }, true);
			addEventListener("submit", function () { window.erpgateSubmits++; }, true);`}); err != nil {
			return chromedp.Void{}, err
		}
		if _, err := cdp.Call(ctx, tg, animation.Enable, cdp.Empty{}); err != nil {
			return chromedp.Void{}, err
		}
		if _, err := cdp.Call(ctx, tg, animation.SetPlaybackRate, animation.SetPlaybackRateParams{PlaybackRate: 0}); err != nil {
			return chromedp.Void{}, err
		}
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return chromedp.Void{}, err
		}
		if _, err := cdp.Call(ctx, tg, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*" + pagekit.ScriptPath + "*"}}})
		return chromedp.Void{}, err
	})
	browserResult(t, ctx, "mark the page", chromedp.Evaluate[bool](`window.erpgateOldPage = true`))
	browserDo(t, ctx, "open the approval page again", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, page.Navigate, page.NavigateParams{URL: pageURL})
		return chromedp.Void{}, err
	})
	var script fetch.RequestID
	select {
	case script = <-paused:
	case <-ctx.Done():
		t.Fatalf("the approval page never asked for its script: %v", ctx.Err())
	}

	// The page is parsed and drawn; its deferred script has not run
	// (DOMContentLoaded waits for it).
	var at struct{ X, Y float64 }
	for {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(function () {
			var b = document.querySelector('button[value="approve"]');
			if (window.erpgateOldPage || document.readyState !== "interactive" || !b ||
				performance.getEntriesByName("first-contentful-paint").length === 0) { return ""; }
			// A pop-up as tall as the page would show it without scrolling.
			b.scrollIntoView({block: "center"});
			var r = b.getBoundingClientRect();
			return JSON.stringify({X: r.left + r.width / 2, Y: r.top + r.height / 2});
		})()`))
		if err == nil && s != "" {
			if err := json.Unmarshal([]byte(s), &at); err != nil {
				t.Fatal(err)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the approval page was never drawn: %v (page: %s)", ctx.Err(), currentPage(ctx))
		case <-time.After(20 * time.Millisecond):
		}
	}
	browserDo(t, ctx, "click where Approve is", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		for _, ev := range []input.DispatchMouseEventParams{
			{Type: input.DispatchMouseEventTypeMouseMoved, X: at.X, Y: at.Y},
			{Type: input.DispatchMouseEventTypeMousePressed, X: at.X, Y: at.Y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1},
			{Type: input.DispatchMouseEventTypeMouseReleased, X: at.X, Y: at.Y, Button: input.MouseButtonLeft, ClickCount: 1},
		} {
			if _, err := cdp.Call(ctx, tg, input.DispatchMouseEvent, ev); err != nil {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, nil
	})
	// Either this document is still shown, and says whether its form was
	// sent, or the answer to the form replaced it.
	var seen struct {
		Title            string
		Presses, Submits int
	}
	for {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({Title: document.title, Presses: window.erpgatePresses || 0, Submits: window.erpgateSubmits || 0})`))
		if err == nil && json.Unmarshal([]byte(s), &seen) == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("reading the page after the click: %v", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if strings.HasPrefix(seen.Title, "Change approved") || seen.Submits > 0 {
		// Let every page load, to see what the click did.
		browserDo(t, ctx, "stop holding scripts", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := cdp.Call(ctx, tg, fetch.Disable, cdp.Empty{})
			return chromedp.Void{}, err
		})
		// The form was sent: its answer is the page of the approved change.
		waitForNewTitle(t, ctx, "Change approved on Test acme")
		t.Fatalf("a click on Approve before the page's script ran approved the change (it is %s)", ap.status(t, update))
	}
	if seen.Presses != 1 {
		t.Fatalf("the click did not reach the page (%d presses): the test proves nothing", seen.Presses)
	}
	browserDo(t, ctx, "let the script load", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, tg, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: script})
		return chromedp.Void{}, err
	})
	waitForNewTitle(t, ctx, "Approve a change on Test acme")
	if s := ap.status(t, update); s != approval.Proposed {
		t.Fatalf("a click before the page's script ran: the change is %s", s)
	}
}
