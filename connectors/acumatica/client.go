package acumatica

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
)

// client reads one site's contract-based REST API and GI OData endpoint as
// the caller of one tool call.
//
// Requests are stateless: the only credential is the Authorization: Bearer
// header the platform's transport adds. No cookie is ever stored or sent
// (the client has no jar), because under the plain "api" scope Acumatica
// ties the server session to the token and closes it when the token
// expires; replaying session cookies is what api:concurrent_access needs,
// and erpgate never asks for that scope.
type client struct {
	conn *Connector
	call *connector.Call
	site connector.Site
	set  Settings
	http *http.Client
	// putSent is set once a write's PUT is about to be sent: until then
	// the handler has only read, and nothing can have been written.
	putSent bool
}

// unlessPut flags the failure of an approved write's handler as having
// written nothing (toolerr's NothingWritten: the approval holds for the
// same call) when its PUT was never sent: the handler had only read. A
// refusal because the ERP no longer holds what was approved is left as it
// is: that approval does not hold.
func (c *client) unlessPut(out any, err error) (any, error) {
	if err == nil || c.putSent {
		return out, err
	}
	return nil, toolerr.UnsentWrite(err)
}

func newClient(conn *Connector, call *connector.Call) *client {
	return &client{conn: conn, call: call, site: call.Site, set: siteSettings(call.Site), http: noRedirects(call.HTTP)}
}

// entityPath is the escaped path of an entity (and keys) in the configured
// endpoint: /entity/Default/24.200.001/SalesOrder/SO/000001.
func (c *client) entityPath(entity string, keys ...string) string {
	var b strings.Builder
	b.WriteString("/entity/")
	b.WriteString(url.PathEscape(c.set.EndpointName))
	b.WriteByte('/')
	b.WriteString(url.PathEscape(c.set.EndpointVersion))
	if entity != "" {
		b.WriteByte('/')
		b.WriteString(escapeSegment(entity))
	}
	for _, k := range keys {
		b.WriteByte('/')
		b.WriteString(escapeSegment(k))
	}
	return b.String()
}

// giPath is the escaped path of the tenant's GI OData service, plus rest
// (already escaped, starting with "/" when not empty).
func (c *client) giPath(rest string) string {
	return "/t/" + escapeSegment(c.set.Tenant) + "/api/odata/gi" + rest
}

// escapeSegment escapes one path segment. url.PathEscape leaves "|"
// alone, but Acumatica reads "|" in a key segment as a key separator, so
// it is escaped too.
func escapeSegment(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), "|", "%7C")
}

// response is an upstream answer read in full.
type response struct {
	status int
	header http.Header
	body   []byte
	// location is the Location of a 3xx answer.
	location string
	// sent is the access token the request carried: an answer that
	// quotes it has its message withheld (parseFailure).
	sent string
}

// get sends one GET and reads the answer. A 401 on a service connection's
// token, or Acumatica refusing its credentials (the session behind the
// token no longer signs in), rejects that token and repeats the request
// once with a fresh sign-in; a password that really changed then fails the
// sign-in itself, with AUTH_EXPIRED.
func (c *client) get(ctx context.Context, escapedPath string, q url.Values, accept string) (response, error) {
	return c.send(ctx, http.MethodGet, escapedPath, q, accept, nil, nil)
}

// send sends one request and reads the answer, with get's one repeat on
// a refused service token: a request Acumatica refused for its
// credentials did not run, so repeating it writes nothing twice.
func (c *client) send(ctx context.Context, method, escapedPath string, q url.Values, accept string, body []byte, header http.Header) (response, error) {
	for attempt := 0; ; attempt++ {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, c.site.URL(escapedPath, q), rd)
		if err != nil {
			return response{}, fmt.Errorf("build request: %w", err)
		}
		req.Header.Set("Accept", accept)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := c.http.Do(req)
		if err != nil {
			// The client's error names the request's URL with its query
			// (the call's $filter values): by scheme, host and path only.
			return response{}, outbound.BareURLs(err)
		}
		b, err := outbound.ReadBody(resp)
		if err != nil {
			return response{}, err
		}
		// A 500 refusing the credentials is repeated only for a read: a
		// PUT's 500 PXException comes the same from code that failed
		// after the save committed, so sending it again could save twice.
		// A 401 to a PUT is repeated only when it is Acumatica's own: a
		// proxy or an SSO layer in front of it may answer 401 after it
		// forwarded the PUT.
		_, refused := credentialsRefused(resp.StatusCode, b)
		unauthorized := resp.StatusCode == http.StatusUnauthorized && (method == http.MethodGet || ownUnauthorized(b))
		if (unauthorized || refused && method == http.MethodGet) && attempt == 0 && c.call.Principal.AuthType == "service_token" &&
			resp.Request != nil && c.conn.service.rejected(ctx, c.site, resp.Request.Header.Get("Authorization")) {
			continue
		}
		r := response{status: resp.StatusCode, header: resp.Header, body: b, location: resp.Header.Get("Location")}
		if resp.Request != nil {
			r.sent, _ = strings.CutPrefix(resp.Request.Header.Get("Authorization"), "Bearer ")
		}
		return r, nil
	}
}

func (r response) ok() bool { return r.status >= 200 && r.status <= 299 }

// empty reports a 2xx answer without a body, which is never "no records".
func (r response) empty() bool { return len(bytes.TrimSpace(r.body)) == 0 }
