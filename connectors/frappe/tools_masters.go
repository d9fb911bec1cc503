package frappe

import (
	"context"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/schema"
)

func listCompaniesTool() connector.Tool {
	row := schema.OpenObject(
		schema.Prop("name", schema.String("Company name, used as the company filter elsewhere.")),
		schema.Prop("abbr", schema.String("Abbreviation, the suffix of account and warehouse names.")),
		schema.Prop("default_currency", schema.String("Company (base) currency.")),
		schema.Prop("country", schema.String("Country.")),
	)
	order := ordering{fields: []string{"name"}, defaultField: "name", defaultDir: "asc"}
	return connector.Tool{
		Name:        "list_companies",
		Title:       "Companies",
		Description: "List the companies this user may see. Use a company's name as the company filter of other tools; amounts in base_* fields are in its default_currency.",
		Input:       schema.Object(pageProps()...),
		Output:      listPageSchema(row),
		Effect:      connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[pageArgs](call)
			if err != nil {
				return nil, err
			}
			orderBy, _ := order.build("", "")
			q := listQuery{Fields: []string{"name", "abbr", "default_currency", "country"}, OrderBy: orderBy}
			return fetchPage(ctx, newClient(call.Site, call.HTTP), "Company", q, a, call.MaxRecords, nil)
		},
	}
}

type listCustomersArgs struct {
	pageArgs
	Search          string `json:"search"`
	CustomerGroup   string `json:"customer_group"`
	Territory       string `json:"territory"`
	IncludeDisabled bool   `json:"include_disabled"`
	OrderBy         string `json:"order_by"`
	Order           string `json:"order"`
}

var customerOrdering = ordering{fields: []string{"customer_name", "name", "creation"}, defaultField: "customer_name", defaultDir: "asc"}

func listCustomersTool() connector.Tool {
	props := append([]schema.Property{
		schema.Prop("search", schema.String("Text to find in the customer id or name. It is matched literally as text, not as a filter language.").Len(1, 140)),
		schema.Prop("customer_group", schema.String("Exact customer group.").Len(1, 140)),
		schema.Prop("territory", schema.String("Exact territory.").Len(1, 140)),
		schema.Prop("include_disabled", schema.Boolean("Include disabled customers.").WithDefault(false)),
	}, customerOrdering.props()...)
	props = append(props, pageProps()...)
	row := schema.OpenObject(
		schema.Prop("name", schema.String("Customer id: use it as the exact customer filter elsewhere.")),
		schema.Prop("customer_name", schema.String("Display name.")),
		schema.Prop("customer_type", schema.String("Company, Individual or Partnership.")),
		schema.Prop("customer_group", schema.String("Customer group.")),
		schema.Prop("territory", schema.String("Territory.")),
		schema.Prop("default_currency", schema.String("Billing currency, if set.").Nullable()),
		schema.Prop("disabled", schema.Integer("1 when disabled.")),
	)
	return connector.Tool{
		Name:        "list_customers",
		Title:       "Customers",
		Description: "Search customers by id or name. Results are pages in a stable order; repeat the same request with meta.next_offset for the next page.",
		Input:       schema.Object(props...),
		Output:      listPageSchema(row),
		Effect:      connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[listCustomersArgs](call)
			if err != nil {
				return nil, err
			}
			orderBy, err := customerOrdering.build(a.OrderBy, a.Order)
			if err != nil {
				return nil, err
			}
			q := listQuery{
				Fields:  []string{"name", "customer_name", "customer_type", "customer_group", "territory", "default_currency", "disabled"},
				OrderBy: orderBy,
			}
			q.Filters.addIf("customer_group", a.CustomerGroup)
			q.Filters.addIf("territory", a.Territory)
			if !a.IncludeDisabled {
				q.Filters.add("disabled", "=", 0)
			}
			var search *textSearch
			if a.Search != "" {
				search = &textSearch{text: a.Search, fields: []string{"name", "customer_name"}}
			}
			return fetchPage(ctx, newClient(call.Site, call.HTTP), "Customer", q, a.pageArgs, call.MaxRecords, search)
		},
	}
}
