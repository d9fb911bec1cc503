package acumatica

import (
	"github.com/erpgate/erpgate/platform/connector/schema"
)

// Shared pieces of the tool schemas.

// Patterns of names a caller passes through to Acumatica. They admit what
// Acumatica's names are made of and nothing that could change the meaning
// of a URL.
const (
	// entityNamePattern is a contract-API entity name.
	entityNamePattern = `^[A-Za-z][A-Za-z0-9_]{0,63}$`
	// fieldPathPattern is a field, or one linked entity and its field.
	fieldPathPattern = `^[A-Za-z_][A-Za-z0-9_]{0,99}(/[A-Za-z_][A-Za-z0-9_]{0,99})?$`
	// collectionNamePattern is a detail collection or linked entity name
	// (a nested path is refused by the handler with an explanation).
	collectionNamePattern = `^[A-Za-z_][A-Za-z0-9_/]{0,127}$`
	// inquiryNamePattern admits inquiry titles as Acumatica exposes them:
	// letters, digits, spaces, hyphens, underscores.
	inquiryNamePattern = `^[A-Za-z0-9_][A-Za-z0-9 _-]{0,127}$`
	guidPattern        = `^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`
)

// selectProp limits the fields of a record.
func selectProp() schema.Property {
	return schema.Prop("select", schema.Array(schema.String("A field name, or LinkedEntity/Field for an expanded linked entity.").Match(fieldPathPattern),
		"Only these fields (Acumatica's $select). Names are case-sensitive, as acumatica_describe_entity lists them. Omit for every field. What expand names comes whole unless select names fields of it.").Count(1, 100))
}

// filterProp is the OData $filter passed through verbatim.
func filterProp(d filterDialect) schema.Property {
	desc := "OData v3 $filter, passed to Acumatica verbatim, e.g. Status eq 'Open' and Date ge datetimeoffset'2026-01-01T00:00:00+00:00' or substringof('acme', CustomerName). Use the entity's field names exactly. " +
		"Write substringof, startswith and endswith bare: Acumatica answers them compared with true with no rows, so erpgate drops such an eq true."
	if d == dialectInquiry {
		desc = "OData v4 $filter, passed to Acumatica verbatim, e.g. Status eq 'Open' and DueDate lt 2026-06-01 or contains(CustomerName,'acme'). Use the inquiry's column names exactly."
	}
	return schema.Prop("filterExpression", schema.String(desc).Len(1, 2000))
}

// topProp is the row limit of a list.
func topProp() schema.Property {
	return schema.Prop("top", schema.Integer("Most rows to return (default 100). The site's record cap applies; there is no paging, so narrow the filter rather than asking for more.").Min(1).Max(maxRecordsCeiling).WithDefault(defaultTop))
}

// defaultTop is how many rows a list returns when the caller says nothing.
const defaultTop = 100

// envelopeSchema is the output of every list: the truncation envelope
// (envelope.go), with rows described by row.
func envelopeSchema(row *schema.Schema, extra ...schema.Property) *schema.Schema {
	props := append([]schema.Property{
		schema.Prop("results", schema.Array(row, "The rows, in Acumatica's order.")).Required(),
		schema.Prop("truncated", schema.Boolean("True when more rows match than were returned.")).Required(),
		schema.Prop("recordsReturned", schema.Integer("How many rows results holds.")).Required(),
		schema.Prop("recordLimit", schema.Integer("The most rows this call could return (top, capped by the site's record limit).")).Required(),
		schema.Prop("paginationSupported", schema.Boolean("Always false: these tools do not page. When truncated, narrow the request instead of calling again.")).Required(),
		schema.Prop("actionRequired", schema.String("Present when truncated: what to do instead of asking for the next page.")),
	}, extra...)
	return schema.Object(props...)
}

// recordSchema is an unwrapped Acumatica record.
func recordSchema(description string) *schema.Schema {
	s := schema.OpenObject(
		schema.Prop("id", schema.String("Acumatica's id of the record (its NoteID).")),
		schema.Prop("note", schema.String("The record's note.").Nullable()),
	)
	s.Description = description
	return s
}

// endpointProp names the endpoint a result came from.
func endpointProp() schema.Property {
	return schema.Prop("endpoint", schema.String("The contract-based endpoint read, e.g. Default/24.200.001.")).Required()
}

// withDesc sets a schema's description.
func withDesc(s *schema.Schema, description string) *schema.Schema {
	s.Description = description
	return s
}
