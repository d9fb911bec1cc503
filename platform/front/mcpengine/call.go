package mcpengine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/rawjson"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/outbound"
	"github.com/erpgate/erpgate/platform/store/usage"
)

// toolHandler is the chain every call runs through.
func (e *Engine) toolHandler(ct *compiledTool) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		st := stateFrom(ctx)
		if st == nil {
			// Only ServeMCP reaches the mcp-go server; anything else is a
			// wiring bug, reported as a protocol error.
			return nil, errors.New("mcpengine: tool call without a session")
		}
		st.mu.Lock()
		st.tool = ct.tool.Name
		st.metrics = ct.metrics
		st.mu.Unlock()
		if ct.tool.Effect != connector.Read {
			return e.writeCall(ctx, st, ct, req)
		}

		data, err := e.runTool(ctx, st, ct, req.Params.RawArguments)
		if err != nil {
			return e.failure(ctx, st, ct, err), nil
		}
		st.setOutcome(usage.Success, "")
		return &mcp.CallToolResult{
			// The text block is the same JSON: share the bytes rather than
			// copy them (data is never modified once encoded).
			Content:              []mcp.Content{mcp.NewTextContent(unsafe.String(unsafe.SliceData(data), len(data)))},
			RawStructuredContent: data,
		}, nil
	}
}

// runTool validates, limits, calls the handler within the budget, then
// redacts and bounds the result. It returns the result as JSON.
func (e *Engine) runTool(ctx context.Context, st *requestState, ct *compiledTool, rawArgs json.RawMessage) ([]byte, error) {
	args, err := e.checkArgs(st, ct, rawArgs)
	if err != nil {
		return nil, err
	}
	ctx, end, err := e.bounded(ctx, st, ct)
	if err != nil {
		return nil, err
	}
	defer end.done()
	return e.invoke(ctx, st, ct, e.newCall(st, ct, args, ct.tool.Effect))
}

// checkArgs refuses a tool the site does not offer, and arguments that
// are invalid or name a redacted field; it returns them normalised.
func (e *Engine) checkArgs(st *requestState, ct *compiledTool, rawArgs json.RawMessage) (json.RawMessage, error) {
	if err := e.refuseUnoffered(st, ct); err != nil {
		return nil, err
	}
	args, err := validateArgs(ct.input, rawArgs)
	if err != nil {
		return nil, err
	}
	if err := refuseRedactedFields(ct, e.redactor(st, ct), args); err != nil {
		return nil, err
	}
	return args, nil
}

// bounds are what bounded took: the caller's limits, and the budget.
type bounds struct {
	release func() // nil without a limiter
	cancel  context.CancelFunc
}

// done gives the limits back and ends the budget.
func (b bounds) done() {
	b.cancel()
	if b.release != nil {
		b.release()
	}
}

// bounded gives the call what is left of the budget, the request's
// deadline (its arrival plus the budget: the waits at the door and for a
// work slot came out of it), and within it takes the caller's limits,
// when the engine has a limiter. A call whose time ran out while it
// waited is refused, and nothing of it sent to the ERP.
func (e *Engine) bounded(ctx context.Context, st *requestState, ct *compiledTool) (context.Context, bounds, error) {
	var b bounds
	st.limits.Store(limitsReached)
	deadline := st.deadline
	if deadline.IsZero() {
		deadline = time.Now().Add(e.opts.Budget)
	}
	ctx, b.cancel = context.WithDeadline(ctx, deadline)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		b.cancel()
		return ctx, bounds{}, e.waitedOut(ctx.Err())
	}
	if ct.tool.Effect != connector.Read && time.Until(deadline) < e.opts.Budget/2 {
		// A write that waited through half its budget could have the ERP
		// save it after erpgate gave up on the answer: an outcome not
		// known, which spends its approval. It is refused as busy before
		// anything of it is done, and its approval still holds.
		b.cancel()
		return ctx, bounds{}, toolerr.New(toolerr.RateLimited,
			"erpgate is busy: this write waited for a free slot until too little of its time was left (under half of %s) to be sure of the ERP's answer, and nothing was sent to the ERP; retry shortly", e.opts.Budget).
			WithRetryAfter(time.Second).WroteNothing()
	}
	if e.opts.Limiter != nil {
		_, span := startSpan(ctx, "limits")
		release, err := e.opts.Limiter.Acquire(ctx, st.session.Site.ID.String(), st.session.LimitKey)
		endSpan(span, err)
		if err != nil {
			b.cancel()
			var te *toolerr.Error
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.As(err, &te) {
				// The limits' database did not answer before the
				// request's time ran out.
				return ctx, bounds{}, e.waitedOut(err)
			}
			if toolerr.Classify(err).Code == toolerr.RateLimited {
				e.opts.Metrics.LimitRefused(ct.kind)
				// Charged to the caller's budget of refused calls
				// (ServeMCP), so that a caller that keeps calling past
				// its limits is soon refused at the door.
				st.limits.Store(limitsRefused)
			}
			return ctx, bounds{}, err
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// Granted only as the request's time ran out: nothing of
			// the call has been done, and nothing may be sent now.
			if release != nil {
				release()
			}
			b.cancel()
			return ctx, bounds{}, e.waitedOut(ctx.Err())
		}
		b.release = release
	}
	if e.opts.Tracer != nil && ct.routes != nil && trace.SpanFromContext(ctx).IsRecording() {
		// The ERP request spans name routes, not paths (outbound).
		ctx = outbound.WithRouteShape(ctx, ct.routes)
	}
	return ctx, b, nil
}

// waitedOut is the refusal of a call whose time (its arrival plus the
// budget) ran out while it waited in erpgate, before anything of it was
// sent to the ERP: busy, as a request refused at the door is.
func (e *Engine) waitedOut(err error) error {
	return toolerr.Wrap(toolerr.RateLimited, err,
		"erpgate is busy: this call waited for a free slot (or for its call limits) until its time ran out (%s from its arrival), and nothing was sent to the ERP; retry shortly", e.opts.Budget).
		WithRetryAfter(time.Second).WroteNothing()
}

// newCall is the connector's view of the call, its requests to the ERP
// retried by effect.
func (e *Engine) newCall(st *requestState, ct *compiledTool, args json.RawMessage, effect connector.Effect) *connector.Call {
	maxRecords := e.live.Load().maxRecordsOf(st.session.Site.ID)
	hc := &http.Client{Transport: localTransport{tool: ct.tool.Name}}
	if !ct.tool.Local {
		hc = e.upstreamClient(st, ct, effect)
	}
	call := &connector.Call{
		Site:       st.session.Site,
		HTTP:       hc,
		Args:       args,
		Principal:  st.session.Principal,
		MaxRecords: maxRecords,
	}
	if e.opts.Storage != nil {
		call.Cache = e.opts.Storage.Cache(st.session.Site.ID)
		call.Index = e.opts.Storage.SchemaIndex(st.session.Site.ID)
	}
	return call
}

// invoke runs the tool's handler and returns its result redacted and
// bounded, as JSON.
func (e *Engine) invoke(ctx context.Context, st *requestState, ct *compiledTool, call *connector.Call) ([]byte, error) {
	out, err := runHandler(ctx, ct, call)
	if err != nil {
		return nil, fmt.Errorf("%s/%s on %s: %w", ct.kind, ct.tool.Name, st.session.Site.Slug, err)
	}
	_, span := startSpan(ctx, "redaction")
	data, err := e.finishResult(ctx, st, ct, out)
	endSpan(span, err)
	return data, err
}

// runHandler runs the tool's handler. A panic (a connector's bug) fails
// the call as an internal error: the client gets the error envelope with
// a plain sentence, the operator's log the panic and its stack.
func runHandler(ctx context.Context, ct *compiledTool, call *connector.Call) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("panic in the tool's handler: %v\n%s", r, debug.Stack())
		}
	}()
	return ct.tool.Handler(ctx, call)
}

// upstreamClient is the call's HTTP client to its site: the outbound
// transport, retrying by the tool's effect (a read tool's requests
// whatever their method, a write tool's never), giving the request's
// admission slot back while it waits on the ERP. A write tool's request
// is sent again after a 401 only when the tool's connector says it is the
// ERP's own (connector.OwnUnauthorized).
func (e *Engine) upstreamClient(st *requestState, ct *compiledTool, effect connector.Effect) *http.Client {
	hc := e.opts.Outbound.ToolClient(st.session.Site, st.session.Authorizer, effect, e.own[ct.kind])
	if st.slot != nil {
		hc.Transport = &slotTransport{next: hc.Transport, slot: st.slot, st: st,
			writes: effect == connector.Write || effect == connector.Destructive}
	}
	return hc
}

// localTransport is the HTTP transport of a local tool's calls
// (connector.Tool.Local, advertised with openWorldHint false): it refuses
// every request, so a tool that says it reaches nothing outside erpgate
// cannot.
type localTransport struct{ tool string }

func (t localTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	return nil, toolerr.New(toolerr.Internal, "%s is a local tool: it may not reach the ERP", t.tool)
}

// finishResult encodes, redacts and bounds a handler's result.
func (e *Engine) finishResult(ctx context.Context, st *requestState, ct *compiledTool, out any) ([]byte, error) {
	var raw []byte
	var sensitive bool
	var err error
	redactor := e.redactor(st, ct)
	if r, ok := out.(connector.RawResult); ok {
		// Already encoded (the ERP's rows passed on): check it and look
		// for anything to redact in one reading that decodes nothing.
		if sensitive, err = redactor.InspectChecked(r); err == nil && sensitive {
			// It stopped at the first string to redact: check the rest
			// too (rare), as the decoding below would let trailing data
			// or invalid UTF-8 through.
			err = rawjson.Check(r)
		}
		if err != nil {
			return nil, toolerr.Wrap(toolerr.Internal, err, "the result of this call could not be encoded")
		}
		raw = r
	} else {
		if raw, err = json.Marshal(out); err != nil {
			return nil, toolerr.Wrap(toolerr.Internal, err, "the result of this call could not be encoded")
		}
		sensitive = redactor.Inspect(raw)
	}
	if !sensitive {
		// Nothing to redact (the common case): the encoding is the result,
		// with no decode, walk and second encode.
		if len(raw) == 0 || raw[0] != '{' {
			return nil, toolerr.New(toolerr.Internal, "the tool returned something other than a JSON object")
		}
		return e.boundResult(raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep amounts exactly as the ERP sent them
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, toolerr.Wrap(toolerr.Internal, err, "the result of this call could not be encoded")
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, toolerr.New(toolerr.Internal, "the tool returned something other than a JSON object")
	}
	doc, red := redactor.Apply(doc)
	if red.Count > 0 {
		st.setRedacted(red.Count, red.Paths)
		e.log.Info("field_redaction",
			zap.String("event", "field_redaction"),
			zap.String("site_id", st.session.Site.ID.String()),
			zap.String("site_slug", st.session.Site.Slug),
			zap.String("request_id", st.id),
			zap.String("tool", ct.tool.Name),
			zap.Strings("redacted_fields", red.Paths),
			zap.Int("redacted_count", red.Count))
	}
	// Encoded again even when nothing was redacted: the scan saw something
	// sensitive in raw that the decoded document may not hold, such as
	// the first of two members of one name (decoding keeps the last), and
	// raw must not go out with it.
	if raw, err = json.Marshal(doc); err != nil {
		return nil, toolerr.Wrap(toolerr.Internal, err, "the result of this call could not be encoded")
	}
	return e.boundResult(raw)
}

// boundResult refuses a result larger than one call may return.
func (e *Engine) boundResult(raw []byte) ([]byte, error) {
	if len(raw) > e.opts.MaxResultBytes {
		return nil, toolerr.New(toolerr.ResponseTooLarge,
			"the result is %d KiB, more than the %d KiB one call may return; ask for fewer rows or fields, or a narrower range", len(raw)>>10, e.opts.MaxResultBytes>>10)
	}
	return raw, nil
}

// failure maps an error to the result the client sees and records the
// outcome. A call whose client went away is recorded as cancelled.
func (e *Engine) failure(ctx context.Context, st *requestState, ct *compiledTool, err error) *mcp.CallToolResult {
	te := toolerr.Classify(err)
	// An ERP's error text can quote other records' values, SQL, a
	// traceback or credentials: it passes through the same redaction as
	// results (issue 14).
	message, _ := e.redactor(st, ct).RedactText(te.Message)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		st.setOutcome(usage.Cancelled, "")
	} else {
		st.setOutcome(usage.Error, string(te.Code))
	}
	fields := []zap.Field{
		zap.String("site_slug", st.session.Site.Slug), zap.String("request_id", st.id),
		zap.String("tool", ct.tool.Name), zap.String("error_code", string(te.Code)),
	}
	if te.Code == toolerr.Internal {
		// The cause may be the client's error, which names the request's
		// URL with its query: the call's arguments (a $filter's values).
		e.log.Error("tool call failed", append(fields, zap.Error(outbound.BareURLs(err)))...)
	} else if te.Code == toolerr.ApprovalRequired {
		// The message carries the approval link, whose check value is the
		// client's alone: its code says enough.
		e.log.Debug("tool call failed", fields...)
	} else {
		e.log.Debug("tool call failed", append(fields, zap.String("reason", message))...)
	}
	var unknown unknownOutcome
	body := map[string]any{"code": string(te.Code), "message": message, "retryable": te.Retryable() && !errors.As(err, &unknown)}
	var link *approvalLink
	if te.Code == toolerr.ApprovalRequired && errors.As(err, &link) {
		body["approval_url"] = link.url
	}
	if te.RetryAfter > 0 {
		body["retry_after_seconds"] = retryAfterSeconds(te.RetryAfter)
	}
	envelope := map[string]any{"ok": false, "status": "error", "error": body}
	data, _ := json.Marshal(envelope)
	return &mcp.CallToolResult{
		Content:              []mcp.Content{mcp.NewTextContent(string(data))},
		RawStructuredContent: data,
		IsError:              !st.session.ErrorsAsResults,
	}
}

// validateArgs checks raw arguments against the compiled input schema and
// returns them normalised: absent or null arguments become {}, and an
// argument whose value is null is left out, as if the client had not sent
// it (clients that send every parameter send null for those they have no
// value for; no tool's input takes null as a value).
func validateArgs(s *jsonschema.Schema, raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil {
		return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments are not valid JSON")
	}
	if n, ok := oversizedNumber(doc); ok {
		return nil, toolerr.New(toolerr.InvalidArgument, "invalid arguments: the number %s is too long or too large for any argument", shortNumber(n))
	}
	if obj, ok := doc.(map[string]any); ok && hasNullMember(obj) {
		for k, v := range obj {
			if v == nil {
				delete(obj, k)
			}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(obj); err != nil {
			return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments are not valid JSON")
		}
		trimmed = bytes.TrimSpace(buf.Bytes())
	}
	if err := s.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "invalid arguments: %s", describeValidation(ve))
		}
		return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "invalid arguments")
	}
	return trimmed, nil
}

// hasNullMember reports whether an argument object has a member whose
// value is null.
func hasNullMember(obj map[string]any) bool {
	for _, v := range obj {
		if v == nil {
			return true
		}
	}
	return false
}

// describeValidation lists each failing location once, in erpgate's
// words and in a form a model can act on: "/limit: must be integer, not
// string; unknown argument 'foo'". The validator's own text (and Go's, for
// a date that does not exist) never reaches the client.
func describeValidation(ve *jsonschema.ValidationError) string {
	var parts []string
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		alt, isAlt := alternatives(e)
		if len(e.Causes) == 0 || isAlt {
			msg := instanceLoc(e) + ": " + alt
			if !isAlt {
				msg = instanceLoc(e) + ": " + violation(e.ErrorKind, len(e.InstanceLocation) == 0)
			}
			if !seen[msg] {
				seen[msg] = true
				parts = append(parts, msg)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	settle(ve)
	walk(ve)
	if len(parts) > 8 {
		parts = append(parts[:8], fmt.Sprintf("and %d more", len(parts)-8))
	}
	return strings.Join(parts, "; ")
}

func instanceLoc(e *jsonschema.ValidationError) string {
	if len(e.InstanceLocation) == 0 {
		return "arguments"
	}
	return "/" + strings.Join(e.InstanceLocation, "/")
}

// alternatives says what is wrong with a value that must fit one form of
// an anyOf or a oneOf: the forms it fits none of, as alternatives ("must
// be string or integer, not boolean"; "must be at most 3 characters long,
// or ... does not match the pattern ..."), or that it fits more than one
// form of a oneOf. false when e is not such an error.
func alternatives(e *jsonschema.ValidationError) (string, bool) {
	switch e.ErrorKind.(type) {
	case *kind.OneOf:
		if len(e.Causes) == 0 {
			return "fits more than one of the forms it may take; it must fit exactly one", true
		}
	case *kind.AnyOf:
	default:
		return "", false
	}
	var forms, types []string
	got, sameType := "", true
	for _, c := range e.Causes {
		var leaves []string
		var walk func(l *jsonschema.ValidationError)
		walk = func(l *jsonschema.ValidationError) {
			if alt, ok := alternatives(l); ok {
				leaves = append(leaves, relativeLoc(l, e)+alt)
				sameType = false
				return
			}
			if len(l.Causes) == 0 {
				leaves = append(leaves, relativeLoc(l, e)+violation(l.ErrorKind, len(l.InstanceLocation) == 0))
				if k, ok := l.ErrorKind.(*kind.Type); ok && len(l.InstanceLocation) == len(e.InstanceLocation) && (got == "" || got == k.Got) {
					got = k.Got
					types = append(types, k.Want...)
				} else {
					sameType = false
				}
			}
			for _, sub := range l.Causes {
				walk(sub)
			}
		}
		walk(c)
		if len(leaves) != 1 {
			sameType = false
		}
		forms = append(forms, strings.Join(leaves, " and "))
	}
	if sameType && len(types) > 0 {
		return fmt.Sprintf("must be %s, not %s", strings.Join(slices.Compact(types), " or "), got), true
	}
	return strings.Join(forms, ", or "), true
}

// relativeLoc names where l is, below e, as "/a/b " ("" when l is e's
// value itself).
func relativeLoc(l, e *jsonschema.ValidationError) string {
	if len(l.InstanceLocation) <= len(e.InstanceLocation) {
		return ""
	}
	return "/" + strings.Join(l.InstanceLocation[len(e.InstanceLocation):], "/") + " "
}

// violation says what is wrong with a value, by the rule it broke; root
// says the value is the arguments object itself.
func violation(k jsonschema.ErrorKind, root bool) string {
	member := "member"
	if root {
		member = "argument"
	}
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("must be %s, not %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		return "must be one of " + jsonValues(k.Want)
	case *kind.Const:
		return "must be " + jsonValues([]any{k.Want})
	case *kind.Format:
		switch k.Want {
		case "date":
			return jsonValues([]any{k.Got}) + " is not a date that exists, written YYYY-MM-DD"
		case "date-time":
			return jsonValues([]any{k.Got}) + " is not a date and time written as RFC 3339 has it, such as 2025-06-30T09:00:00Z"
		}
		return jsonValues([]any{k.Got}) + " is not a valid " + k.Want
	case *kind.Required:
		return "missing required " + plural(member, len(k.Missing)) + " " + quoted(k.Missing)
	case *kind.AdditionalProperties:
		return "unknown " + plural(member, len(k.Properties)) + " " + quoted(k.Properties)
	case *kind.Minimum:
		return "must be at least " + ratText(k.Want)
	case *kind.Maximum:
		return "must be at most " + ratText(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be more than " + ratText(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be less than " + ratText(k.Want)
	case *kind.MultipleOf:
		return "must be a multiple of " + ratText(k.Want)
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d characters long", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters long", k.Want)
	case *kind.Pattern:
		return jsonValues([]any{k.Got}) + " does not match the pattern " + k.Want
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d %s", k.Want, plural("item", k.Want))
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d %s", k.Want, plural("item", k.Want))
	case *kind.UniqueItems:
		return fmt.Sprintf("items %d and %d are the same; each may be given once", k.Duplicates[0], k.Duplicates[1])
	case *kind.MinProperties:
		return fmt.Sprintf("must have at least %d %s", k.Want, plural(member, k.Want))
	case *kind.MaxProperties:
		return fmt.Sprintf("must have at most %d %s", k.Want, plural(member, k.Want))
	case *kind.FalseSchema:
		return "is not allowed"
	}
	return "does not match the tool's input schema (" + strings.Join(k.KeywordPath(), "/") + ")"
}

func plural(word string, n int) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// quoted lists names as 'a', 'b'.
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}

// jsonValues lists values as JSON, at most 12 of them.
func jsonValues(vs []any) string {
	var out []string
	for i, v := range vs {
		if i == 12 {
			out = append(out, fmt.Sprintf("and %d more", len(vs)-i))
			break
		}
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(fmt.Sprint(v))
		}
		out = append(out, string(b))
	}
	return strings.Join(out, ", ")
}

// ratText writes a schema's bound as a decimal.
func ratText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	return strings.TrimRight(strings.TrimRight(r.FloatString(10), "0"), ".")
}

// settle puts a validation error's causes, and the names of an
// additionalProperties error, in one order: the validator finds them by
// walking a map, so the same arguments would otherwise get their message in
// a different order from one call to the next.
func settle(ve *jsonschema.ValidationError) {
	if k, ok := ve.ErrorKind.(*kind.AdditionalProperties); ok {
		slices.Sort(k.Properties)
	}
	for _, c := range ve.Causes {
		settle(c)
	}
	key := func(e *jsonschema.ValidationError) string {
		return strings.Join(e.InstanceLocation, "/") + "\x00" + strings.Join(e.ErrorKind.KeywordPath(), "/") + "\x00" + e.SchemaURL
	}
	slices.SortStableFunc(ve.Causes, func(a, b *jsonschema.ValidationError) int { return strings.Compare(key(a), key(b)) })
}

// retryAfterSeconds is a positive wait in whole seconds, rounded up. It
// divides before rounding: adding 999,999,999 ns first would overflow for
// the longest waits an ERP's Retry-After can ask.
func retryAfterSeconds(d time.Duration) int {
	secs := d / time.Second
	if d%time.Second != 0 {
		secs++
	}
	return int(secs)
}

// oversizedNumber returns a number of doc whose literal is longer, or
// whose value larger or finer, than connector.MaxNumberBits allows: the
// validator and the tools read numbers with math/big, where a ten-byte
// literal such as 1e-1000000 costs tens of milliseconds each time.
func oversizedNumber(doc any) (json.Number, bool) {
	switch x := doc.(type) {
	case map[string]any:
		for _, v := range x {
			if n, ok := oversizedNumber(v); ok {
				return n, true
			}
		}
	case []any:
		for _, v := range x {
			if n, ok := oversizedNumber(v); ok {
				return n, true
			}
		}
	case json.Number:
		s := string(x)
		if len(s) > connector.MaxNumberBits/3 {
			return x, true
		}
		exp := 0
		if i := strings.IndexAny(s, "eE"); i >= 0 {
			var err error
			if exp, err = strconv.Atoi(s[i+1:]); err != nil {
				return x, true
			}
		}
		// A literal of d characters with exponent e is at most
		// 10^(d+|e|) in numerator and denominator, under 3.33 (d+|e|)
		// bits: only a long one needs its exact value read.
		if len(s)+max(exp, -exp) <= connector.MaxNumberBits*3/10 {
			return "", false
		}
		if _, ok := connector.ExactNumber(s); !ok {
			return x, true
		}
	}
	return "", false
}

// shortNumber is a number literal for a message, at most 24 bytes.
func shortNumber(n json.Number) string {
	if s := string(n); len(s) > 24 {
		return s[:12] + "…" + s[len(s)-8:]
	}
	return string(n)
}
