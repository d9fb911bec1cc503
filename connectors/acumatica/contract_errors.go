package acumatica

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// defaultThrottleWait is the retry-after reported for Acumatica's 429,
// which carries no Retry-After: its licence queue drains within seconds.
const defaultThrottleWait = 10 * time.Second

// defaultBusyWait is the retry-after reported for Acumatica's 409, which
// carries no Retry-After: the long operation holding the form (a release,
// a shipment) usually ends within seconds.
const defaultBusyWait = 5 * time.Second

// busyWait is how long to wait before repeating a request Acumatica
// answered 409.
func busyWait(f failure) time.Duration {
	if f.retryAfter > 0 {
		return f.retryAfter
	}
	return defaultBusyWait
}

// busySentence is Acumatica's own 409 sentence, or erpgate's account of
// it when the answer had none.
func busySentence(f failure) string {
	if f.detail != "" && f.detail != withheldDetail {
		return f.detail
	}
	return "A long operation is running for this screen in the current session."
}

// contractError turns an unsuccessful contract-API answer into the error a
// model sees: what happened, in Acumatica's terms, and what to change.
func (c *client) contractError(ctx context.Context, r response, op contractOp) error {
	f := parseFailure(r, op.filter != "" || op.sel != "" || op.expand != "")
	ep := c.set.endpoint()
	switch f.kind {
	case failNoEntity:
		if len(op.keys) > 0 {
			return toolerr.New(toolerr.NotFound,
				"no %s record has %s at endpoint %s (Acumatica: \"No entity satisfies the condition.\"). Check the key values: document types are display names such as 'Invoice' or 'Credit Memo', and numbers keep their leading zeros; acumatica_list_entities with a filterExpression finds the right keys",
				op.entity, op.keysText(), ep)
		}
		return toolerr.New(toolerr.NotFound, "Acumatica found no %s record for this request at endpoint %s", op.entity, ep)
	case failMissing:
		return c.missingEntity(ctx, op.entity)
	case failQuery:
		if op.filter == "" {
			return toolerr.New(toolerr.InvalidArgument, "Acumatica rejected the query options of this %s request (%s); the query never ran", op.entity, f.detail)
		}
		fields := c.scalarFieldNames(ctx, op.entity)
		return toolerr.New(toolerr.InvalidArgument, "%s", explainFilter(dialectContract, op.filter, f.detail, fields, "entity "+op.entity))
	case failSelect:
		fields := c.scalarFieldNames(ctx, op.entity)
		msg := fmt.Sprintf("a name in select or expand is not a field or collection of %s at endpoint %s (Acumatica: KeyNotFoundException); names are case-sensitive, and a nested name such as MainContact/Email needs MainContact in expand. The query never ran", op.entity, ep)
		if bad := unknownNames(op.sel, fields, strings.Split(op.expand, ",")); len(bad) > 0 {
			msg += fmt.Sprintf(". Not fields of %s: %s", op.entity, strings.Join(bad, ", "))
		}
		if len(fields) > 0 {
			msg += ". acumatica_describe_entity lists every field and collection"
		}
		return toolerr.New(toolerr.InvalidArgument, "%s", msg)
	case failCannotOptimize:
		return toolerr.New(toolerr.InvalidArgument,
			"Acumatica cannot run this %s list as one optimised query (%s). Remove the fields or collections it names from select and expand, or read single records by key; the query never ran", op.entity, f.detail)
	}
	return c.commonError(f, "the "+op.entity+" entity")
}

// commonError maps the failures both APIs share. Where a kind is one HTTP
// status, the code is the shared mapping's (connector.HTTPError); the rest
// are Acumatica's own meanings (a sign-in page, HTTP 500 for refused
// credentials or a seat limit). object names what was
// read, for messages ("the Invoice entity", "the inquiry AR-OpenInvoices").
func (c *client) commonError(f failure, object string) error {
	switch f.kind {
	case failUnauthorized, failSignIn:
		if c.call.Principal.AuthType == "service_token" {
			return toolerr.New(toolerr.AuthExpired, "Acumatica did not accept the service connection's token (HTTP %d); ask the operator to check the connection's API user and OAuth client", f.status)
		}
		return toolerr.New(toolerr.AuthExpired, "Acumatica did not accept your sign-in (HTTP %d); reconnect this MCP server in your AI client to sign in again", f.status)
	case failCredentials:
		if c.call.Principal.AuthType == "service_token" {
			return toolerr.New(toolerr.AuthExpired, "Acumatica no longer signs in the service connection's API user (Acumatica: %q); ask the operator to update the connection's password", f.detail)
		}
		return toolerr.New(toolerr.AuthExpired, "Acumatica no longer accepts your sign-in (Acumatica: %q); reconnect this MCP server in your AI client to sign in again", f.detail)
	case failForbidden:
		return c.forbidden(f, object)
	case failSetup:
		// Not an outage: it lasts until an administrator enters the set-up,
		// so it is not offered as retryable. The site cannot serve this
		// data until then, which is what PERMISSION_DENIED also covers.
		return toolerr.New(toolerr.PermissionDenied,
			"Acumatica refused %s because this tenant's required configuration has not been entered (Acumatica: %q). An administrator of the Acumatica site has to complete that set-up; retrying will not help. Nothing was read or written, which does not mean there are no records",
			object, orUnknown(f.detail))
	case failThrottled:
		wait := f.retryAfter
		if wait <= 0 {
			wait = defaultThrottleWait
		}
		if c.call.Approved != nil {
			// An approved write's request (a read before its PUT, or the
			// PUT): Acumatica queued nothing and ran nothing of it.
			return connector.HTTPError(f.status, fmt.Sprintf(
				"Acumatica declined the request: more API requests are waiting than its licence allows (HTTP 429). Nothing was written; wait %d seconds and call again with the same arguments", int(wait.Seconds())), wait).WroteNothing()
		}
		return connector.HTTPError(f.status, fmt.Sprintf(
			"Acumatica declined the request: more API requests are waiting than its licence allows (HTTP 429). Nothing was read; wait %d seconds and retry, and avoid running many calls at once", int(wait.Seconds())), wait)
	case failBusy:
		// Not an unexpected answer: the form is busy with a long operation
		// (a release, a shipment) in this user's session, and the same
		// request succeeds once it ends.
		wait := busyWait(f)
		if c.call.Approved != nil {
			// An approved write's handler reading before it writes: the
			// engine tells an approved write's UPSTREAM_* as an outcome
			// not known, but nothing was sent to be written.
			return toolerr.New(toolerr.RateLimited,
				"Acumatica is busy with a long operation on the form behind %s in this session (Acumatica: %q), so the approved change was not sent. Nothing was written; wait %d seconds and call again with the same arguments",
				object, busySentence(f), int(wait.Seconds())).WithRetryAfter(wait).SaidByERP(busySentence(f)).WroteNothing()
		}
		return toolerr.New(toolerr.UpstreamUnavailable,
			"Acumatica is busy with a long operation on the form behind %s in this session (Acumatica: %q). Nothing was read, which does not mean there are no records; wait %d seconds and retry",
			object, busySentence(f), int(wait.Seconds())).WithRetryAfter(wait).SaidByERP(busySentence(f))
	case failLoginLimit:
		return toolerr.New(toolerr.RateLimited,
			"Acumatica refused the request: every API-user seat of its licence is in use (API Login Limit). Seats free up about an hour after a user's last sign-in; retry later").
			WithRetryAfter(time.Minute)
	case failRedirect:
		return toolerr.New(toolerr.UpstreamInvalidResponse, "Acumatica redirected the request (HTTP %d) instead of answering; nothing was read, which does not mean there are no records", f.status)
	case failBadRequest:
		return connector.HTTPError(f.status, "Acumatica rejected the request (HTTP 400): "+orUnknown(f.detail), 0)
	case failMissing:
		return connector.HTTPError(f.status, "Acumatica does not know "+object+" (HTTP 404)", 0)
	case failServer, failNoEntity, failCannotOptimize, failSelect, failQuery:
		return toolerr.New(toolerr.UpstreamUnavailable,
			"Acumatica failed with HTTP %d%s; nothing was returned, which does not mean there are no records", f.status, serverDetail(f))
	}
	return toolerr.New(toolerr.UpstreamInvalidResponse, "Acumatica answered with unexpected HTTP %d; nothing was read, which does not mean there are no records", f.status)
}

func orUnknown(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

func serverDetail(f failure) string {
	switch {
	case f.exceptionType != "" && f.detail != "":
		return fmt.Sprintf(" (%s: %s)", f.exceptionType, f.detail)
	case f.detail != "":
		return fmt.Sprintf(" (%s)", f.detail)
	}
	return ""
}

// forbidden explains a 403: which form the user's roles lack.
func (c *client) forbidden(f failure, object string) error {
	form := ""
	if f.screen != "" {
		form = f.screen
		if name := formOfScreen(f.screen); name != "" {
			form = name + " (" + f.screen + ")"
		}
		form = " to the form " + form
	}
	return connector.HTTPError(f.status, fmt.Sprintf(
		"Acumatica says this user has insufficient rights%s, which %s needs. Access follows the user's Acumatica roles; an administrator has to grant it. Nothing was read",
		form, object), 0)
}

// formOfScreen names a Default-endpoint form by its screen id.
func formOfScreen(screen string) string {
	for _, e := range defaultEntities {
		if e.Screen == screen && e.Form != "" {
			return e.Form
		}
	}
	return ""
}

// missingEntity explains a 404 from the contract API: either the site's
// endpoint version is not on the instance, or the entity is not in it.
func (c *client) missingEntity(ctx context.Context, entity string) error {
	ep := c.set.endpoint()
	if offered := c.endpoints(ctx); len(offered) > 0 && !slices.ContainsFunc(offered, func(e string) bool { return strings.EqualFold(e, ep) }) {
		return c.missingEndpoint(ctx)
	}
	return toolerr.New(toolerr.NotFound,
		"the entity %q does not exist in endpoint %s on this site (HTTP 404). Entities and their names differ between endpoints and versions; acumatica_list_schema_entities or acumatica_search_schema list what this endpoint has",
		entity, ep)
}

// scalarFieldNames returns the scalar field names of entity, for filter
// guidance: from the cached OpenAPI model when there is one, else from
// the entity's small $adHocSchema template. Failures yield nil.
func (c *client) scalarFieldNames(ctx context.Context, entity string) []string {
	if m, ok := c.cachedModel(ctx); ok {
		if e := m.entity(entity); e != nil {
			var names []string
			for _, f := range e.Fields {
				names = append(names, f.Name)
			}
			return names
		}
	}
	r, err := c.get(ctx, c.entityPath(entity, "$adHocSchema"), nil, "application/json")
	if err != nil || !r.ok() {
		return nil
	}
	var tmpl map[string]json.RawMessage
	if json.Unmarshal(r.body, &tmpl) != nil {
		return nil
	}
	var names []string
	for name, v := range tmpl {
		if name == "id" || name == "rowNumber" || name == "note" || name == "custom" || name == "_links" || name == "files" {
			continue
		}
		if len(v) > 0 && v[0] == '{' {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// unknownNames returns the top-level names in a $select that are neither
// scalar fields nor expanded collections, when the field list is known.
func unknownNames(sel string, fields, expanded []string) []string {
	if sel == "" || len(fields) == 0 {
		return nil
	}
	var bad []string
	for _, p := range strings.Split(sel, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(p), "/")
		if name != "" && !slices.Contains(fields, name) && !slices.Contains(expanded, name) {
			bad = append(bad, name)
		}
	}
	return bad
}
