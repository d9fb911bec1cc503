// Package schema builds the JSON Schemas that describe tool inputs and
// outputs. Connectors declare their catalogues with it, so a schema reads as
// data next to the tool it belongs to, and every input object is strict
// (additionalProperties: false) unless a tool says otherwise.
package schema

import (
	"encoding/json"
	"slices"
)

// Schema is one JSON Schema (2020-12 subset) node. Build it with the
// constructors below; the zero value accepts anything.
type Schema struct {
	Type                 any                `json:"type,omitempty"`
	Title                string             `json:"title,omitempty"`
	Description          string             `json:"description,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Const                any                `json:"const,omitempty"`
	Format               string             `json:"format,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	MaxLength            *int               `json:"maxLength,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	MinItems             *int               `json:"minItems,omitempty"`
	MaxItems             *int               `json:"maxItems,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties any                `json:"additionalProperties,omitempty"`
	AnyOf                []*Schema          `json:"anyOf,omitempty"`
	Default              any                `json:"default,omitempty"`
	Examples             []any              `json:"examples,omitempty"`
}

// Property is a named member of an object schema.
type Property struct {
	Name     string
	Schema   *Schema
	required bool
}

// Prop names a property of an object.
func Prop(name string, s *Schema) Property { return Property{Name: name, Schema: s} }

// Required marks the property as required.
func (p Property) Required() Property { p.required = true; return p }

// Object returns a strict object schema: unknown properties are invalid.
func Object(props ...Property) *Schema {
	s := OpenObject(props...)
	s.AdditionalProperties = false
	return s
}

// OpenObject returns an object schema that also allows properties it does not
// name. Output schemas of ERP records use it, because an ERP may add fields.
func OpenObject(props ...Property) *Schema {
	s := &Schema{Type: "object", Properties: map[string]*Schema{}}
	for _, p := range props {
		if _, dup := s.Properties[p.Name]; dup {
			panic("schema: duplicate property " + p.Name)
		}
		s.Properties[p.Name] = p.Schema
		if p.required {
			s.Required = append(s.Required, p.Name)
		}
	}
	return s
}

// Map returns an object whose property values all match values.
func Map(values *Schema) *Schema {
	return &Schema{Type: "object", AdditionalProperties: values}
}

// String returns a string schema.
func String(description string) *Schema { return &Schema{Type: "string", Description: description} }

// Integer returns an integer schema.
func Integer(description string) *Schema { return &Schema{Type: "integer", Description: description} }

// Number returns a number schema.
func Number(description string) *Schema { return &Schema{Type: "number", Description: description} }

// Boolean returns a boolean schema.
func Boolean(description string) *Schema { return &Schema{Type: "boolean", Description: description} }

// Array returns an array schema of items.
func Array(items *Schema, description string) *Schema {
	return &Schema{Type: "array", Items: items, Description: description}
}

// Any returns a schema that accepts any JSON value.
func Any(description string) *Schema { return &Schema{Description: description} }

// Date returns a string schema for an ISO calendar date (YYYY-MM-DD).
func Date(description string) *Schema {
	return &Schema{Type: "string", Format: "date", Pattern: `^\d{4}-\d{2}-\d{2}$`, Description: description}
}

// Nullable lets s also be null.
func (s *Schema) Nullable() *Schema {
	switch t := s.Type.(type) {
	case string:
		s.Type = []string{t, "null"}
	case []string:
		if !slices.Contains(t, "null") {
			s.Type = append(t, "null")
		}
	}
	return s
}

// OneOf restricts a string schema to the given values.
func (s *Schema) OneOf(values ...string) *Schema {
	s.Enum = make([]any, len(values))
	for i, v := range values {
		s.Enum[i] = v
	}
	return s
}

// Min sets the inclusive minimum of a number or integer.
func (s *Schema) Min(v float64) *Schema { s.Minimum = &v; return s }

// Max sets the inclusive maximum of a number or integer.
func (s *Schema) Max(v float64) *Schema { s.Maximum = &v; return s }

// Len bounds a string's length.
func (s *Schema) Len(min, max int) *Schema { s.MinLength, s.MaxLength = &min, &max; return s }

// Count bounds an array's length.
func (s *Schema) Count(min, max int) *Schema { s.MinItems, s.MaxItems = &min, &max; return s }

// Match sets a regular expression the string must match.
func (s *Schema) Match(pattern string) *Schema { s.Pattern = pattern; return s }

// WithDefault documents the value used when the property is absent.
func (s *Schema) WithDefault(v any) *Schema { s.Default = v; return s }

// Example adds an example value.
func (s *Schema) Example(v any) *Schema { s.Examples = append(s.Examples, v); return s }

// JSON returns the schema encoded as JSON. It panics on a schema that cannot
// be encoded, which is a programming error caught by the catalogue tests.
func (s *Schema) JSON() json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic("schema: " + err.Error())
	}
	return b
}
