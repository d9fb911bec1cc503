package outbound

import (
	"bytes"
	"io"
	"net/http"

	"github.com/erpgate/erpgate/platform/connector"
)

// ToolClient is Client for the requests of one tool call: whether a
// request may be sent again after a passing failure (a 503, a dropped
// connection) follows what the tool does, not the request's HTTP method
// (issue 15 item 12). An ERP whose reads are POSTs (JSON-RPC APIs, an
// Acumatica inquiry read with PUT) gets its retry; a write tool's request
// is never repeated, even a GET, since a GET may trigger an action and
// the first attempt may have reached the ERP. After a 401 a write tool's
// request is sent again, with the credential renewed, only when own (the
// tool's connector) says the 401 is the ERP's: nil never does.
func (f *Factory) ToolClient(site connector.Site, auth connector.Authorizer, effect connector.Effect, own connector.OwnUnauthorized) *http.Client {
	hc := f.Client(site, auth)
	if st, ok := hc.Transport.(*siteTransport); ok {
		st.effect = effect
		st.own = own
	}
	return hc
}

// writes reports whether the transport serves a write tool's call.
func (t *siteTransport) writes() bool {
	return t.effect == connector.Write || t.effect == connector.Destructive
}

// maxJudged is the most of a 401 answer read to judge whether it is the
// ERP's: an ERP's refusal of a credential is a few hundred bytes.
const maxJudged = 64 << 10

// ownUnauthorized reports whether resp, a 401 to a write tool's request,
// is the ERP's own (t.own). It reads at most maxJudged bytes of the body
// and leaves resp with the whole body to read.
func (t *siteTransport) ownUnauthorized(resp *http.Response) bool {
	if t.own == nil || resp.ContentLength > maxJudged {
		return false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxJudged+1))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	return err == nil && len(head) <= maxJudged && t.own.OwnUnauthorized(resp.Header, head)
}

// transport is the connection pool a request goes through. A write
// tool's requests never go on a reused connection: Go's transport resends
// a GET (or any request without a body) by itself when a reused keep-alive
// connection closes before the answer, and the ERP may have acted on the
// first one.
func (t *siteTransport) transport() http.RoundTripper {
	if t.writes() {
		return t.factory.fresh
	}
	return t.factory.base
}

// withoutReuse returns base with a connection per request, or base itself
// when it is not an *http.Transport (a test's stand-in).
func withoutReuse(base http.RoundTripper) http.RoundTripper {
	tr, ok := base.(*http.Transport)
	if !ok {
		return base
	}
	fresh := tr.Clone()
	fresh.DisableKeepAlives = true
	return fresh
}

// mayRetry reports whether req may be sent a second time: by the tool's
// effect on a tool call's client, by the method elsewhere (sign-in and
// verification requests, whose POSTs are never repeated).
func (t *siteTransport) mayRetry(req *http.Request) bool {
	switch t.effect {
	case connector.Read:
		return true
	case connector.Write, connector.Destructive:
		return false
	}
	return isIdempotent(req.Method)
}
