package acumatica

import (
	"context"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// Generic Inquiries are read over OData v4 at /t/{tenant}/api/odata/gi.
// The list and describe tools read the tenant's $metadata (cached); the
// run tool reads data as the signed-in user, whose rights decide whether
// an inquiry is readable.

func inquiryNameProp() schema.Property {
	return schema.Prop("name", schema.String("The inquiry's OData name exactly as acumatica_list_generic_inquiries shows it, e.g. AR-OpenInvoices or Customer Contacts.").Match(inquiryNamePattern)).Required()
}

func columnSchema() *schema.Schema {
	return schema.Object(
		schema.Prop("name", schema.String("Column (or parameter) name, as filters and select take it.")).Required(),
		schema.Prop("type", schema.String("EDM type: Edm.String, Edm.Decimal, Edm.Int32, Edm.Boolean, Edm.DateTimeOffset, Edm.Guid…")).Required(),
	)
}

type listInquiriesArgs struct {
	Search string `json:"search"`
	Top    int    `json:"top"`
}

func listInquiriesTool(conn *Connector) connector.Tool {
	row := schema.Object(
		schema.Prop("name", schema.String("The inquiry's OData name, for the other inquiry tools.")).Required(),
		schema.Prop("columns", schema.Integer("How many columns it returns.")).Required(),
		schema.Prop("keys", schema.Array(schema.String(""), "Key fields of its source tables.")).Required(),
		schema.Prop("parameters", schema.Array(schema.String(""), "Parameters it takes, if any.")).Required(),
	)
	return connector.Tool{
		Name:  "acumatica_list_generic_inquiries",
		Title: "List Acumatica generic inquiries",
		Description: "List the Generic Inquiries this site exposes over OData, from the tenant's $metadata (cached for an hour): name, column count, keys and parameters. " +
			"Inquiries are ready-made queries (often joining several tables) and are frequently the best way to answer a question. " +
			"Listing shows every exposed inquiry; whether this user may read one's data is decided when it is run. No paging: narrow with search.",
		Input: schema.Object(
			schema.Prop("search", schema.String("Only inquiries whose name contains this text (case-insensitive).").Len(1, 100)),
			topProp(),
		),
		Output: envelopeSchema(row, schema.Prop("tenant", schema.String("The tenant whose inquiries these are.")).Required()),
		Effect: connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[listInquiriesArgs](call)
			if err != nil {
				return nil, err
			}
			c := newClient(conn, call)
			m, err := c.inquiries(ctx)
			if err != nil {
				return nil, err
			}
			var rows []any
			for _, q := range m.Inquiries {
				if a.Search != "" && !strings.Contains(strings.ToLower(q.Name), strings.ToLower(a.Search)) {
					continue
				}
				keys := q.Keys
				if keys == nil {
					keys = []string{}
				}
				rows = append(rows, map[string]any{"name": q.Name, "columns": len(q.Columns), "keys": keys, "parameters": columnNames(q.Parameters)})
			}
			recordCap := c.set.recordCap(call)
			limit := rowLimit(a.Top, recordCap)
			env := newEnvelope(rows, limit, recordCap, "a search text that matches fewer inquiry names")
			return struct {
				listEnvelope
				Tenant string `json:"tenant"`
			}{env, c.set.Tenant}, nil
		},
	}
}

type inquiryNameArgs struct {
	Name string `json:"name"`
}

func describeInquiryTool(conn *Connector) connector.Tool {
	return connector.Tool{
		Name:  "acumatica_describe_inquiry",
		Title: "Describe an Acumatica generic inquiry",
		Description: "Describe one Generic Inquiry exposed over OData: its columns with their types (the names filters and select use), the key fields of its source tables, and its parameters. " +
			"Read from the tenant's $metadata (cached for an hour). Inquiry filters are OData v4: contains(Column,'text'), Date ge 2026-01-31.",
		Input: schema.Object(inquiryNameProp()),
		Output: schema.Object(
			schema.Prop("name", schema.String("The inquiry's OData name.")).Required(),
			schema.Prop("type", schema.String("Its EDM entity type.")).Required(),
			schema.Prop("keys", schema.Array(schema.String(""), "Key fields of its source tables (not necessarily displayed).")).Required(),
			schema.Prop("columns", schema.Array(columnSchema(), "Its columns.")).Required(),
			schema.Prop("parameters", schema.Array(columnSchema(), "Its parameters; pass them in acumatica_run_inquiry's parameters.")).Required(),
			schema.Prop("filterExample", schema.String("A filterExpression in this inquiry's dialect.")).Required(),
		),
		Effect: connector.Read,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[inquiryNameArgs](call)
			if err != nil {
				return nil, err
			}
			c := newClient(conn, call)
			m, err := c.inquiries(ctx)
			if err != nil {
				return nil, err
			}
			q := m.inquiry(a.Name)
			if q == nil {
				return nil, unknownInquiry(m, a.Name)
			}
			return describeInquiry(q), nil
		},
	}
}

func unknownInquiry(m *giModel, name string) error {
	var names []string
	for _, q := range m.Inquiries {
		names = append(names, q.Name)
	}
	msg := "tenant " + quote(m.Tenant) + " exposes no inquiry named " + quote(name) + " over OData"
	if s := closestFields(name, names); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return toolerr.New(toolerr.NotFound, "%s acumatica_list_generic_inquiries lists them", msg+".")
}

func describeInquiry(q *giInquiry) map[string]any {
	cols := []map[string]any{}
	for _, c := range q.Columns {
		cols = append(cols, map[string]any{"name": c.Name, "type": c.Type})
	}
	params := []map[string]any{}
	for _, p := range q.Parameters {
		params = append(params, map[string]any{"name": p.Name, "type": p.Type})
	}
	keys := q.Keys
	if keys == nil {
		keys = []string{}
	}
	return map[string]any{"name": q.Name, "type": q.Type, "keys": keys, "columns": cols, "parameters": params, "filterExample": inquiryFilterExample(q)}
}

// inquiryFilterExample writes a filter over the inquiry's first text and
// date columns in OData v4.
func inquiryFilterExample(q *giInquiry) string {
	var parts []string
	for _, c := range q.Columns {
		if c.Type == "Edm.String" {
			parts = append(parts, "contains("+c.Name+",'text')")
			break
		}
	}
	for _, c := range q.Columns {
		if c.Type == "Edm.DateTimeOffset" || c.Type == "Edm.Date" || c.Type == "Edm.DateTime" {
			parts = append(parts, c.Name+" ge 2026-01-01")
			break
		}
	}
	if len(parts) == 0 && len(q.Columns) > 0 {
		parts = append(parts, q.Columns[0].Name+" eq 'value'")
	}
	return strings.Join(parts, " and ")
}

type runInquiryArgs struct {
	Name             string            `json:"name"`
	FilterExpression string            `json:"filterExpression"`
	Select           []string          `json:"select"`
	OrderBy          string            `json:"orderBy"`
	Top              int               `json:"top"`
	Parameters       map[string]string `json:"parameters"`
}

func runInquiryTool(conn *Connector) connector.Tool {
	return connector.Tool{
		Name:  "acumatica_run_inquiry",
		Title: "Run an Acumatica generic inquiry",
		Description: "Run a Generic Inquiry over OData v4 as the signed-in user and return its rows (plain JSON; decimal columns exact). " +
			"filterExpression is OData v4, passed verbatim: contains(Column,'text'), Column eq 'X', Date ge 2026-01-31 (bare dates). Column names are case-sensitive; acumatica_describe_inquiry lists them. Columns erpgate redacts (tax ids, bank, card and account numbers, pay, birth dates) cannot be filtered on, sorted by or selected: such a call is refused as INVALID_ARGUMENT naming the column. " +
			"Rows stop at top (default 100) and the site's record cap; there is no paging: when truncated is true, follow actionRequired and narrow the filter.",
		Input: schema.Object(
			inquiryNameProp(),
			filterProp(dialectInquiry),
			schema.Prop("select", schema.Array(schema.String("A column name.").Match(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`), "Only these columns.").Count(1, 100)),
			schema.Prop("orderBy", schema.String("OData $orderby: column names, each optionally followed by asc or desc, e.g. DueDate desc,ReferenceNbr.").Match(`^[A-Za-z_][A-Za-z0-9_]*( (asc|desc))?(, ?[A-Za-z_][A-Za-z0-9_]*( (asc|desc))?){0,9}$`)),
			topProp(),
			schema.Prop("parameters", withDesc(schema.Map(schema.String("").Len(0, 200)), "Values of the inquiry's parameters by name (see acumatica_describe_inquiry), e.g. {\"Warehouse\":\"MAIN\"}.")),
		),
		Output: envelopeSchema(withDesc(schema.OpenObject(), "One row: column name to value."),
			schema.Prop("inquiry", schema.String("The inquiry run.")).Required()),
		Effect: connector.Read,
		Fields: queryFields,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[runInquiryArgs](call)
			if err != nil {
				return nil, err
			}
			return runInquiry(ctx, newClient(conn, call), a)
		},
	}
}

func runInquiry(ctx context.Context, c *client, a runInquiryArgs) (any, error) {
	if err := c.needTenant(); err != nil {
		return nil, err
	}
	// As acumatica_list_entities never lists sign-in, role and credential
	// entities: the administrators' inquiry lists every user's roles.
	if strings.EqualFold(a.Name, c.set.adminInquiry()) {
		return nil, toolerr.New(toolerr.PermissionDenied,
			"erpgate never reads the inquiry %q: it is the administrators' inquiry erpgate checks administrators with, and it lists every user's roles, which erpgate excludes whatever the user's rights. Nothing was read", a.Name)
	}
	if deniedEntity.MatchString(a.Name) {
		return nil, toolerr.New(toolerr.PermissionDenied,
			"erpgate never reads the inquiry %q: its name says it holds sign-in, role or credential data, which erpgate excludes whatever the user's rights. Nothing was read", a.Name)
	}
	m, err := c.inquiries(ctx)
	if err != nil {
		return nil, err
	}
	inq := m.inquiry(a.Name)
	name := a.Name
	if inq != nil {
		name = inq.Name
		if err := checkInquiryArgs(inq, a); err != nil {
			return nil, err
		}
	}
	recordCap := c.set.recordCap(c.call)
	limit := rowLimit(a.Top, recordCap)
	rows, err := c.inquiryRows(ctx, giQuery{name: name, filter: a.FilterExpression, sel: dedupe(a.Select), orderBy: a.OrderBy, top: limit + 1, params: a.Parameters}, inq)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	env := newEnvelope(out, limit, recordCap, "a more specific filterExpression on the inquiry's columns")
	return struct {
		listEnvelope
		Inquiry string `json:"inquiry"`
	}{env, name}, nil
}

// checkInquiryArgs refuses select columns and parameters the inquiry does
// not have, before any request: the answer names the real ones.
func checkInquiryArgs(q *giInquiry, a runInquiryArgs) error {
	for _, s := range a.Select {
		if q.column(s) == nil {
			msg := "the inquiry " + quote(q.Name) + " has no column " + quote(s)
			if c := closestFields(s, q.columnNames()); len(c) > 0 {
				msg += "; did you mean " + strings.Join(c, " or ") + "?"
			}
			return toolerr.New(toolerr.InvalidArgument, "%s Its columns: %s", msg, strings.Join(q.columnNames(), ", "))
		}
	}
	for p := range a.Parameters {
		found := false
		for _, qp := range q.Parameters {
			found = found || qp.Name == p
		}
		if !found {
			if len(q.Parameters) == 0 {
				return toolerr.New(toolerr.InvalidArgument, "the inquiry %q takes no parameters", q.Name)
			}
			return toolerr.New(toolerr.InvalidArgument, "the inquiry %q has no parameter %q; its parameters: %s", q.Name, p, strings.Join(columnNames(q.Parameters), ", "))
		}
	}
	return nil
}
