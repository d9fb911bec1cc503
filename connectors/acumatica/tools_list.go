package acumatica

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// deniedEntity matches the entities the generic lister never reads,
// whatever the caller's rights: sign-in, role and credential data. The
// Default endpoint exposes none of them, but a site's custom endpoint may,
// and the filter pass-through must not become a way to read them.
// Matched case-insensitively against the entity and every expanded name.
var deniedEntity = regexp.MustCompile(`(?i)^(users?|userroles?|userinfo|userlogins?|roles?|rolemembers?|accessrights?|useraccess|members?inroles?|connectedapplications?|oauthclients?|apikeys?|logins?|loginsessions?|.*password.*|.*credential.*|.*secret.*|.*token.*|.*certificate.*)$`)

type listEntitiesArgs struct {
	Entity           string   `json:"entity"`
	FilterExpression string   `json:"filterExpression"`
	Select           []string `json:"select"`
	Expand           []string `json:"expand"`
	Top              int      `json:"top"`
	IncludeArchived  bool     `json:"includeArchived"`
}

func listEntitiesTool(conn *Connector) connector.Tool {
	return connector.Tool{
		Name:  "acumatica_list_entities",
		Title: "List Acumatica records",
		Description: "List records of any contract-API entity (Customer, SalesOrder, Invoice, StockItem…) as the signed-in user, with an OData v3 filterExpression passed to Acumatica verbatim. " +
			"Rows have plain values (wrappers removed, empty fields null, decimals exact). Results stop at top (default 100) and the site's record cap; there is no paging: " +
			"when truncated is true, follow actionRequired and narrow the filter instead of calling again. " +
			"Filters use OData v3: substringof('text', Field), startswith(Field,'text'), datetimeoffset'2026-01-31T00:00:00+00:00'; field names exactly as acumatica_describe_entity lists them; paths through linked entities work (MainContact/Email), but a filter on detail lines (Details/InventoryID) is refused, since Acumatica does not support one and answers it unpredictably. " +
			"expand takes detail collections or linked entities one level deep (nested paths are refused). Sign-in and credential entities are never listed, nor inquiry entities (names ending in Inquiry, and CompaniesStructure), which have no records to list. " +
			"Fields erpgate redacts (tax ids, bank, card and account numbers, pay, birth dates) cannot be filtered on, selected or expanded: such a call is refused as INVALID_ARGUMENT naming the field. " +
			"Records Acumatica has archived (old closed documents) are left out, as on its screens, unless includeArchived is true; the getters read an archived record by its keys either way.",
		Input: schema.Object(
			schema.Prop("entity", schema.String("The entity name, e.g. Customer, SalesOrder, Invoice, Bill, StockItem, Vendor.").Match(entityNamePattern)).Required(),
			filterProp(dialectContract),
			selectProp(),
			schema.Prop("expand", schema.Array(schema.String("A detail collection or linked entity name, e.g. Details or MainContact.").Match(collectionNamePattern),
				"Detail collections and linked entities to include, one level deep. Some collections make Acumatica refuse a list (it cannot optimise it); then read single records by key.").Count(1, 20)),
			topProp(),
			schema.Prop("includeArchived", schema.Boolean("Also list records Acumatica has archived (sent as PX-ApiArchive: SHOW). Archived records are left out unless this is true, as on Acumatica's screens.").WithDefault(false)),
		),
		Output: envelopeSchema(recordSchema("One record with plain values."),
			schema.Prop("entity", schema.String("The entity listed.")).Required(),
			endpointProp()),
		Effect: connector.Read,
		Fields: queryFields,
		Handler: func(ctx context.Context, call *connector.Call) (any, error) {
			a, err := args[listEntitiesArgs](call)
			if err != nil {
				return nil, err
			}
			return listEntities(ctx, newClient(conn, call), a)
		},
	}
}

func listEntities(ctx context.Context, c *client, a listEntitiesArgs) (any, error) {
	if deniedEntity.MatchString(a.Entity) {
		return nil, toolerr.New(toolerr.PermissionDenied, "erpgate never lists %q: sign-in, role and credential entities are excluded whatever the user's rights", a.Entity)
	}
	for _, e := range a.Expand {
		if strings.Contains(e, "/") {
			return nil, toolerr.New(toolerr.InvalidArgument,
				"expand %q is a nested path; this tool expands one level only (name the collection or linked entity itself), so sub-records cannot be reached through a chain", e)
		}
		if deniedEntity.MatchString(e) {
			return nil, toolerr.New(toolerr.PermissionDenied, "erpgate never expands %q: sign-in and credential data are excluded", e)
		}
	}
	if err := checkSelect(a.Select, a.Expand); err != nil {
		return nil, err
	}
	if name, info, ok := inquiryEntity(a.Entity); ok {
		return nil, toolerr.New(toolerr.InvalidArgument,
			"%s is an inquiry form in Acumatica (%s, %s), not a set of records: it has no records to list, and Acumatica computes its rows only from the parameters sent with it, which this tool does not do. "+
				"For the same data, find a generic inquiry with acumatica_list_generic_inquiries and read it with acumatica_run_inquiry, or list the entity whose records it summarises. Nothing was read",
			name, info.Form, info.Screen)
	}
	if err := refuseDetailFilter(ctx, c, a.Entity, a.FilterExpression); err != nil {
		return nil, err
	}
	limit := rowLimit(a.Top, c.set.recordCap(c.call))
	op := contractOp{entity: a.Entity, filter: dropEqTrue(a.FilterExpression), sel: selectWithExpanded(a.Select, a.Expand), expand: strings.Join(dedupe(a.Expand), ","),
		archived: a.IncludeArchived}
	rows, err := c.listRows(ctx, op, limit+1)
	if err != nil {
		return nil, err
	}
	kept, status := newStatus(len(rows), limit, c.set.recordCap(c.call), "a more specific filterExpression, such as a date range, status or customer")
	return unwrappedEnvelope(rows[:kept], struct {
		envelopeStatus
		Entity   string `json:"entity"`
		Endpoint string `json:"endpoint"`
	}{status, a.Entity, c.set.endpoint()})
}

// inquiryEntity finds a Default-endpoint inquiry entity by name (any case):
// keyless, named *Inquiry or CompaniesStructure. Acumatica reads one only
// with a PUT carrying its parameters and $expand=Results, and answers a
// GET list of one with a 500 CannotOptimizeException (api-facts.md).
func inquiryEntity(entity string) (string, entityInfo, bool) {
	for name, info := range defaultEntities {
		if strings.EqualFold(name, entity) && len(info.Keys) == 0 &&
			(strings.HasSuffix(name, "Inquiry") || name == "CompaniesStructure") {
			return name, info, true
		}
	}
	return "", entityInfo{}, false
}

// refuseDetailFilter refuses a filter on the fields of detail lines
// (Details/InventoryID): Acumatica does not support it and its results are
// unpredictable (api-facts.md §1.2), so the rows would look like a complete
// answer and not be one. Paths through linked entities (MainContact/Email)
// are supported. Telling the two apart takes the endpoint's schema, read
// only for a filter with a path; when it cannot be read, the filter is
// sent as it is.
func refuseDetailFilter(ctx context.Context, c *client, entity, filter string) error {
	names, err := odataFieldNames(filter)
	if err != nil || !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "/") }) {
		return nil
	}
	m, err := c.model(ctx)
	if err != nil {
		return nil
	}
	top := m.entity(entity)
	if top == nil {
		return nil
	}
	for _, name := range names {
		e := top
		segs := strings.Split(name, "/")
		for i, seg := range segs[:len(segs)-1] {
			if l := findLink(e.Details, seg); l != nil {
				return toolerr.New(toolerr.InvalidArgument,
					"filterExpression names %s, a field of %s's detail lines (%s): Acumatica does not support filtering on detail lines and returns unpredictable records for it, so the request was not sent. "+
						"Filter on %s's own fields or its linked entities; to find records by their lines, look for a generic inquiry over the lines (acumatica_list_generic_inquiries)",
					name, top.Name, strings.Join(segs[:i+1], "/"), top.Name)
			}
			l := findLink(e.Linked, seg)
			if l == nil {
				break
			}
			if e = m.Subs[l.Entity]; e == nil {
				// A linked entity may be a top-level one (MainContact is a Contact).
				if e = m.Entities[l.Entity]; e == nil {
					break
				}
			}
		}
	}
	return nil
}

// findLink returns the collection or linked entity named name (in any
// case), or nil.
func findLink(links []apiLink, name string) *apiLink {
	for i := range links {
		if strings.EqualFold(links[i].Name, name) {
			return &links[i]
		}
	}
	return nil
}
