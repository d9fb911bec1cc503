package acumatica

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// acumatica_add_note adds text to a record's note. Acumatica keeps one
// note per record (the system field "note"), so adding means appending to
// the note there is: the preview reads it and shows it before and after,
// and the Handler writes the whole new note with a PUT naming the
// record's key fields.

// noteEntity is an entity the tool may annotate.
type noteEntity struct {
	Entity string
	Label  string
	Keys   []keySpec
}

var noteEntities = []noteEntity{
	{Entity: "Customer", Label: "customer", Keys: []keySpec{text("CustomerID", "the customer id, e.g. C000001")}},
	{Entity: "SalesOrder", Label: "sales order", Keys: []keySpec{text("OrderType", "the order type, e.g. SO"), text("OrderNbr", "the order number")}},
	{Entity: "SalesInvoice", Label: "sales invoice", Keys: []keySpec{text("Type", "the document type, e.g. Invoice"), text("ReferenceNbr", "the invoice's reference number")}},
}

// noteSeparator goes between the note there is and the text added.
const noteSeparator = "\n"

type addNoteArgs struct {
	entity noteEntity
	keys   []string
	text   string
}

// noteArgs decodes the arguments: the entity, exactly its key fields, and
// the text.
func noteArgs(call *connector.Call) (addNoteArgs, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(call.Args, &raw); err != nil {
		return addNoteArgs{}, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments are not a JSON object")
	}
	var a addNoteArgs
	var name string
	_ = json.Unmarshal(raw["entity"], &name)
	i := slices.IndexFunc(noteEntities, func(e noteEntity) bool { return e.Entity == name })
	if i < 0 {
		return a, toolerr.New(toolerr.InvalidArgument, "entity must be Customer, SalesOrder or SalesInvoice")
	}
	a.entity = noteEntities[i]
	for _, k := range a.entity.Keys {
		var v string
		if json.Unmarshal(raw[k.Name], &v) != nil || strings.TrimSpace(v) == "" {
			return a, toolerr.New(toolerr.InvalidArgument, "a %s is keyed by %s: %s is missing", a.entity.Entity, keyList(a.entity), k.Name)
		}
		a.keys = append(a.keys, strings.TrimSpace(v))
	}
	for k := range raw {
		if k != "entity" && k != "text" && !slicesContainsKey(a.entity.Keys, k) {
			return a, toolerr.New(toolerr.InvalidArgument, "%s is not a key of %s, which is keyed by %s", k, a.entity.Entity, keyList(a.entity))
		}
	}
	if json.Unmarshal(raw["text"], &a.text) != nil || strings.TrimSpace(a.text) == "" {
		return a, toolerr.New(toolerr.InvalidArgument, "text must not be empty")
	}
	a.text = strings.TrimSpace(a.text)
	return a, nil
}

// slicesContainsKey reports whether keys has one named name.
func slicesContainsKey(keys []keySpec, name string) bool {
	return slices.ContainsFunc(keys, func(k keySpec) bool { return k.Name == name })
}

func keyList(e noteEntity) string {
	names := make([]string, len(e.Keys))
	for i, k := range e.Keys {
		names[i] = k.Name
	}
	return strings.Join(names, " and ")
}

func (a addNoteArgs) op() contractOp {
	return contractOp{entity: a.entity.Entity, keyNames: strings.Split(keyList(a.entity), " and "), keys: a.keys}
}

func addNoteTool(conn *Connector) connector.Tool {
	props := []schema.Property{
		schema.Prop("entity", schema.String("The kind of record.").OneOf("Customer", "SalesOrder", "SalesInvoice")).Required(),
	}
	seen := map[string]bool{}
	for _, e := range noteEntities {
		for _, k := range e.Keys {
			if !seen[k.Name] {
				seen[k.Name] = true
				props = append(props, schema.Prop(k.Name, schema.String(sentence(capitalize(k.Hint))+" A key of "+e.Entity+".").Len(1, 100)))
			}
		}
	}
	props = append(props, schema.Prop("text", schema.String("The text to add to the record's note.").Len(1, 4000)).Required())
	return connector.Tool{
		Name:  "acumatica_add_note",
		Title: "Add to an Acumatica record's note",
		Description: "Add text to the note of an Acumatica customer (key CustomerID), sales order (keys OrderType and OrderNbr) or sales invoice (keys Type and ReferenceNbr), as the signed-in user. " +
			"Acumatica keeps one note per record, so the text is appended on a new line to the note there is; the approval page shows the note before and after. " +
			"Returns the record's keys and its whole note as saved. Calling again appends the text again. " +
			"A record that does not exist is NOT_FOUND; if its note changes in Acumatica before the call runs, it is APPROVAL_EXPIRED and nothing is written." + approvalHint,
		Input: schema.Object(props...),
		Output: schema.Object(
			schema.Prop("entity", schema.String("The entity annotated.")).Required(),
			schema.Prop("keys", withDesc(schema.Map(schema.String("A key value.")), "The record's key fields and their values.")).Required(),
			schema.Prop("note", schema.String("The record's whole note as Acumatica saved it.")).Required(),
			endpointProp(),
		),
		Effect: connector.Write,
		Preview: func(ctx context.Context, call *connector.Call) (*connector.Preview, error) {
			a, err := noteArgs(call)
			if err != nil {
				return nil, err
			}
			rec, err := newClient(conn, call).getRecord(ctx, a.op())
			if err != nil {
				return nil, err
			}
			before := noteText(rec)
			return &connector.Preview{
				Operation: "comment",
				DocType:   a.entity.Entity,
				DocName:   strings.Join(a.keys, " "),
				Summary:   fmt.Sprintf("Add to the note of %s %s.", a.entity.Label, strings.Join(a.keys, " ")),
				Fields:    []connector.PreviewField{{Name: "note", Label: "Note", Before: before, HasBefore: true, After: appendNote(before, a.text)}},
				Version:   lastModified(rec),
			}, nil
		},
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := noteArgs(call)
			if err != nil {
				return nil, err
			}
			c := newClient(conn, call)
			return c.unlessPut(addNote(ctx, c, call, a))
		},
	}
}

func appendNote(before, text string) string {
	if strings.TrimSpace(before) == "" {
		return text
	}
	return strings.TrimRight(before, "\r\n") + noteSeparator + text
}

// addNote re-reads the note, refuses a note that changed since the
// approval, and writes the note with the text appended. As for every
// Acumatica write there is no ETag: a note changed between the read and
// the PUT is overwritten.
func addNote(ctx context.Context, c *client, call *connector.Call, a addNoteArgs) (any, error) {
	op := a.op()
	rec, err := c.getRecord(ctx, op)
	if err != nil {
		return nil, err
	}
	before := noteText(rec)
	if f, ok := call.ApprovedField("note"); ok && !asApproved(call, f.Before, before, rec) {
		return nil, changedSinceApproval(fmt.Sprintf("The note of %s %s", a.entity.Label, strings.Join(a.keys, " ")), []string{"note"})
	}
	note := appendNote(before, a.text)
	body := map[string]any{"note": wrap(note)}
	keys := map[string]any{}
	for i, k := range a.entity.Keys {
		v := fieldText(rec, k.Name)
		if v == "" {
			v = a.keys[i]
		}
		body[k.Name] = wrap(v)
		keys[k.Name] = v
	}
	saved, err := c.put(ctx, op, body, putHeaders(false, true))
	if err != nil {
		return nil, err
	}
	if got := noteText(saved); got != note {
		return nil, notSaved(fmt.Sprintf("the note of %s %s", a.entity.Label, strings.Join(a.keys, " ")), []unsavedField{{name: "note", got: got}})
	}
	return map[string]any{"entity": a.entity.Entity, "keys": keys, "note": noteText(saved), "endpoint": c.set.endpoint()}, nil
}
