package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/erpgate/erpgate/connectors/frappe/frappetest"
)

// TestChromiumConsoleSaysTheProxyIsNotTrusted: after a request came
// through a proxy that ERPGATE_TRUSTED_PROXIES does not list, the sites
// page opens with a sentence saying so and what to do, in sight above the
// sites at a phone's width and a desktop's, wrapping within the screen.
// Anyone can send the header, so it also says not to list an address that
// is not the operator's proxy: listed, it could choose its own address.
func TestChromiumConsoleSaysTheProxyIsNotTrusted(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", nil)
	siteWithBothConnections(t, gw, sim)
	forwarded := newConsoleBrowser(t, gw.URL)
	forwarded.c.Transport = forwardedFor("203.0.113.7")
	if status, _, _ := forwarded.signIn(gw.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("forwarded sign-in: HTTP %d", status)
	}
	ctx := newChromiumWithin(t, 90*time.Second)
	signInToConsole(t, ctx, gw, "/console/sites")
	for _, width := range []int64{phoneWidth, desktopWidth} {
		finding := sitesPageFindingAt(t, ctx, width, "console-untrusted-proxy")
		if !strings.HasPrefix(finding, untrustedProxySentence) || !strings.Contains(finding, "Add the proxy's address to ERPGATE_TRUSTED_PROXIES.") ||
			!strings.Contains(finding, "If 127.0.0.1 is not your proxy, a client wrote the header itself: do not list it, or it could choose its own address.") {
			t.Errorf("at %d px the sites page's finding is %q", width, finding)
		}
	}
}

// TestChromiumConsoleSaysTheProxyHeaderIsNotRead: after a listed proxy
// named the client only in X-Real-IP, with no X-Forwarded-For, the sites
// page opens with a sentence saying that erpgate reads only
// X-Forwarded-For and what to do, in sight above the sites at a phone's
// width and a desktop's, wrapping within the screen.
func TestChromiumConsoleSaysTheProxyHeaderIsNotRead(t *testing.T) {
	needChromium(t)
	sim := frappetest.NewServer(frappetest.Options{})
	defer sim.Close()
	gw := startGateway(t, "", map[string]string{"ERPGATE_TRUSTED_PROXIES": "127.0.0.1"})
	siteWithBothConnections(t, gw, sim)
	forwarded := newConsoleBrowser(t, gw.URL)
	forwarded.c.Transport = proxyHeaders{"X-Real-IP": "198.51.100.7"}
	if status, _, _ := forwarded.signIn(gw.AdminToken); status != http.StatusSeeOther {
		t.Fatalf("forwarded sign-in: HTTP %d", status)
	}
	ctx := newChromiumWithin(t, 90*time.Second)
	signInToConsole(t, ctx, gw, "/console/sites")
	for _, width := range []int64{phoneWidth, desktopWidth} {
		finding := sitesPageFindingAt(t, ctx, width, "console-unread-proxy-header")
		if !strings.HasPrefix(finding, unreadHeaderSentence+"X-Real-IP header, but erpgate reads only X-Forwarded-For, so every visitor counts as the proxy's address") ||
			!strings.Contains(finding, "Make the proxy send X-Forwarded-For.") {
			t.Errorf("at %d px the sites page's finding is %q", width, finding)
		}
	}
}

// sitesPageFindingAt views the sites page at width, saves a screenshot of
// it as screenshot-<width>.png, checks that it wraps within the screen and
// returns the text of its finding: "" without one, prefixed with "out of
// place: " when it is not in sight above the sites or not within the
// screen.
func sitesPageFindingAt(t *testing.T, ctx context.Context, width int64, screenshot string) string {
	t.Helper()
	viewAt(t, ctx, width, desktopHeight)
	saveScreenshot(t, ctx, fmt.Sprintf("%s-%d.png", screenshot, width))
	notWiderThanTheScreen(t, ctx, fmt.Sprintf("the sites page at %d px", width))
	return browserResult(t, ctx, "read the finding", chromedp.Evaluate[string](`(() => {
  const f = document.querySelector('main .finding');
  if (!f) return '';
  const r = f.getBoundingClientRect(), table = document.querySelector('main table').getBoundingClientRect();
  if (r.width === 0 || r.right > document.documentElement.clientWidth + 0.5 || r.bottom > table.top) return 'out of place: ' + f.textContent;
  return f.textContent;
})()`))
}
