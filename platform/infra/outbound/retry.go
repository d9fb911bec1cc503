package outbound

import (
	"net/http"

	"github.com/erpgate/erpgate/platform/connector"
)

// ToolClient is Client for the requests of one tool call: whether a
// request may be sent again after a passing failure (a 503, a dropped
// connection) follows what the tool does, not the request's HTTP method
// (issue 15 item 12). An ERP whose reads are POSTs (JSON-RPC APIs, an
// Acumatica inquiry read with PUT) gets its retry; a write tool's request
// is never repeated, even a GET, since a GET may trigger an action and
// the first attempt may have reached the ERP.
func (f *Factory) ToolClient(site connector.Site, auth connector.Authorizer, effect connector.Effect) *http.Client {
	hc := f.Client(site, auth)
	if st, ok := hc.Transport.(*siteTransport); ok {
		st.effect = effect
	}
	return hc
}

// transport is the connection pool a request goes through. A write
// tool's requests never go on a reused connection: Go's transport resends
// a GET (or any request without a body) by itself when a reused keep-alive
// connection closes before the answer, and the ERP may have acted on the
// first one.
func (t *siteTransport) transport() http.RoundTripper {
	if t.effect == connector.Write || t.effect == connector.Destructive {
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
