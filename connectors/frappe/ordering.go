package frappe

import (
	"slices"

	"github.com/erpgate/erpgate/platform/connector/schema"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// ordering is a tool's allowlist of sort fields. Every order ends with the
// document name in the same direction, so equal sort keys still page
// without gaps or duplicates.
type ordering struct {
	fields       []string
	defaultField string
	defaultDir   string
}

func (o ordering) props() []schema.Property {
	return []schema.Property{
		schema.Prop("order_by", schema.String("Field to sort by; the document name is always added as tie-breaker.").OneOf(o.fields...).WithDefault(o.defaultField)),
		schema.Prop("order", schema.String("Sort direction.").OneOf("asc", "desc").WithDefault(o.defaultDir)),
	}
}

// build returns the Frappe order_by clause.
func (o ordering) build(field, dir string) (string, error) {
	if field == "" {
		field = o.defaultField
	}
	if dir == "" {
		dir = o.defaultDir
	}
	if !slices.Contains(o.fields, field) {
		return "", toolerr.New(toolerr.InvalidArgument, "order_by must be one of %v", o.fields)
	}
	if dir != "asc" && dir != "desc" {
		return "", toolerr.New(toolerr.InvalidArgument, "order must be asc or desc")
	}
	if field == "name" {
		return "name " + dir, nil
	}
	return field + " " + dir + ", name " + dir, nil
}
