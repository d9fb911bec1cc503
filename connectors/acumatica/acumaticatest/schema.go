package acumaticatest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// The endpoint definition is Acumatica's own OpenAPI document for
// Default/24.200.001; the catalogue adds what the document lacks: the form
// (screen) of every top-level entity and its key fields in URL order.
var (
	//go:embed data/swagger-Default-24.200.001.json
	swagger24JSON []byte
	//go:embed data/entities-24.200.001.json
	entityCatalogueJSON []byte
)

// Endpoint versions the simulator serves.
const (
	Version24 = "24.200.001"
	Version25 = "25.200.001"
	// EndpointName is the only endpoint the simulator serves.
	EndpointName = "Default"
)

// Field wrapper types as the OpenAPI document names them.
const (
	tString   = "StringValue"
	tDecimal  = "DecimalValue"
	tDouble   = "DoubleValue"
	tInt      = "IntValue"
	tShort    = "ShortValue"
	tByte     = "ByteValue"
	tLong     = "LongValue"
	tBool     = "BooleanValue"
	tDateTime = "DateTimeValue"
	tGuid     = "GuidValue"
)

var wrapperTypes = map[string]bool{tString: true, tDecimal: true, tDouble: true, tInt: true,
	tShort: true, tByte: true, tLong: true, tBool: true, tDateTime: true, tGuid: true}

// fieldKind tells scalars from detail collections and linked entities.
type fieldKind int

const (
	kindScalar fieldKind = iota
	kindDetail           // array of sub-entities, returned only with $expand
	kindLinked           // single sub-entity object, returned only with $expand
)

// schemaField is one property of an entity schema.
type schemaField struct {
	Name string
	Kind fieldKind
	// Type is the wrapper type of a scalar ("StringValue", ...).
	Type string
	// Ref is the schema name of a detail or linked entity.
	Ref string
}

// entitySchema is a top-level entity or a sub-entity (detail line, linked
// object) of one endpoint version.
type entitySchema struct {
	Name     string
	Screen   string // top-level only, e.g. "AR303000"
	Form     string // top-level only, e.g. "Customers (AR303000)"
	Keys     []string
	TopLevel bool
	Fields   map[string]*schemaField
	// Order lists the field names sorted case-insensitively, the order in
	// which Acumatica serialises them.
	Order []string
	lower map[string]string
}

// field resolves a field name case-insensitively.
func (e *entitySchema) field(name string) *schemaField {
	if f, ok := e.Fields[name]; ok {
		return f
	}
	if n, ok := e.lower[strings.ToLower(name)]; ok {
		return e.Fields[n]
	}
	return nil
}

func (e *entitySchema) finish() {
	e.Order = e.Order[:0]
	e.lower = make(map[string]string, len(e.Fields))
	for n := range e.Fields {
		e.Order = append(e.Order, n)
		e.lower[strings.ToLower(n)] = n
	}
	sortFieldNames(e.Order)
}

// sortFieldNames orders names the way Acumatica does: case-insensitively
// ("ShippingZoneID" before "ShipVia", "OrderedQty" before "OrderNbr").
func sortFieldNames(names []string) {
	sort.Slice(names, func(i, j int) bool {
		a, b := strings.ToLower(names[i]), strings.ToLower(names[j])
		if a != b {
			return a < b
		}
		return names[i] < names[j]
	})
}

// endpointSchema is one endpoint version: its entities and its OpenAPI
// document as served at /entity/Default/{version}/swagger.json.
type endpointSchema struct {
	Version  string
	schemas  map[string]*entitySchema // every schema by exact name
	topLevel map[string]*entitySchema // top-level entities by lower-case name
	Names    []string                 // top-level entity names, sorted
	swagger  map[string]any           // OpenAPI document (servers rewritten per request)
}

// entity resolves a top-level entity case-insensitively (IIS routes are
// case-insensitive: the real server answers ~/entity/default/…/customer).
func (ep *endpointSchema) entity(name string) *entitySchema {
	return ep.topLevel[strings.ToLower(name)]
}

// schema returns any schema (top-level or sub-entity) by exact name.
func (ep *endpointSchema) schema(name string) *entitySchema { return ep.schemas[name] }

type catalogueEntry struct {
	Form   string   `json:"form"`
	Screen string   `json:"screen"`
	Keys   []string `json:"keys_in_url_order"`
}

var (
	schemasOnce sync.Once
	schemasByV  map[string]*endpointSchema
	schemasErr  error
)

// endpoints returns the parsed schemas of both versions, built once per
// process (the documents are immutable).
func endpoints() map[string]*endpointSchema {
	schemasOnce.Do(func() {
		schemasByV, schemasErr = buildEndpoints()
	})
	if schemasErr != nil {
		panic("acumaticatest: " + schemasErr.Error())
	}
	return schemasByV
}

func buildEndpoints() (map[string]*endpointSchema, error) {
	var cat struct {
		TopLevel map[string]catalogueEntry `json:"top_level"`
	}
	if err := json.Unmarshal(entityCatalogueJSON, &cat); err != nil {
		return nil, fmt.Errorf("entity catalogue: %w", err)
	}
	doc24, err := decodeJSON(swagger24JSON)
	if err != nil {
		return nil, fmt.Errorf("swagger 24.200.001: %w", err)
	}
	ep24, err := parseEndpoint(Version24, doc24, cat.TopLevel)
	if err != nil {
		return nil, err
	}
	doc25, err := decodeJSON(swagger24JSON) // a fresh copy to transform
	if err != nil {
		return nil, err
	}
	deriveSwagger25(doc25)
	ep25, err := parseEndpoint(Version25, doc25, cat.TopLevel)
	if err != nil {
		return nil, err
	}
	return map[string]*endpointSchema{Version24: ep24, Version25: ep25}, nil
}

func decodeJSON(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// parseEndpoint reads components.schemas of an OpenAPI document. Every
// entity schema is allOf[Entity, {properties}]; a property is a wrapper
// ($ref to …Value), a linked entity ($ref to another schema) or a detail
// collection (array of $ref).
func parseEndpoint(version string, doc map[string]any, cat map[string]catalogueEntry) (*endpointSchema, error) {
	comps, _ := doc["components"].(map[string]any)
	raw, _ := comps["schemas"].(map[string]any)
	if raw == nil {
		return nil, fmt.Errorf("swagger %s: no components.schemas", version)
	}
	ep := &endpointSchema{Version: version, schemas: map[string]*entitySchema{},
		topLevel: map[string]*entitySchema{}, swagger: doc}
	for name, v := range raw {
		sch, _ := v.(map[string]any)
		parts, ok := sch["allOf"].([]any)
		if !ok || !refersTo(parts, "Entity") {
			continue
		}
		es := &entitySchema{Name: name, Fields: map[string]*schemaField{}}
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			props, _ := pm["properties"].(map[string]any)
			for fname, fv := range props {
				if f := parseProperty(fname, fv); f != nil {
					es.Fields[fname] = f
				}
			}
		}
		es.finish()
		ep.schemas[name] = es
	}
	tags, _ := doc["tags"].([]any)
	for _, t := range tags {
		tm, _ := t.(map[string]any)
		name, _ := tm["name"].(string)
		es := ep.schemas[name]
		if es == nil {
			return nil, fmt.Errorf("swagger %s: tag %s has no schema", version, name)
		}
		c := cat[name]
		es.TopLevel, es.Screen, es.Form, es.Keys = true, c.Screen, c.Form, c.Keys
		ep.topLevel[strings.ToLower(name)] = es
		ep.Names = append(ep.Names, name)
	}
	sort.Strings(ep.Names)
	return ep, nil
}

func refersTo(parts []any, schema string) bool {
	for _, p := range parts {
		if pm, ok := p.(map[string]any); ok && pm["$ref"] == "#/components/schemas/"+schema {
			return true
		}
	}
	return false
}

func parseProperty(name string, v any) *schemaField {
	pm, _ := v.(map[string]any)
	if ref, ok := pm["$ref"].(string); ok {
		target := strings.TrimPrefix(ref, "#/components/schemas/")
		if wrapperTypes[target] {
			return &schemaField{Name: name, Kind: kindScalar, Type: target}
		}
		return &schemaField{Name: name, Kind: kindLinked, Ref: target}
	}
	if pm["type"] == "array" {
		items, _ := pm["items"].(map[string]any)
		if ref, ok := items["$ref"].(string); ok {
			return &schemaField{Name: name, Kind: kindDetail, Ref: strings.TrimPrefix(ref, "#/components/schemas/")}
		}
	}
	return nil
}
