package frappe

import "github.com/erpgate/erpgate/platform/connector/schema"

// Small schema helpers shared by the tool declarations.

// withDesc sets a schema's description.
func withDesc(s *schema.Schema, description string) *schema.Schema {
	s.Description = description
	return s
}

// money is an amount as the ERP sent it: an exact JSON number.
func money(description string) *schema.Schema { return schema.Number(description) }

// warningsProp lists what makes a result partial or needs care.
func warningsProp() schema.Property {
	return schema.Prop("warnings", schema.Array(schema.String(""), "What makes this result partial or needs care when relaying it; empty when there is nothing to add. Never read a partial result as \"no records\"."))
}

// currencyCode is an ISO 4217 currency argument.
func currencyCode(description string) *schema.Schema {
	return schema.String(description).Match(`^[A-Z]{3}$`)
}

// docstatusProp is the docstatus filter of submittable documents.
func docstatusProp() schema.Property {
	return schema.Prop("docstatus", schema.Integer("0 draft, 1 submitted, 2 cancelled. Lists include every state unless this is set; use 1 for amounts that count.").Min(0).Max(2))
}
