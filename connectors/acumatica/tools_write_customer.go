package acumatica

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
	"github.com/erpgate/erpgate/platform/infra/redact"
)

// acumatica_update_customer sets a customer's main-contact and credit
// fields, as the Customer entity of the Default endpoint has them: the
// contact details in the linked MainContact, the credit limit as
// CreditLimit and the credit rule and days past due in the linked
// CreditVerificationRules. PUT with the key field CustomerID updates the
// customer; If-Match: * keeps it from inserting one that was deleted.

// customerField is one field the tool may set: its argument path, the
// entity path Acumatica names it by, and a label.
type customerField struct {
	path  []string // in the arguments and in the entity, e.g. MainContact, Email
	label string
}

// name is the field's path as Acumatica writes it: MainContact/Email.
func (f customerField) name() string { return strings.Join(f.path, "/") }

var customerFields = []customerField{
	{[]string{"MainContact", "Attention"}, "Main contact: attention"},
	{[]string{"MainContact", "Email"}, "Main contact: email"},
	{[]string{"MainContact", "Phone1"}, "Main contact: phone 1"},
	{[]string{"MainContact", "Phone2"}, "Main contact: phone 2"},
	{[]string{"MainContact", "Fax"}, "Main contact: fax"},
	{[]string{"MainContact", "WebSite"}, "Main contact: web site"},
	{[]string{"CreditLimit"}, "Credit limit"},
	{[]string{"CreditVerificationRules", "CreditVerification"}, "Credit verification"},
	{[]string{"CreditVerificationRules", "CreditDaysPastDue"}, "Credit days past due"},
}

// customerChange is one field the call sets, with its new value.
type customerChange struct {
	field customerField
	value any    // as sent: string, json.Number
	text  string // as shown
}

type updateCustomerArgs struct {
	CustomerID string `json:"CustomerID"`
	changes    []customerChange
}

// customerArgs decodes the arguments into the changes they make, in the
// order of customerFields.
func customerArgs(call *connector.Call) (updateCustomerArgs, error) {
	var a updateCustomerArgs
	if err := call.Decode(&struct {
		CustomerID              *string                    `json:"CustomerID"`
		MainContact             map[string]json.RawMessage `json:"MainContact"`
		CreditLimit             *json.Number               `json:"CreditLimit"`
		CreditVerificationRules map[string]json.RawMessage `json:"CreditVerificationRules"`
	}{CustomerID: &a.CustomerID}); err != nil {
		return a, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(call.Args, &raw); err != nil {
		return a, toolerr.Wrap(toolerr.InvalidArgument, err, "the arguments are not a JSON object")
	}
	a.CustomerID = strings.TrimSpace(a.CustomerID)
	if a.CustomerID == "" {
		return a, toolerr.New(toolerr.InvalidArgument, "CustomerID must not be empty")
	}
	for _, f := range customerFields {
		v, ok := lookupArg(raw, f.path)
		if !ok {
			continue
		}
		var val any
		dec := json.NewDecoder(strings.NewReader(string(v)))
		dec.UseNumber()
		if err := dec.Decode(&val); err != nil {
			return a, toolerr.Wrap(toolerr.InvalidArgument, err, "%s is not a value", f.name())
		}
		a.changes = append(a.changes, customerChange{field: f, value: val, text: valueText(val)})
	}
	if len(a.changes) == 0 {
		return a, toolerr.New(toolerr.InvalidArgument, "name at least one field to change: MainContact (Attention, Email, Phone1, Phone2, Fax, WebSite), CreditLimit or CreditVerificationRules (CreditVerification, CreditDaysPastDue)")
	}
	return a, nil
}

// lookupArg finds a nested argument by path.
func lookupArg(raw map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	v, ok := raw[path[0]]
	if !ok {
		return nil, false
	}
	if len(path) == 1 {
		return v, true
	}
	var sub map[string]json.RawMessage
	if json.Unmarshal(v, &sub) != nil {
		return nil, false
	}
	return lookupArg(sub, path[1:])
}

func updateCustomerTool(conn *Connector) connector.Tool {
	text := func(desc string, maxLen int) *schema.Schema { return schema.String(desc).Len(0, maxLen) }
	return connector.Tool{
		Name:  "acumatica_update_customer",
		Title: "Update an Acumatica customer's contact and credit fields",
		Description: "Change an Acumatica customer's main contact details (attention, email, phones, fax, web site) and credit settings (credit limit, credit verification rule, days past due) as the signed-in user. " +
			"Only the fields given change; an empty string clears a text field. The approval page shows each field's value now and after. " +
			"Returns the customer's id, name and the fields as Acumatica saved them. Setting the same values again changes nothing. " +
			"A customer that does not exist is NOT_FOUND; if the fields change in Acumatica before the call runs, it is APPROVAL_EXPIRED and nothing is written." + approvalHint,
		Input: schema.Object(
			schema.Prop("CustomerID", schema.String("The customer id, e.g. C000001.").Len(1, 30)).Required(),
			schema.Prop("MainContact", schema.Object(
				schema.Prop("Attention", text("Attention line.", 255)),
				schema.Prop("Email", text("E-mail address.", 255)),
				schema.Prop("Phone1", text("Phone 1.", 50)),
				schema.Prop("Phone2", text("Phone 2.", 50)),
				schema.Prop("Fax", text("Fax.", 50)),
				schema.Prop("WebSite", text("Web site.", 255)),
			)),
			schema.Prop("CreditLimit", schema.Number("Credit limit in the customer's currency.").Min(0).Max(1e15)),
			schema.Prop("CreditVerificationRules", schema.Object(
				schema.Prop("CreditVerification", schema.String("The credit verification rule.").OneOf("Disabled", "Days Past Due", "Limit", "Limit and Days Past Due")),
				schema.Prop("CreditDaysPastDue", schema.Integer("Days past due allowed before credit hold.").Min(0).Max(32767)),
			)),
		),
		Output: schema.Object(
			schema.Prop("CustomerID", schema.String("The customer.")).Required(),
			schema.Prop("CustomerName", schema.String("The customer's name.").Nullable()).Required(),
			schema.Prop("fields", withDesc(schema.Map(schema.Any("The saved value, null when empty.")), "Each field set, by its Acumatica path (MainContact/Email), as Acumatica saved it.")).Required(),
			endpointProp(),
		),
		Effect:     connector.Write,
		Idempotent: true,
		Overwrites: true,
		Preview: func(ctx context.Context, call *connector.Call) (*connector.Preview, error) {
			a, err := customerArgs(call)
			if err != nil {
				return nil, err
			}
			c := newClient(conn, call)
			cust, err := readCustomerForUpdate(ctx, c, a.CustomerID)
			if err != nil {
				return nil, err
			}
			p := &connector.Preview{Operation: "update", DocType: "Customer", DocName: fieldText(cust, "CustomerID"),
				Version: fieldText(cust, "LastModifiedDateTime")}
			var names []string
			for _, ch := range a.changes {
				p.Fields = append(p.Fields, connector.PreviewField{Name: ch.field.name(), Label: ch.field.label,
					Before: fieldText(cust, ch.field.path...), HasBefore: true, After: ch.text})
				names = append(names, ch.field.label)
			}
			p.Summary = fmt.Sprintf("Update customer %s (%s): %s.", fieldText(cust, "CustomerName"), fieldText(cust, "CustomerID"), strings.Join(names, ", "))
			return p, nil
		},
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := customerArgs(call)
			if err != nil {
				return nil, err
			}
			c := newClient(conn, call)
			return c.unlessPut(updateCustomer(ctx, c, call, a))
		},
	}
}

// readCustomerForUpdate reads a customer with the linked entities the
// tool sets.
func readCustomerForUpdate(ctx context.Context, c *client, id string) (map[string]any, error) {
	return c.getRecord(ctx, contractOp{entity: "Customer", keyNames: []string{"CustomerID"}, keys: []string{id},
		expand: "MainContact,CreditVerificationRules"})
}

// updateCustomer compares the fields with the approved preview's before
// values, then writes them. Acumatica offers no ETag, so this read and
// the PUT are two requests: a change made between them is overwritten.
func updateCustomer(ctx context.Context, c *client, call *connector.Call, a updateCustomerArgs) (any, error) {
	if call.Approved != nil {
		cust, err := readCustomerForUpdate(ctx, c, a.CustomerID)
		if err != nil {
			return nil, err
		}
		var changed []string
		for _, ch := range a.changes {
			if f, ok := call.ApprovedField(ch.field.name()); ok && !asApproved(call, f.Before, fieldText(cust, ch.field.path...), cust) {
				changed = append(changed, ch.field.name())
			}
		}
		if len(changed) > 0 {
			return nil, changedSinceApproval("The customer "+a.CustomerID, changed)
		}
	}
	body := map[string]any{"CustomerID": wrap(a.CustomerID)}
	for _, ch := range a.changes {
		target := body
		for _, p := range ch.field.path[:len(ch.field.path)-1] {
			sub, ok := target[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				target[p] = sub
			}
			target = sub
		}
		// An empty string clears a text field; {"value": null} is not
		// relied on, since the contract API may read it as "no change".
		target[ch.field.path[len(ch.field.path)-1]] = wrap(ch.value)
	}
	op := contractOp{entity: "Customer", keyNames: []string{"CustomerID"}, keys: []string{a.CustomerID}, expand: "MainContact,CreditVerificationRules"}
	rec, err := c.put(ctx, op, body, putHeaders(false, true))
	if err != nil {
		return nil, err
	}
	fields := map[string]any{}
	var unsaved []unsavedField
	var differs, people []string
	for _, ch := range a.changes {
		v := fieldValue(rec, ch.field.path...)
		fields[ch.field.name()] = v
		if sameValue(ch.value, v) {
			continue
		}
		if n, ok := ch.value.(json.Number); ok && savedOtherwise(call, ch.field.name(), v) {
			// A number that changed, to another value than approved:
			// Acumatica saved it rounded to its decimal places.
			differs = append(differs, fmt.Sprintf("%s %s, approved %s", ch.field.name(), valueText(v), n.String()))
			people = append(people, fmt.Sprintf("its %s %s where you approved %s", strings.ToLower(ch.field.label), valueText(v), n.String()))
			continue
		}
		unsaved = append(unsaved, unsavedField{name: ch.field.name(), got: v})
	}
	if len(unsaved) > 0 {
		return nil, notSaved("the customer "+a.CustomerID, unsaved)
	}
	if len(differs) > 0 {
		return nil, toolerr.Wrap(toolerr.InvalidArgument, connector.ErrNotAsApproved,
			"Acumatica saved the customer %s, but not as approved: %s (Acumatica rounds a number to its decimal places). Check the customer in Acumatica, and correct it if needed",
			a.CustomerID, strings.Join(differs, "; ")).
			SaidByERP("the customer " + a.CustomerID + " with " + strings.Join(people, "; "))
	}
	return map[string]any{"CustomerID": fieldText(rec, "CustomerID"), "CustomerName": nullIfEmpty(fieldText(rec, "CustomerName")),
		"fields": fields, "endpoint": c.set.endpoint()}, nil
}

// fieldValue is a field of a decoded record by path, unwrapped (nil when
// empty).
func fieldValue(rec map[string]any, path ...string) any {
	cur := rec
	for _, p := range path[:len(path)-1] {
		m, ok := cur[p].(map[string]any)
		if !ok {
			return nil
		}
		cur = m
	}
	if m, ok := cur[path[len(path)-1]].(map[string]any); ok {
		return m["value"]
	}
	return nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// savedOtherwise reports whether got, the value a PUT's answer holds for
// an approved number that it does not hold, is a number other than the
// one the approval page showed before: the field was saved, differently
// (rounded), rather than not saved at all.
func savedOtherwise(call *connector.Call, name string, got any) bool {
	g, ok := got.(json.Number)
	if !ok || call.Approved == nil {
		return false
	}
	f, ok := call.ApprovedField(name)
	if !ok || strings.Contains(f.Before, redact.Placeholder) {
		return false
	}
	return !sameValue(json.Number(f.Before), g)
}
