package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/redact"
)

// Effect classifies what a tool does to the ERP. The zero value is invalid,
// so a tool that forgot to say is refused by the registry.
type Effect int

const (
	effectUnset Effect = iota
	// Read tools only read. They are advertised with readOnlyHint and their
	// upstream requests may be retried, whatever their HTTP method.
	Read
	// Write tools change ERP data in a way that can be changed back (a
	// draft, a field, a note). Tool.Idempotent says whether repeating one
	// is harmless. The transport never repeats their requests, and the
	// engine runs one only after a person approved it (docs/writes.md).
	Write
	// Destructive tools change or delete data in ways that cannot be
	// undone (submitting a document); their requests are never repeated
	// either, and they too run only after a person's approval.
	Destructive
)

func (e Effect) String() string {
	switch e {
	case Read:
		return "read"
	case Write:
		return "write"
	case Destructive:
		return "destructive"
	}
	return "unset"
}

// Tool is one catalogue entry.
type Tool struct {
	// Name is the MCP tool name: lower snake case, unique in the catalogue.
	Name string
	// Title is a short human-readable name.
	Title string
	// Description tells a model when to use the tool and how to read its
	// result. It is part of the contract and covered by golden snapshots.
	Description string
	// Input describes the arguments. Objects are strict: unknown arguments
	// are rejected before the handler runs.
	Input *schema.Schema
	// Output describes the structured result, which must be a JSON object.
	Output *schema.Schema
	Effect Effect
	// Idempotent says, for a Write tool, that repeating a call with the
	// same arguments has no further effect (setting a field). It is
	// advertised as idempotentHint; read tools are always idempotent and
	// destructive ones never.
	Idempotent bool
	// Overwrites says, for a Write tool, that it replaces values the ERP
	// already holds (a customer's e-mail, a credit limit) rather than only
	// adding (a draft, a note). MCP counts such a change as destructive
	// (destructiveHint true), though it can be set back.
	Overwrites bool
	// Local says the tool reaches no system outside erpgate: it works on
	// its arguments and erpgate's own data (Call.Cache, Call.Index), never
	// the ERP. It is advertised with openWorldHint false, and the engine
	// gives its calls an HTTP client that refuses every request.
	Local bool
	// Preview is required for Write and Destructive tools and forbidden
	// for Read ones. The engine calls it, as the caller and before
	// anything is written, to show a person exactly what the call would
	// change; it must not change ERP data. The person approves that
	// preview on erpgate's page, and only then does the engine run
	// Handler, with Call.Approved set. Errors are as for Handler: a
	// customer that does not exist is NOT_FOUND, a document the caller may
	// not read is the ERP's PERMISSION_DENIED.
	Preview func(ctx context.Context, call *Call) (*Preview, error)
	// Fields, when set, names the ERP fields the call's validated
	// arguments make the ERP filter, sort, search, select or expand on.
	// The engine refuses the call with INVALID_ARGUMENT, before the
	// handler runs, when one of them is a field the redaction rules cover:
	// results would show [REDACTED], but repeated filtered calls would
	// recover the value (issue 14). Its error should be a
	// *toolerr.Error saying what in the arguments cannot be read.
	Fields func(args json.RawMessage) ([]FieldRef, error)
	// Handler runs the call. Its result is encoded as JSON and must match
	// Output. Errors should be *toolerr.Error; anything else is INTERNAL.
	Handler Handler
}

// FieldRef is one ERP field a call's arguments reference.
type FieldRef struct {
	// Arg is the argument that names it, e.g. "filterExpression".
	Arg string
	// Name is the field as the ERP names it; a path such as
	// MainContact/Email names each of its parts.
	Name string
}

// Handler runs one tool call.
type Handler func(ctx context.Context, call *Call) (any, error)

// RawResult is a result the handler has already encoded: one JSON object,
// typically the ERP's own rows passed on without being decoded (see
// platform/connector/rawjson). The engine checks that it is valid JSON but does not
// encode it again; redaction and the size bound apply as to any result.
type RawResult []byte

// MarshalJSON returns r itself, so a RawResult inside another value, or
// encoded by a test, is the JSON it holds.
func (r RawResult) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return nil, errors.New("connector: empty RawResult")
	}
	return r, nil
}

// Call is everything a handler gets. Nothing tenant-specific is captured
// when a tool is registered: it all arrives here, per request.
type Call struct {
	Site Site
	// HTTP is the only way to reach the ERP. It adds the caller's
	// credentials (only for the site's own host), bounds response bodies,
	// retries retryable reads once and honours the call's budget through ctx.
	HTTP *http.Client
	// Args are the validated arguments, exactly as the client sent them.
	Args json.RawMessage
	// Principal says who is calling.
	Principal Principal
	// MaxRecords is the most rows a single upstream query may return for this
	// site (deployment default, capped per site).
	MaxRecords int
	// Cache is the site's metadata cache, shared by every replica. It is nil
	// when the deployment has none; a connector then fetches what it needs
	// on every call.
	Cache Cache
	// Index is the site's schema-knowledge index, shared by every replica,
	// or nil when the deployment has none.
	Index SchemaIndex
	// Approved is set when a write tool's Handler runs: the action a
	// person approved. It is nil for Preview and for read tools.
	Approved *Approved
}

// Approved is an approved write, handed to the write tool's Handler.
type Approved struct {
	// ID is the pending action's id, unique per approval. A connector may
	// send it to an ERP that accepts an idempotency key.
	ID string
	// Preview is what the person approved, as Preview returned it.
	Preview Preview
	// By is the ERP user who approved.
	By string
}

// ErrNotAsApproved marks (as the cause of its *toolerr.Error) a write
// tool's error for a change the ERP made, but not as the person approved
// it: it rounded a price, took another currency. The change exists, and
// the error's message names it and what differs: the engine records the
// approved action as carried out, never as failed, so that nobody is
// invited to make it again.
var ErrNotAsApproved = errors.New("the ERP made the change, but not as approved")

// ApprovedField is the preview field name as the person approved it; ok
// is false when the call is not an approved write or the preview had no
// such field.
func (c *Call) ApprovedField(name string) (f PreviewField, ok bool) {
	if c.Approved == nil {
		return PreviewField{}, false
	}
	for _, f := range c.Approved.Preview.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return PreviewField{}, false
}

// ApprovedColumn is, for n rows, the cells of the column named column in
// the preview table titled title, as the person approved them: "" for a
// row the table did not have or a cell shown redacted, and all "" when
// the call is not an approved write.
func (c *Call) ApprovedColumn(title, column string, n int) []string {
	cells := make([]string, n)
	if c.Approved == nil {
		return cells
	}
	for _, t := range c.Approved.Preview.Tables {
		col := slices.Index(t.Columns, column)
		if t.Title != title || col < 0 {
			continue
		}
		for i := range min(n, len(t.Rows)) {
			if col < len(t.Rows[i]) && t.Rows[i][col] != redact.Placeholder {
				cells[i] = t.Rows[i][col]
			}
		}
	}
	return cells
}

// Preview is what a write would change, as the person approving it sees
// it. erpgate renders it on its own page: the connector gives data, never
// markup, and every value is shown as text.
type Preview struct {
	// Operation is what happens: "create", "update", "comment" or
	// "submit".
	Operation string `json:"operation"`
	// DocType is the ERP's name for the kind of document ("Sales Order",
	// "Customer").
	DocType string `json:"doc_type"`
	// DocName is the document's key in the ERP ("SAL-ORD-2026-00012",
	// "ABCSTUDIO"); empty for a document not yet created.
	DocName string `json:"doc_name,omitempty"`
	// Summary is one sentence in the connector's own words with the ERP's
	// values ("Create a draft Sales Order for Acme Corp (Acme Corp), 2
	// lines, total 1,250.00 USD").
	Summary string `json:"summary"`
	// Fields are the document's fields the write sets, in the order to
	// show them. For an update, Before is the ERP's value now, read as the
	// caller.
	Fields []PreviewField `json:"fields,omitempty"`
	// Tables are child rows the write sets (a sales order's lines).
	Tables []PreviewTable `json:"tables,omitempty"`
	// Warnings are plain sentences the person must read ("Submitting
	// cannot be undone.").
	Warnings []string `json:"warnings,omitempty"`
	// Version identifies the state of the document the preview was read
	// from (Frappe's modified), so that Handler can refuse, with
	// APPROVAL_EXPIRED, a document that changed after it was approved.
	// Empty when the ERP offers none or the document is new.
	Version string `json:"version,omitempty"`
}

// Field returns the preview's field of that ERP name, and whether it has
// one.
func (p *Preview) Field(name string) (PreviewField, bool) {
	for _, f := range p.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return PreviewField{}, false
}

// PreviewField is one field a write sets.
type PreviewField struct {
	// Name is the ERP's field name; Label the one people read.
	Name  string `json:"name"`
	Label string `json:"label"`
	// Before is the value now ("" when unset); HasBefore is false for a
	// new document, where there is nothing before.
	Before    string `json:"before,omitempty"`
	HasBefore bool   `json:"has_before,omitempty"`
	After     string `json:"after"`
}

// PreviewTable is a table of child rows a write sets.
type PreviewTable struct {
	Title   string     `json:"title"`
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
}

// Principal identifies the caller of a tool.
type Principal struct {
	// AuthType is "oauth" or "service_token".
	AuthType string
	// Subject is the ERP user the call runs as, when known.
	Subject string
}

// Decode decodes the arguments into v, rejecting unknown fields. The engine
// has already validated them against the tool's input schema, so an error
// here is a mismatch between schema and struct and is reported as such.
func (c *Call) Decode(v any) error {
	if len(c.Args) == 0 {
		return nil
	}
	err := decodeStrict(c.Args, v)
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && strings.HasPrefix(ute.Value, "number") && ute.Type != nil && isInteger(ute.Type) {
		// JSON Schema counts a number with a zero fraction (5.0, 1e2) as
		// an integer, so the input schema let it through: it is taken as
		// the whole number it is, written as one.
		if whole, ok := wholeNumbers(c.Args); ok {
			if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
				rv.Elem().SetZero()
				err = decodeStrict(whole, v)
			}
		}
	}
	if err != nil {
		if text := jsonErrorText(err); text != "" {
			return toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments do not fit this tool: %s", text)
		}
		return toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments do not fit this tool")
	}
	return nil
}

func decodeStrict(args json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	return dec.Decode(v)
}

func isInteger(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// wholeNumbers returns args with every number that has a fraction or an
// exponent but is a whole number (5.0, 0.5e1, 1e2) written as an integer,
// and whether any was.
func wholeNumbers(args json.RawMessage) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return nil, false
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case json.Number:
			if n, ok := wholeNumber(string(x)); ok {
				changed = true
				return n
			}
		}
		return v
	}
	doc = walk(doc)
	if !changed {
		return nil, false
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(doc) != nil {
		return nil, false
	}
	return bytes.TrimSpace(buf.Bytes()), true
}

// wholeNumber is the JSON number literal s written as an integer, when it
// has a fraction or an exponent and is a whole number. An exponent of
// more than a few hundred is left alone: no integer argument is that
// large, and big.Rat would spend its time expanding it.
func wholeNumber(s string) (json.Number, bool) {
	if !strings.ContainsAny(s, ".eE") {
		return "", false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || exp > 400 || exp < -400 {
			return "", false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() {
		return "", false
	}
	return json.Number(r.Num().String()), true
}

// jsonErrorText says in plain words which argument does not fit and what
// it must be: the argument by its JSON name (the last part of Go's field
// path), the kind of value as JSON has it; "" when the error says neither.
// Go's own text (type names, struct paths) never reaches the client; the
// error wrapped keeps it for the log.
func jsonErrorText(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" && ute.Type != nil {
		name := ute.Field[strings.LastIndexByte(ute.Field, '.')+1:]
		return fmt.Sprintf("%q must be %s", name, JSONKind(ute.Type))
	}
	return ""
}

// JSONKind names, for a person or a model, the JSON value a Go type takes
// ("a whole number, such as 5", "a list", "an object").
func JSONKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, such as 5"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value of another kind"
}
