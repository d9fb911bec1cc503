package acumatica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/redact"
)

// The write tools (tools_write_*.go) change Acumatica through the
// contract API's PUT, which inserts or updates ("upserts") a record:
// without the key fields it inserts (numbering the document), with them
// it updates the record they name. Each tool has a Preview, which only
// reads, as the caller, and a Handler, which the engine runs once a person
// approved that preview (docs/writes.md).
//
// Acumatica has no optimistic concurrency on the contract API: no ETag,
// and If-Match accepts only "*" (the record must exist). So a Handler that
// updates re-reads the fields it sets and refuses, with APPROVAL_EXPIRED,
// when they no longer hold what the person saw; a change that lands
// between that read and the PUT (a fraction of a second) is not detected.

// approvalHint ends every write tool's description.
const approvalHint = " The call does not write at once: erpgate first answers with a link to an approval page that shows exactly what will change. " +
	"Show the link to the user, ask them to approve there, then call this tool again with exactly the same arguments; only that call writes, once."

// putHeaders are the conditional headers of a PUT: insertOnly makes it
// fail instead of updating an existing record, mustExist instead of
// inserting one.
func putHeaders(insertOnly, mustExist bool) http.Header {
	h := http.Header{}
	switch {
	case insertOnly:
		h.Set("If-None-Match", "*")
	case mustExist:
		h.Set("If-Match", "*")
	}
	return h
}

// put sends one PUT of body to entity and returns the saved record,
// decoded. op describes the write for errors.
func (c *client) put(ctx context.Context, op contractOp, body map[string]any, header http.Header) (map[string]any, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", op.entity, err)
	}
	q := url.Values{}
	if op.expand != "" {
		q.Set("$expand", op.expand)
	}
	c.putSent = true
	r, err := c.send(ctx, http.MethodPut, c.entityPath(op.entity), q, "application/json", raw, header)
	if err != nil {
		return nil, fmt.Errorf("put %s: %w", op.entity, err)
	}
	if !r.ok() {
		return nil, c.writeError(ctx, r, op)
	}
	var rec map[string]any
	if err := c.decode(r, &rec, "the saved "+op.entity+" record"); err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, invalidResponse("Acumatica answered with null instead of the saved %s record", op.entity)
	}
	return rec, nil
}

// writeError turns an unsuccessful PUT into the error a model sees.
// Acumatica's own words are kept (cleaned): the model has to correct the
// arguments from them.
func (c *client) writeError(ctx context.Context, r response, op contractOp) error {
	f := parseFailure(r, false)
	if r.status == http.StatusUnauthorized && !ownUnauthorized(r.body) {
		// Not Acumatica's refusal of the token, which comes before the
		// PUT runs: a proxy or an SSO layer in front of it may have
		// answered after it forwarded the PUT.
		return toolerr.New(toolerr.UpstreamInvalidResponse,
			"the approved change of the %s record was answered with HTTP 401, but not in Acumatica's own words (a proxy or sign-in layer in front of Acumatica may have answered after it received the change), so whether Acumatica saved it is not known: look at the document in Acumatica before trying again",
			op.entity)
	}
	if refusalStatus(r.status) && !ownRefusal(r.status, r.body) {
		// A status Acumatica refuses a save with before running it, but
		// not in Acumatica's words: a proxy or load balancer in front of
		// it may have answered after Acumatica received (and saved) the
		// record, so whether it was saved is not known.
		return toolerr.New(toolerr.UpstreamInvalidResponse,
			"the approved change of the %s record was answered with HTTP %d, but not in Acumatica's own words (a proxy or load balancer in front of Acumatica may have answered after it received the change), so whether Acumatica saved it is not known: look at the document in Acumatica before trying again",
			op.entity, r.status)
	}
	if r.sent != "" && quotesSent("", r.body, r.sent) {
		// An answer quoting the request's access token is read for its
		// status only (parseFailure withheld its message).
		r.body = nil
	}
	err := c.writeRefusal(ctx, r, f, op)
	switch {
	case r.status == http.StatusUnprocessableEntity, r.status == http.StatusForbidden, r.status == http.StatusPreconditionFailed,
		r.status == http.StatusBadRequest, f.kind == failBusy:
		// Acumatica refused the save before it ran: nothing was written,
		// and the approval holds for the same call. A 5xx is never such a
		// refusal, a PXException or "No entity satisfies the condition"
		// neither: Acumatica answers one the same
		// whether the save was rolled back or its code failed after the
		// save committed (RowPersisted with TranStatus.Completed, a
		// Persist override after base.Persist, the saved record read
		// back for the answer).
		var te *toolerr.Error
		if errors.As(err, &te) {
			te.WroteNothing()
		}
	}
	return err
}

// refusalStatus reports whether Acumatica answers a PUT it refused before
// saving anything with status: 400 (the request is invalid), 403 (the
// user's roles), 409 (a long operation holds the form), 412 (If-Match or
// If-None-Match), 422 (validation) and 429 (the licence's request queue).
func refusalStatus(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusForbidden, http.StatusConflict, http.StatusPreconditionFailed,
		http.StatusUnprocessableEntity, http.StatusTooManyRequests:
		return true
	}
	return false
}

// ownRefusal reports whether an answer of a refusalStatus is in
// Acumatica's own shape (erp-api/acumatica/api-facts.md §3): 409 and 429
// in Acumatica's sentences (for 429 also IIS's custom-errors text, the
// body its licence queue has been seen to decline with); 400, 403 and
// 412 as ASP.NET's HttpError carrying what Acumatica's carry (400 its
// modelState or "The request is invalid.", 403 its "insufficient rights
// to access" sentence, 412 a sentence about the entity or record; any of
// them a PX exception); 422 as the entity with an "error" on the record
// or on the fields and lines it refused. Anything else (an HTML page, an
// empty body, a gateway's own JSON such as {"message":"Forbidden"}) may
// come from something in front of Acumatica, after the request reached
// it.
func ownRefusal(status int, body []byte) bool {
	var e struct {
		Message *string `json:"message"`
	}
	isObject := json.Unmarshal(body, &e) == nil && strings.HasPrefix(strings.TrimSpace(string(body)), "{")
	message := ""
	if isObject && e.Message != nil {
		message = *e.Message
	}
	he, isHTTPError := parseHTTPError(body)
	px := isHTTPError && strings.HasPrefix(he.ExceptionType, "PX.")
	switch status {
	case http.StatusConflict:
		return strings.Contains(message, "A long operation is running")
	case http.StatusTooManyRequests:
		return strings.Contains(message, "exceeded the limit imposed by the license") || loginLimit.MatchString(message) ||
			!isObject && strings.TrimSpace(string(body)) == iisCustomError
	case http.StatusBadRequest:
		return isHTTPError && (he.ModelState != nil || slices.Contains(invalidRequest, strings.TrimSpace(he.Message)) || px)
	case http.StatusForbidden:
		return isHTTPError && (strings.Contains(he.Message, "insufficient rights to access") || px)
	case http.StatusPreconditionFailed:
		return isHTTPError && (preconditionFailed.MatchString(strings.TrimSpace(he.Message)) || px)
	case http.StatusUnprocessableEntity:
		return entityWithErrors(body)
	}
	return false
}

// invalidRequest are the messages of Acumatica's 400: ASP.NET's for an
// invalid request (recorded, samples/customer-put-empty-body-400.json)
// and the contract API's documented one.
var invalidRequest = []string{"The request is invalid.", "The data specified in the request is invalid."}

// preconditionFailed is the form of Acumatica's 412 messages: a sentence
// about the entity or record that If-Match or If-None-Match named ("The
// entity already exists in the database and cannot be inserted.").
var preconditionFailed = regexp.MustCompile(`(?i)\b(entity|record)\b.*\.$`)

// httpErrorBody is ASP.NET Web API's HttpError, the body of the contract
// API's refusals (swagger-Default-24.200.001.json, HttpError).
type httpErrorBody struct {
	Message       string          `json:"message"`
	ModelState    json.RawMessage `json:"modelState"`
	ExceptionType string          `json:"exceptionType"`
}

// httpErrorMembers are the members an HttpError may have.
var httpErrorMembers = []string{"message", "messageDetail", "exceptionMessage", "exceptionType", "stackTrace", "modelState"}

// parseHTTPError reads body as an HttpError: a JSON object of its members
// only, with a message. A gateway's JSON with other members
// ({"statusCode": 403, "message": …}) is not one.
func parseHTTPError(body []byte) (httpErrorBody, bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil || members == nil {
		return httpErrorBody{}, false
	}
	for k := range members {
		if !slices.Contains(httpErrorMembers, k) {
			return httpErrorBody{}, false
		}
	}
	var e httpErrorBody
	if json.Unmarshal(body, &e) != nil || strings.TrimSpace(e.Message) == "" {
		return httpErrorBody{}, false
	}
	if m := bytes.TrimSpace(e.ModelState); len(m) == 0 || m[0] != '{' {
		e.ModelState = nil
	}
	return e, true
}

// entityWithErrors reports whether body is the entity Acumatica answers a
// PUT it refused with (422): a JSON object of its system members (id,
// rowNumber, note, error, custom, _links) and fields ({"value": …}
// wrappers, linked entities, detail lines), at least one field or its id,
// with an "error" on the record or on a field or line. Errors on fields
// alone are Acumatica's refusal too: nothing was saved.
func entityWithErrors(body []byte) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil || members == nil {
		return false
	}
	fields := 0
	for k, v := range members {
		switch k {
		case "id":
			fields++
			continue
		case "rowNumber", "note", "error", "custom", "_links":
			continue
		}
		if v = bytes.TrimSpace(v); len(v) == 0 || v[0] != '{' && v[0] != '[' {
			return false
		}
		fields++
	}
	if fields == 0 {
		return false
	}
	var rec map[string]any
	if json.Unmarshal(body, &rec) != nil {
		return false
	}
	var errs []string
	collectFieldErrors(rec, "", &errs)
	top, _ := rec["error"].(string)
	return strings.TrimSpace(top) != "" || len(errs) > 0
}

// iisCustomError is the text IIS answers with when Acumatica's licence
// queue declines a request (429).
const iisCustomError = "The custom error module does not recognize this error."

// writeRefusal is writeError's sentence for r, read as f.
func (c *client) writeRefusal(ctx context.Context, r response, f failure, op contractOp) error {
	switch {
	case r.status == http.StatusUnprocessableEntity:
		return validationError(r.body, op)
	case r.status == http.StatusForbidden:
		return c.writeForbidden(f, op).SaidByERP(f.detail)
	case r.status == http.StatusPreconditionFailed:
		if len(op.keys) > 0 {
			return toolerr.New(toolerr.NotFound, "no %s record has %s any more (Acumatica: %q); nothing was written", op.entity, op.keysText(), f.detail).SaidByERP(f.detail)
		}
		return toolerr.New(toolerr.InvalidArgument, "Acumatica refused to insert the %s record (Acumatica: %q); nothing was written", op.entity, f.detail).SaidByERP(f.detail)
	case r.status == http.StatusBadRequest:
		detail := badRequestDetail(r.body, f.detail)
		e := connector.HTTPError(r.status, fmt.Sprintf("Acumatica rejected the %s request (HTTP 400): %s. Nothing was written", op.entity, detail), 0)
		if detail != orUnknown("") {
			e.SaidByERP(detail)
		}
		return e
	case f.kind == failBusy:
		// Acumatica refused the save before it ran: a long operation holds
		// the form in this session. Told as refused, not as an outcome
		// unknown (UPSTREAM_*: "check the ERP"), and retryable:
		// RATE_LIMITED is the code that says both. Certain to have written
		// nothing, so the approval holds: the same call runs it again once
		// the operation has ended.
		wait := busyWait(f)
		return toolerr.New(toolerr.RateLimited,
			"Acumatica did not save the %s record: a long operation is running on its form in this session (Acumatica: %q). Nothing was written; wait %d seconds and call again with the same arguments",
			op.entity, busySentence(f), int(wait.Seconds())).WithRetryAfter(wait).SaidByERP(busySentence(f))
	case f.kind == failNoEntity:
		// A PUT whose record is missing is refused 412 (If-Match: *);
		// this 500 may come from reading the saved record back for the
		// answer, after the save.
		return toolerr.New(toolerr.UpstreamUnavailable, "Acumatica failed with HTTP %d while saving the %s record (Acumatica: \"No entity satisfies the condition.\"); it may have saved it before failing: look at the document in Acumatica before trying again", f.status, op.entity)
	case f.kind == failCredentials:
		// PXLogin's words, but a PXException all the same: whether it
		// came before the save or after it committed is not known.
		return toolerr.New(toolerr.UpstreamUnavailable, "Acumatica failed with HTTP %d while saving the %s record%s; it may have saved it before failing: look at the document in Acumatica before trying again", f.status, op.entity, serverDetail(f)).
			SaidByERP(f.detail)
	case f.kind == failServer && strings.HasPrefix(f.exceptionType, "PX"):
		// PX.Data.PXException and its kin are mostly the business logic
		// saying no ("The document is on hold"), the save rolled back;
		// but the same answer comes from code that failed after the save
		// committed, so whether it was saved is not known.
		return toolerr.New(toolerr.UpstreamUnavailable, "Acumatica failed with HTTP %d while saving the %s record%s; it may have saved it before failing: look at the document in Acumatica before trying again", f.status, op.entity, serverDetail(f)).
			SaidByERP(f.detail)
	case f.kind == failServer:
		return toolerr.New(toolerr.UpstreamUnavailable, "Acumatica failed with HTTP %d while saving the %s record%s; it may have saved it before failing: look at the document in Acumatica before trying again", f.status, op.entity, serverDetail(f))
	case f.kind == failMissing:
		return c.missingEntity(ctx, op.entity)
	}
	return c.commonError(f, "saving the "+op.entity+" record")
}

// writeForbidden is a 403 on a write: the user's roles lack the right to
// save on the form (View Only is not enough).
func (c *client) writeForbidden(f failure, op contractOp) *toolerr.Error {
	form := "the form behind the " + op.entity + " entity"
	if f.screen != "" {
		form = "the form " + f.screen
		if name := formOfScreen(f.screen); name != "" {
			form = "the form " + name + " (" + f.screen + ")"
		}
	}
	return connector.HTTPError(f.status, fmt.Sprintf(
		"Acumatica refused to save the %s record: this user's roles do not allow changes on %s (Acumatica: %q). An administrator has to grant the right; nothing was written",
		op.entity, form, orUnknown(f.detail)), 0)
}

// badRequestDetail is a 400's message with its modelState messages.
func badRequestDetail(body []byte, detail string) string {
	var e struct {
		Message    string              `json:"message"`
		ModelState map[string][]string `json:"modelState"`
	}
	if json.Unmarshal(body, &e) != nil {
		return orUnknown(detail)
	}
	parts := []string{}
	if e.Message != "" {
		parts = append(parts, cleanDetail(e.Message))
	}
	keys := make([]string, 0, len(e.ModelState))
	for k := range e.ModelState {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, m := range e.ModelState[k] {
			if k != "" {
				m = k + ": " + m
			}
			parts = append(parts, cleanDetail(m))
		}
	}
	if len(parts) == 0 {
		return orUnknown(detail)
	}
	return strings.Join(parts, " ")
}

// maxFieldErrors bounds the field errors one message lists.
const maxFieldErrors = 20

// validationError reads a 422: the record as Acumatica tried to save it,
// with a record-level "error" and an "error" on each field it refused,
// in linked entities and detail lines too.
func validationError(body []byte, op contractOp) error {
	var rec map[string]any
	if json.Unmarshal(body, &rec) != nil {
		return toolerr.New(toolerr.InvalidArgument, "Acumatica refused to save the %s record (HTTP 422) without saying why; nothing was written", op.entity)
	}
	var fields, said []string
	collectFieldErrors(rec, "", &fields)
	msg := fmt.Sprintf("Acumatica refused to save the %s record (HTTP 422)", op.entity)
	if top, _ := rec["error"].(string); top != "" {
		msg += ": " + cleanDetail(top)
		said = append(said, cleanDetail(top))
	} else {
		msg += "."
	}
	said = append(said, fieldMessages(rec, "")...)
	if len(fields) > maxFieldErrors {
		fields = append(fields[:maxFieldErrors], fmt.Sprintf("and %d more", len(fields)-maxFieldErrors))
	}
	if len(fields) > 0 {
		msg += " Fields: " + strings.Join(fields, "; ") + "."
	}
	return toolerr.New(toolerr.InvalidArgument, "%s Nothing was written; correct the arguments and call again", strings.TrimSuffix(msg, ".")+".").
		SaidByERP(strings.Join(said, " "))
}

// fieldMessages are Acumatica's messages on the fields of rec, as its
// screens show them to people: without the API's field names (the
// message names the field by its label), a detail line's by its number
// ("Line 2: …"); at most maxFieldErrors.
func fieldMessages(rec map[string]any, line string) []string {
	var out []string
	names := make([]string, 0, len(rec))
	for k := range rec {
		names = append(names, k)
	}
	slices.Sort(names)
	add := func(msg string) {
		if msg = cleanDetail(msg); msg != "" && len(out) < maxFieldErrors {
			out = append(out, line+msg)
		}
	}
	for _, name := range names {
		switch v := rec[name].(type) {
		case map[string]any:
			if msg, ok := v["error"].(string); ok && msg != "" {
				add(msg)
				continue
			}
			if name != "custom" && name != "_links" {
				out = append(out, fieldMessages(v, line)...)
			}
		case []any:
			for i, l := range v {
				if m, ok := l.(map[string]any); ok {
					at := fmt.Sprintf("Line %d: ", i+1)
					if msg, ok := m["error"].(string); ok && msg != "" {
						out = append(out, at+cleanDetail(msg))
					}
					out = append(out, fieldMessages(m, at)...)
				}
			}
		}
	}
	return out[:min(len(out), maxFieldErrors)]
}

// collectFieldErrors appends "Path: message" for every field wrapper of
// rec with an "error", depth first in name order.
func collectFieldErrors(rec map[string]any, prefix string, out *[]string) {
	names := make([]string, 0, len(rec))
	for k := range rec {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		switch v := rec[name].(type) {
		case map[string]any:
			if msg, ok := v["error"].(string); ok && msg != "" {
				*out = append(*out, strings.TrimRight(cleanDetail(fmt.Sprintf("%s%s: %s", prefix, name, msg)), "."))
				continue
			}
			if name != "custom" && name != "_links" {
				collectFieldErrors(v, prefix+name+"/", out)
			}
		case []any:
			for i, line := range v {
				if m, ok := line.(map[string]any); ok {
					if msg, ok := m["error"].(string); ok && msg != "" {
						*out = append(*out, strings.TrimRight(cleanDetail(fmt.Sprintf("%s%s line %d: %s", prefix, name, i+1, msg)), "."))
					}
					collectFieldErrors(m, fmt.Sprintf("%s%s line %d ", prefix, name, i+1), out)
				}
			}
		}
	}
}

// wrap is Acumatica's field wrapper {"value": v}.
func wrap(v any) map[string]any { return map[string]any{"value": v} }

// fieldText returns a field of a decoded record, following linked
// entities by path ("MainContact", "Email"), as text: "" when empty.
func fieldText(rec map[string]any, path ...string) string {
	cur := rec
	for i, p := range path {
		m, ok := cur[p].(map[string]any)
		if !ok {
			return ""
		}
		if i < len(path)-1 {
			cur = m
			continue
		}
		return valueText(m["value"])
	}
	return ""
}

// valueText renders a field value as a person reads it: numbers exactly
// as Acumatica wrote them.
func valueText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	case bool:
		if t {
			return "true"
		}
		return "false"
	}
	return fmt.Sprint(v)
}

// noteText is a decoded record's note ("" when none).
func noteText(rec map[string]any) string {
	if m, ok := rec["note"].(map[string]any); ok {
		return valueText(m["value"])
	}
	return ""
}

// decimal parses a number argument exactly, within
// connector.MaxNumberBits.
func decimal(n json.Number) (*big.Rat, bool) {
	return connector.ExactNumber(n.String())
}

// money formats r with places decimals (those of its currency) and
// thousands separators: 1,250.00 (USD), 1,250 (JPY), 1,250.000 (KWD).
func money(r *big.Rat, places int) string {
	s := r.FloatString(places)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// asApproved reports whether rec's value now still is before, the value the
// person approved a change of. erpgate's redaction may have hidden part of
// before on the approval page (a card number in a note reads [REDACTED]),
// and such a value cannot be compared: then the record's
// last modification (lastModified) must be the preview's Version.
func asApproved(call *connector.Call, before, now string, rec map[string]any) bool {
	if !strings.Contains(before, redact.Placeholder) {
		return before == now
	}
	v := call.Approved.Preview.Version
	return v != "" && v == lastModified(rec)
}

// lastModified is when rec was last saved: LastModifiedDateTime, or
// LastModified as SalesOrder names it.
func lastModified(rec map[string]any) string {
	if v := fieldText(rec, "LastModifiedDateTime"); v != "" {
		return v
	}
	return fieldText(rec, "LastModified")
}

// changedSinceApproval is APPROVAL_EXPIRED for a record that no longer
// holds the values the person approved a change of.
func changedSinceApproval(what string, changed []string) error {
	return toolerr.New(toolerr.ApprovalExpired,
		"%s changed in Acumatica after the change was approved (%s now differ from what the approval page showed); nothing was written. Call the tool again to propose the change afresh",
		what, strings.Join(changed, ", "))
}

// unsavedField is an approved value the record Acumatica answered a PUT
// with does not hold.
type unsavedField struct {
	name string // as Acumatica names it: MainContact/Email, note
	got  any    // the answer's value (nil when empty)
}

// sameValue reports whether the answer's value got is the value want that
// was sent: numbers compared exactly as numbers (the answer may print
// 25000.0 where reads print 25000.0000), text exactly; an empty string
// matches an empty field.
func sameValue(want, got any) bool {
	if wn, ok := want.(json.Number); ok {
		gn, ok := got.(json.Number)
		if !ok {
			return false
		}
		w, okW := decimal(wn)
		g, okG := decimal(gn)
		return okW && okG && w.Cmp(g) == 0
	}
	if want == nil || want == "" {
		return got == nil || got == ""
	}
	return want == got
}

// notSaved is the error for a PUT Acumatica answered 200 without saving
// the approved values: a 200 does not prove the values saved (View Only
// rights on the form, or the form's logic overriding a value), so the
// record in the answer is the proof.
func notSaved(what string, fields []unsavedField) error {
	parts := make([]string, len(fields))
	for i, f := range fields {
		v := valueText(f.got)
		if v == "" {
			parts[i] = f.name + " is empty"
		} else {
			parts[i] = fmt.Sprintf("%s is %q", f.name, v)
		}
	}
	return toolerr.New(toolerr.PermissionDenied,
		"Acumatica accepted the request to change %s but did not save the approved values: in Acumatica %s. This is most likely because this user's roles have only View Only rights on the form; an administrator has to grant the right to change it. Check the record in Acumatica before trying again",
		what, strings.Join(parts, "; "))
}

// OwnUnauthorized reports whether a 401 is Acumatica's own refusal of the
// request's token, which comes before the request runs
// (connector.OwnUnauthorized): the transport renews a person's token and
// sends a PUT again only after such a 401.
func (*Connector) OwnUnauthorized(_ http.Header, body []byte) bool { return ownUnauthorized(body) }

var _ connector.OwnUnauthorized = (*Connector)(nil)

// notSignedIn are the sentences of Acumatica's 401: ASP.NET Web API's
// refusal of a request without a valid sign-in, and the contract API's own
// wording of it (shared/erp-api/acumatica/api-facts.md §3.1, §9).
var notSignedIn = []string{
	"Authorization has been denied for this request.",
	"The user is not signed in to the system.",
	"The user is not logged in to the system.",
}

// ownUnauthorized reports whether a 401's body is Acumatica's: ASP.NET's
// HttpError with one of notSignedIn.
func ownUnauthorized(body []byte) bool {
	e, ok := parseHTTPError(body)
	return ok && slices.Contains(notSignedIn, strings.TrimSpace(e.Message))
}
