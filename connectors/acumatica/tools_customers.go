package acumatica

import (
	"context"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// The customer list is the question asked most, so it has a tool that
// needs no filter syntax: literal text search, status and class, the
// columns that matter, and the same truncation envelope as every list.

var customerListFields = []string{"CustomerID", "CustomerName", "Status", "CustomerClass", "Terms", "CurrencyID", "CreditLimit", "Email", "LastModifiedDateTime"}

type listCustomersArgs struct {
	Search        string `json:"search"`
	Status        string `json:"status"`
	CustomerClass string `json:"customerClass"`
	Top           int    `json:"top"`
}

func listCustomersTool(conn *Connector) connector.Tool {
	row := schema.OpenObject(
		schema.Prop("CustomerID", schema.String("The customer id; acumatica_get_customer takes it.")),
		schema.Prop("CustomerName", schema.String("The customer's name.")),
		schema.Prop("Status", schema.String("Active, On Hold, Credit Hold, Inactive or One-Time.")),
		schema.Prop("CustomerClass", schema.String("The customer class.").Nullable()),
		schema.Prop("Terms", schema.String("Credit terms.").Nullable()),
		schema.Prop("CurrencyID", schema.String("Billing currency.").Nullable()),
		schema.Prop("CreditLimit", schema.Number("Credit limit, exactly as stored.").Nullable()),
	)
	return connector.Tool{
		Name:  "acumatica_list_customers",
		Title: "List Acumatica customers",
		Description: "List customers as the signed-in user, optionally those whose id or name contains some text (matched literally, not a filter language), with a status or class: " +
			"id, name, status, class, terms, currency, credit limit, e-mail. Results stop at top (default 100) and the site's record cap; there is no paging, so narrow with search when truncated. " +
			"For other conditions use acumatica_list_entities with entity Customer and a filterExpression.",
		Input: schema.Object(
			schema.Prop("search", schema.String("Text to find in the customer id or name.").Len(1, 100)),
			schema.Prop("status", schema.String("Only customers with this status.").OneOf("Active", "On Hold", "Credit Hold", "Inactive", "One-Time")),
			schema.Prop("customerClass", schema.String("Only customers of this class.").Match(`^[A-Za-z0-9_-]{1,10}$`)),
			topProp(),
		),
		Output: envelopeSchema(row, endpointProp()),
		Effect: connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[listCustomersArgs](call)
			if err != nil {
				return nil, err
			}
			c := newClient(conn, call)
			var conds []string
			if s := strings.TrimSpace(a.Search); s != "" {
				lit := odataV3Literal(keyText, s)
				conds = append(conds, "(substringof("+lit+", CustomerID) or substringof("+lit+", CustomerName))")
			}
			if a.Status != "" {
				conds = append(conds, "Status eq "+odataV3Literal(keyText, a.Status))
			}
			if a.CustomerClass != "" {
				conds = append(conds, "CustomerClass eq "+odataV3Literal(keyText, a.CustomerClass))
			}
			recordCap := c.set.recordCap(call)
			limit := rowLimit(a.Top, recordCap)
			op := contractOp{entity: "Customer", filter: strings.Join(conds, " and "), sel: strings.Join(customerListFields, ",")}
			rows, err := c.listRows(ctx, op, limit+1)
			if err != nil {
				return nil, err
			}
			kept, status := newStatus(len(rows), limit, recordCap, "a search text, status or customer class")
			return unwrappedEnvelope(rows[:kept], struct {
				envelopeStatus
				Endpoint string `json:"endpoint"`
			}{status, c.set.endpoint()})
		},
	}
}
