package acumatica

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// apiModel is the compact form of an endpoint's OpenAPI document that the
// describe and schema tools use: every entity (top-level and sub-entity)
// with its scalar fields and collections. It is derived once per site and
// endpoint and cached; the 2–3 MB document itself is not kept.
type apiModel struct {
	Endpoint string `json:"endpoint"`
	// Entities are the top-level entities (the document's tags).
	Entities map[string]*apiEntity `json:"entities"`
	// Subs are detail-line and linked entity schemas.
	Subs map[string]*apiEntity `json:"subs"`
}

// apiEntity is one entity schema.
type apiEntity struct {
	Name   string     `json:"name"`
	Form   string     `json:"form,omitempty"`
	Screen string     `json:"screen,omitempty"`
	Fields []apiField `json:"fields"`
	// Details are detail collections (arrays); Linked are linked entities
	// (objects). Both come back only when named in expand.
	Details []apiLink `json:"details,omitempty"`
	Linked  []apiLink `json:"linked,omitempty"`
}

// apiField is a scalar field and its type without the wrapper suffix
// ("String", "Decimal", "DateTime").
type apiField struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// apiLink is a collection or linked entity and the schema of its items.
type apiLink struct {
	Name   string `json:"name"`
	Entity string `json:"entity"`
}

// entity returns a top-level entity, matching the name exactly first and
// then case-insensitively.
func (m *apiModel) entity(name string) *apiEntity {
	if e := m.Entities[name]; e != nil {
		return e
	}
	for n, e := range m.Entities {
		if strings.EqualFold(n, name) {
			return e
		}
	}
	return nil
}

// names returns the top-level entity names, sorted.
func (m *apiModel) names() []string {
	out := make([]string, 0, len(m.Entities))
	for n := range m.Entities {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// openAPIDocument is the part of Acumatica's OpenAPI 3 document the model
// needs.
type openAPIDocument struct {
	Info struct {
		Title string `json:"title"`
	} `json:"info"`
	Tags []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"tags"`
	Components struct {
		Schemas map[string]struct {
			AllOf []struct {
				Ref        string                     `json:"$ref"`
				Properties map[string]openAPIProperty `json:"properties"`
			} `json:"allOf"`
		} `json:"schemas"`
	} `json:"components"`
}

type openAPIProperty struct {
	Ref   string `json:"$ref"`
	Type  string `json:"type"`
	Items *struct {
		Ref string `json:"$ref"`
	} `json:"items"`
}

// formTag reads a tag description, "Customers (AR303000)".
var formTag = regexp.MustCompile(`^\s*(.*?)\s*\(([A-Z]{2}[0-9A-Z]{4,8})\)\s*$`)

// parseOpenAPI builds the model from the document's bytes.
func parseOpenAPI(endpoint string, doc []byte) (*apiModel, error) {
	var d openAPIDocument
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("decode OpenAPI document: %w", err)
	}
	if len(d.Components.Schemas) == 0 || len(d.Tags) == 0 {
		return nil, fmt.Errorf("the OpenAPI document has no entities")
	}
	m := &apiModel{Endpoint: endpoint, Entities: map[string]*apiEntity{}, Subs: map[string]*apiEntity{}}
	for name, s := range d.Components.Schemas {
		isEntity := false
		props := map[string]openAPIProperty{}
		for _, part := range s.AllOf {
			if part.Ref == "#/components/schemas/Entity" {
				isEntity = true
			}
			for k, v := range part.Properties {
				props[k] = v
			}
		}
		if !isEntity {
			continue
		}
		e := &apiEntity{Name: name}
		for fname, p := range props {
			switch {
			case strings.HasSuffix(p.Ref, "Value"):
				e.Fields = append(e.Fields, apiField{Name: fname, Type: strings.TrimSuffix(refName(p.Ref), "Value")})
			case p.Ref != "":
				e.Linked = append(e.Linked, apiLink{Name: fname, Entity: refName(p.Ref)})
			case p.Type == "array" && p.Items != nil && p.Items.Ref != "":
				e.Details = append(e.Details, apiLink{Name: fname, Entity: refName(p.Items.Ref)})
			}
		}
		sort.Slice(e.Fields, func(i, j int) bool { return e.Fields[i].Name < e.Fields[j].Name })
		sort.Slice(e.Details, func(i, j int) bool { return e.Details[i].Name < e.Details[j].Name })
		sort.Slice(e.Linked, func(i, j int) bool { return e.Linked[i].Name < e.Linked[j].Name })
		m.Subs[name] = e
	}
	for _, t := range d.Tags {
		e := m.Subs[t.Name]
		if e == nil {
			continue
		}
		delete(m.Subs, t.Name)
		if mt := formTag.FindStringSubmatch(t.Description); mt != nil {
			e.Form, e.Screen = mt[1], mt[2]
		}
		m.Entities[t.Name] = e
	}
	if len(m.Entities) == 0 {
		return nil, fmt.Errorf("the OpenAPI document has no top-level entities")
	}
	return m, nil
}

func refName(ref string) string { return strings.TrimPrefix(ref, "#/components/schemas/") }

// model returns the configured endpoint's model: from the cache, or built
// from the OpenAPI document Acumatica serves at
// /entity/{endpoint}/{version}/swagger.json, then cached for every replica.
func (c *client) model(ctx context.Context) (*apiModel, error) {
	if m, ok := c.cachedModel(ctx); ok {
		return m, nil
	}
	raw, err := c.shared(c.modelKey(), func() ([]byte, error) {
		r, err := c.get(ctx, c.entityPath("swagger.json"), nil, "application/json")
		if err != nil {
			return nil, fmt.Errorf("read the OpenAPI document: %w", err)
		}
		if !r.ok() {
			if r.status == 404 {
				return nil, c.missingEndpoint(ctx)
			}
			return nil, c.commonError(parseFailure(r, false), "the endpoint's OpenAPI document")
		}
		m, err := parseOpenAPI(c.set.endpoint(), r.body)
		if err != nil {
			return nil, toolerr.Wrap(toolerr.UpstreamInvalidResponse, err, "Acumatica's OpenAPI document for %s could not be read", c.set.endpoint())
		}
		out, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode the OpenAPI model: %w", err)
		}
		c.store(ctx, c.modelKey(), out, ttlModel)
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	var m apiModel
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decode the OpenAPI model: %w", err)
	}
	return &m, nil
}

// cachedModel returns the model if the cache holds it.
func (c *client) cachedModel(ctx context.Context) (*apiModel, bool) {
	raw, ok := c.cached(ctx, c.modelKey())
	if !ok {
		return nil, false
	}
	var m apiModel
	if json.Unmarshal(raw, &m) != nil || len(m.Entities) == 0 {
		return nil, false
	}
	return &m, true
}

// missingEndpoint explains a 404 for the endpoint itself.
func (c *client) missingEndpoint(ctx context.Context) error {
	ep := c.set.endpoint()
	if offered := c.endpoints(ctx); len(offered) > 0 {
		return toolerr.New(toolerr.NotFound,
			"this Acumatica instance has no endpoint %s (HTTP 404); it offers %s. The site's endpoint_name and endpoint_version settings must name one of them; ask the operator",
			ep, strings.Join(offered, ", "))
	}
	return toolerr.New(toolerr.NotFound, "this Acumatica instance answered 404 for endpoint %s; check the site's endpoint_name and endpoint_version settings", ep)
}

// keysOf returns an entity's key fields in URL order, when known: the
// Default endpoint's catalogue, for an entity whose key fields exist in
// this endpoint's schema.
func keysOf(e *apiEntity) []string {
	info, ok := defaultEntities[e.Name]
	if !ok || len(info.Keys) == 0 {
		return nil
	}
	for _, k := range info.Keys {
		found := false
		for _, f := range e.Fields {
			if f.Name == k {
				found = true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return info.Keys
}
