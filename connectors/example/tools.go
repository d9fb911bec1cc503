package example

import (
	"context"
	"net/url"
	"strconv"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// customer is a customer as the tools return it: the ERP's fields as they
// are (the balance a decimal string, exactly as stored).
type customer struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	City    string `json:"city"`
	Balance string `json:"balance"`
}

func customerSchema() *schema.Schema {
	return schema.Object(
		schema.Prop("id", schema.String("The customer id; get_customer takes it.")).Required(),
		schema.Prop("name", schema.String("The customer's name.")).Required(),
		schema.Prop("city", schema.String("The city of the customer's address.")).Required(),
		schema.Prop("balance", schema.String("What the customer owes, a decimal exactly as stored.")).Required(),
	)
}

// A page is 20 customers unless the caller asks for up to 50 (Example
// ERP answers at most 100 a request).
const (
	defaultLimit = 20
	maxLimit     = 50
)

func listCustomersTool() connector.Tool {
	return connector.Tool{
		Name:        "list_customers",
		Title:       "List customers",
		Description: "List Example ERP's customers by id, a page at a time: id, name, city and balance. Repeat with meta.next_offset until it is null to read them all.",
		Input:       schema.Object(connector.PageProps(defaultLimit, maxLimit)...),
		Output: schema.Object(
			schema.Prop("data", schema.Array(customerSchema(), "The customers of this page.")).Required(),
			schema.Prop("meta", schema.Object(connector.PageMetaProps("Always id.")...)).Required(),
		),
		Effect: connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			var a connector.PageArgs
			if err := call.Decode(&a); err != nil {
				return nil, err
			}
			offset, limit := a.OffsetOrZero(), a.LimitOr(defaultLimit, maxLimit, call.MaxRecords)
			// One row more than the page, so that the end is known
			// without another request.
			q := url.Values{"offset": {strconv.Itoa(offset)}, "limit": {strconv.Itoa(limit + 1)}}
			var page struct {
				Customers []customer `json:"customers"`
			}
			if err := get(ctx, call.Site, call.HTTP, "/api/customers", q, &page); err != nil {
				return nil, err
			}
			meta, kept := connector.NewPageMeta(offset, limit, len(page.Customers), "id")
			return map[string]any{"data": page.Customers[:kept], "meta": meta}, nil
		},
	}
}

func getCustomerTool() connector.Tool {
	return connector.Tool{
		Name:        "get_customer",
		Title:       "Get a customer",
		Description: "Get one Example ERP customer by its id (from list_customers): id, name, city and balance. An id that does not exist is NOT_FOUND.",
		Input: schema.Object(
			schema.Prop("id", schema.String("The customer id, e.g. C001.").Match(`^[A-Z0-9]{1,20}$`)).Required(),
		),
		Output: schema.Object(schema.Prop("customer", customerSchema()).Required()),
		Effect: connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			var a struct {
				ID string `json:"id"`
			}
			if err := call.Decode(&a); err != nil {
				return nil, err
			}
			var out struct {
				Customer customer `json:"customer"`
			}
			if err := get(ctx, call.Site, call.HTTP, "/api/customers/"+url.PathEscape(a.ID), nil, &out); err != nil {
				return nil, err
			}
			return out, nil
		},
	}
}
