package outbound

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/metrics"
	"github.com/erpgate/erpgate/platform/infra/netguard"
)

// Options configure a Factory.
type Options struct {
	// MaxResponseBytes bounds every response body. Default 8 MiB.
	MaxResponseBytes int64
	// Retry enables the single retry of retryable reads. Default true when
	// the Factory is built with DefaultOptions.
	Retry bool
	// RetryBackoff is the wait before a retry when the ERP gave no
	// Retry-After. Default 250ms.
	RetryBackoff time.Duration
	// Base is the shared transport. Default: a tuned *http.Transport that
	// dials by AddressPolicy.
	Base http.RoundTripper
	// AddressPolicy decides which addresses the default transport may
	// connect to: in production, public ones only, except the hosts the
	// operator listed. Checked on the address actually dialled, so a name
	// that rebinds to a private address after the site was registered is
	// refused. Nil (development) allows every address.
	AddressPolicy *netguard.Policy
	// Metrics, when set, receives every ERP request's time and status.
	Metrics *metrics.Metrics
}

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{MaxResponseBytes: 8 << 20, Retry: true, RetryBackoff: 250 * time.Millisecond}
}

// Factory builds per-site clients over one shared connection pool.
type Factory struct {
	opts Options
	base http.RoundTripper
	// fresh is base without connection reuse, for write tools (retry.go).
	fresh http.RoundTripper
}

// NewFactory returns a factory. One per process is enough.
func NewFactory(opts Options) *Factory {
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = 8 << 20
	}
	if opts.RetryBackoff <= 0 {
		opts.RetryBackoff = 250 * time.Millisecond
	}
	base := opts.Base
	if base == nil {
		base = newBaseTransport(opts.AddressPolicy)
	}
	return &Factory{opts: opts, base: base, fresh: withoutReuse(base)}
}

// maxResponseHeaderBytes bounds an ERP answer's headers.
const maxResponseHeaderBytes = 256 << 10

// NewBaseTransport returns the shared HTTP transport: pooled keep-alive
// connections, bounded dial and header waits, no proxy from the environment
// (ERP traffic must not silently detour through one).
func NewBaseTransport() *http.Transport { return newBaseTransport(nil) }

// newBaseTransport is NewBaseTransport dialling by policy.
func newBaseTransport(policy *netguard.Policy) *http.Transport {
	return &http.Transport{
		DialContext:           policy.DialContext(&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: 0, // the call budget, carried by the context, bounds the wait
		// The answer's headers are bounded like its body: Go's default
		// of 10 MiB of tiny header lines costs some 33 MiB of heap once
		// parsed. Real ERPs send a few kilobytes (Acumatica's cookies
		// included); HTTP/2 takes its bound from here too.
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		// Every connection keeps a read and a write buffer. Requests are
		// GETs of well under a kilobyte and answers of known length are
		// read past the buffer straight into the body's own; a longer
		// request or header line just takes another system call. Smaller
		// buffers than the default 4 KiB each make the many connections a
		// slow ERP keeps open cheaper.
		WriteBufferSize: 1 << 10,
		ReadBufferSize:  2 << 10,
	}
}

// Client returns an *http.Client for site that authorises requests with auth
// (which may be nil for unauthenticated requests). Only requests under the
// site's base URL (its origin and virtual directory) are authorised, and
// redirects are followed only within it. The client has no timeout of its
// own: the call's context carries the budget.
func (f *Factory) Client(site connector.Site, auth connector.Authorizer) *http.Client {
	scope := scopeOf(site.BaseURL)
	rt := &siteTransport{factory: f, scope: scope, auth: auth, kind: site.Kind, slug: site.Slug}
	return &http.Client{
		Transport: rt,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return toolerr.New(toolerr.UpstreamInvalidResponse, "the ERP redirected too many times")
			}
			if !scope.sameOrigin(req.URL) {
				return toolerr.Wrap(toolerr.UpstreamInvalidResponse, errRedirectedAway, "the ERP redirected to another host (%s); erpgate only follows redirects within the site", req.URL.Host)
			}
			if hasDotSegment(req.URL) {
				return toolerr.New(toolerr.UpstreamInvalidResponse, "the ERP redirected to an address with a \".\" or \"..\" step, which erpgate does not follow")
			}
			if !scope.contains(req.URL) {
				return toolerr.New(toolerr.UpstreamInvalidResponse, "the ERP redirected outside the site, to another path on its host; erpgate only follows redirects under the site's base URL")
			}
			return nil
		},
	}
}

func originOf(scheme, host string) string {
	return strings.ToLower(scheme) + "://" + strings.ToLower(host)
}

// siteTransport is the per-site RoundTripper.
type siteTransport struct {
	factory *Factory
	scope   siteScope
	auth    connector.Authorizer
	// effect is the effect of the tool whose call this client serves
	// (ToolClient); unset for other traffic. It decides retries (retry.go).
	effect connector.Effect
	// own tells the ERP's own 401 from another's, for a write tool's
	// requests (ToolClient).
	own connector.OwnUnauthorized
	// kind and slug name the site in metrics and spans.
	kind, slug string
}

var errForeignHost = errors.New("outbound: request to a host other than the site")

// errRedirectedAway is the cause of a redirect to another host refused.
var errRedirectedAway = errors.New("outbound: redirect to another host")

func (t *siteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.scope.sameOrigin(req.URL) {
		// A connector only ever talks to its site. Refusing here means a bug
		// can never send credentials, or anything else, to another host.
		return nil, toolerr.Wrap(toolerr.Internal, errForeignHost, "erpgate refused a request to a host other than the site")
	}
	if hasDotSegment(req.URL) {
		// A name or key of the call's arguments that is "." or "..", or
		// holds "/../": the ERP, or a proxy in front of it, would resolve
		// the path to another of the site's addresses (a read tool's GET
		// of a document would become one of an RPC method).
		return nil, toolerr.New(toolerr.InvalidArgument, "erpgate does not send a request whose path has a \".\" or \"..\" step: a name, key or value that is \".\" or \"..\", or holds \"/../\" or \"\\..\\\", would reach another address of the ERP. Nothing was sent; give the record's exact name")
	}
	resp, err := t.attempt(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		resp, err = t.retryRefused(req, resp)
	}
	if !t.factory.opts.Retry || !t.mayRetry(req) || !replayable(req) {
		return resp, err
	}
	wait, retry := retryDecision(resp, err)
	if !retry {
		return resp, err
	}
	if wait <= 0 {
		wait = t.factory.opts.RetryBackoff
	}
	if deadline, ok := req.Context().Deadline(); ok && time.Until(deadline) <= wait {
		// Waiting would spend the whole budget: report the first answer.
		return resp, err
	}
	if resp != nil {
		drainAndClose(resp)
	}
	timer := time.NewTimer(wait)
	select {
	case <-req.Context().Done():
		timer.Stop()
		return nil, req.Context().Err()
	case <-timer.C:
	}
	retryReq, err := repeatable(req)
	if err != nil {
		return nil, err
	}
	return t.attempt(retryReq)
}

// retryRefused handles a 401 to a request this transport authorised: if
// the authorizer can renew its credential, the refused one is marked and
// the request is sent once more. Otherwise the 401 is returned as it is.
// A write tool's request is sent again only after the ERP's own 401
// (ownUnauthorized): a proxy or an SSO layer in front of the ERP may
// answer 401 after it forwarded the request, and the change may have been
// made.
func (t *siteTransport) retryRefused(req *http.Request, resp *http.Response) (*http.Response, error) {
	ra, ok := t.auth.(connector.RenewableAuthorizer)
	if !ok || !t.scope.contains(req.URL) || !replayable(req) {
		return resp, nil
	}
	if t.writes() && !t.ownUnauthorized(resp) || !ra.RejectAuthorization(resp.Request) {
		return resp, nil
	}
	drainAndClose(resp)
	again, err := repeatable(req)
	if err != nil {
		return nil, err
	}
	return t.attempt(again)
}

// replayable reports whether req can be sent again: no body, or one that
// GetBody can produce anew.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// repeatable returns a copy of req to send again, with a fresh body.
func repeatable(req *http.Request) (*http.Request, error) {
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, toolerr.Wrap(toolerr.Internal, err, "could not repeat the request to the ERP")
		}
		again.Body = body
	}
	return again, nil
}

// attempt sends one request and wraps the response body with the bound.
func (t *siteTransport) attempt(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Header.Del("Authorization")
	if t.auth != nil && t.scope.contains(out.URL) {
		if err := t.auth.Authorize(out); err != nil {
			return nil, err
		}
	}
	ctx, span := startSpan(out.Context(), t.scope.prefix, out)
	if span != nil {
		out = out.WithContext(ctx)
	}
	started := time.Now()
	resp, err := t.transport().RoundTrip(out)
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	t.factory.opts.Metrics.Upstream(t.kind, t.slug, status, time.Since(started))
	endSpan(span, status, err)
	if err != nil {
		return nil, classifyTransportError(req, err)
	}
	if unreadableRedirect(out, resp) {
		// net/http's own error would quote the Location, which the ERP
		// writes and may fill with what the request sent.
		drainAndClose(resp)
		return nil, toolerr.New(toolerr.UpstreamInvalidResponse, "the ERP answered with a redirect erpgate could not read")
	}
	limit := t.factory.opts.MaxResponseBytes
	if resp.ContentLength > limit {
		drainAndClose(resp)
		return nil, tooLarge(limit)
	}
	resp.Body = &boundedBody{rc: resp.Body, remaining: limit, limit: limit}
	return resp, nil
}

// unreadableRedirect reports whether resp is a redirect that an
// *http.Client would follow but whose Location it cannot parse.
func unreadableRedirect(req *http.Request, resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return false
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return false
	}
	_, err := req.URL.Parse(loc)
	return err != nil
}

func isIdempotent(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// retryDecision says whether a first attempt is worth repeating, and how
// long the ERP asked us to wait.
func retryDecision(resp *http.Response, err error) (time.Duration, bool) {
	if err != nil {
		var te *toolerr.Error
		if errors.Is(err, netguard.ErrForbiddenAddress) {
			return 0, false // the address will not be public a moment later
		}
		if errors.As(err, &te) && te.Code == toolerr.UpstreamUnavailable {
			return 0, true
		}
		return 0, false
	}
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), true
	}
	return 0, false
}

func classifyTransportError(req *http.Request, err error) error {
	if ctxErr := req.Context().Err(); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(err, netguard.ErrForbiddenAddress) {
		// The operator's log and the admin API name the address; the
		// model is told only that the site is misconfigured.
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "erpgate does not connect to the ERP at %s because its address is not public; the operator must list it (%s) as a private ERP host", req.URL.Host, netguard.Listing(req.URL))
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return toolerr.Wrap(toolerr.UpstreamTimeout, err, "the ERP at %s did not answer in time", req.URL.Host)
	}
	return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "could not reach the ERP at %s; nothing was read, which does not mean there are no records", req.URL.Host)
}

// WithoutURL returns the failure an *http.Client reported in err without
// the URL its *url.Error names. For a redirect the client refused, that URL
// is the ERP's Location header as the ERP wrote it, which may quote what
// the request sent (a token request's client secret, code, refresh token
// or password): it must not reach an error, a log or a page. The
// transport's classified errors and context errors come back as they are;
// any other failure of the client (a Location it could not read) becomes
// UPSTREAM_INVALID_RESPONSE without its text. A redirect to another host
// is told without naming the host, which is the ERP's to choose as well.
// Other errors are returned unchanged.
func WithoutURL(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	var te *toolerr.Error
	switch {
	case errors.Is(ue.Err, errRedirectedAway):
		return toolerr.Wrap(toolerr.UpstreamInvalidResponse, errRedirectedAway, "the ERP redirected to another host; erpgate only follows redirects within the site")
	case errors.As(ue.Err, &te):
		return te
	case errors.Is(ue.Err, context.DeadlineExceeded) || errors.Is(ue.Err, context.Canceled):
		return ue.Err
	}
	return toolerr.New(toolerr.UpstreamInvalidResponse, "the ERP answered with a redirect erpgate could not follow")
}

func tooLarge(limit int64) *toolerr.Error {
	return toolerr.New(toolerr.ResponseTooLarge,
		"the ERP's answer is larger than %d MiB, the most erpgate reads for one call; narrow the request (filters, fewer fields, a smaller limit or date range)", limit>>20)
}

// ParseRetryAfter reads a Retry-After header (seconds or HTTP date).
// It returns 0 when the header is absent or unreadable.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil || errors.Is(err, strconv.ErrRange) {
		switch {
		case secs < 0:
			return 0
		case secs > int(math.MaxInt64/time.Second):
			// Beyond what a Duration holds: the longest wait, rather
			// than a product wrapped round to one the ERP did not ask.
			return math.MaxInt64
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
