package acumatica

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"sort"
	"strings"

	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// giModel is what the tenant's GI OData $metadata says: every inquiry
// exposed through OData, with its columns, key fields and parameters.
type giModel struct {
	Tenant    string      `json:"tenant"`
	Inquiries []giInquiry `json:"inquiries"`
}

// giInquiry is one exposed generic inquiry.
type giInquiry struct {
	// Name is the entity-set name: the inquiry's title, spaces allowed.
	Name string `json:"name"`
	// Type is the EDM entity type ("BILeadConversion").
	Type string `json:"type"`
	// Keys are the key fields of the inquiry's source tables.
	Keys    []string   `json:"keys,omitempty"`
	Columns []giColumn `json:"columns"`
	// Parameters, when present, are passed through Function.
	Parameters []giColumn `json:"parameters,omitempty"`
	// Function is the function import that takes the parameters
	// ("DBStorageDetails_WithParameters").
	Function string `json:"function,omitempty"`
}

// giColumn is a column or parameter and its EDM type.
type giColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func (m *giModel) inquiry(name string) *giInquiry {
	for i := range m.Inquiries {
		if m.Inquiries[i].Name == name {
			return &m.Inquiries[i]
		}
	}
	for i := range m.Inquiries {
		if strings.EqualFold(m.Inquiries[i].Name, name) || strings.EqualFold(m.Inquiries[i].Type, name) {
			return &m.Inquiries[i]
		}
	}
	return nil
}

func (q *giInquiry) columnNames() []string {
	out := make([]string, len(q.Columns))
	for i, c := range q.Columns {
		out[i] = c.Name
	}
	return out
}

func (q *giInquiry) column(name string) *giColumn {
	for i := range q.Columns {
		if q.Columns[i].Name == name {
			return &q.Columns[i]
		}
	}
	return nil
}

// edmx is the part of an EDMX 4.0 document the model needs.
type edmx struct {
	Schemas []struct {
		Namespace   string `xml:"Namespace,attr"`
		EntityTypes []struct {
			Name string `xml:"Name,attr"`
			Key  []struct {
				Name string `xml:"Name,attr"`
			} `xml:"Key>PropertyRef"`
			Properties []struct {
				Name string `xml:"Name,attr"`
				Type string `xml:"Type,attr"`
			} `xml:"Property"`
		} `xml:"EntityType"`
		Functions []struct {
			Name       string `xml:"Name,attr"`
			Parameters []struct {
				Name string `xml:"Name,attr"`
				Type string `xml:"Type,attr"`
			} `xml:"Parameter"`
		} `xml:"Function"`
		Containers []struct {
			EntitySets []struct {
				Name       string `xml:"Name,attr"`
				EntityType string `xml:"EntityType,attr"`
			} `xml:"EntitySet"`
			FunctionImports []struct {
				Name      string `xml:"Name,attr"`
				Function  string `xml:"Function,attr"`
				EntitySet string `xml:"EntitySet,attr"`
			} `xml:"FunctionImport"`
		} `xml:"EntityContainer"`
	} `xml:"DataServices>Schema"`
}

// parseGIMetadata reads $metadata into the model.
func parseGIMetadata(tenant string, doc []byte) (*giModel, error) {
	var d edmx
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = false
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("decode $metadata: %w", err)
	}
	if len(d.Schemas) == 0 {
		return nil, fmt.Errorf("$metadata has no schema")
	}
	type typeInfo struct {
		keys    []string
		columns []giColumn
	}
	types := map[string]typeInfo{}
	params := map[string][]giColumn{}
	for _, s := range d.Schemas {
		for _, et := range s.EntityTypes {
			var ti typeInfo
			for _, k := range et.Key {
				ti.keys = append(ti.keys, k.Name)
			}
			for _, p := range et.Properties {
				ti.columns = append(ti.columns, giColumn{Name: p.Name, Type: p.Type})
			}
			types[s.Namespace+"."+et.Name] = ti
			types[et.Name] = ti
		}
		for _, f := range s.Functions {
			var ps []giColumn
			for _, p := range f.Parameters {
				ps = append(ps, giColumn{Name: p.Name, Type: p.Type})
			}
			params[s.Namespace+"."+f.Name] = ps
			params[f.Name] = ps
		}
	}
	m := &giModel{Tenant: tenant}
	byName := map[string]int{}
	for _, s := range d.Schemas {
		for _, c := range s.Containers {
			for _, es := range c.EntitySets {
				ti := types[es.EntityType]
				typ := es.EntityType
				if i := strings.LastIndexByte(typ, '.'); i >= 0 {
					typ = typ[i+1:]
				}
				byName[es.Name] = len(m.Inquiries)
				m.Inquiries = append(m.Inquiries, giInquiry{Name: es.Name, Type: typ, Keys: ti.keys, Columns: ti.columns})
			}
		}
		for _, c := range s.Containers {
			for _, fi := range c.FunctionImports {
				i, ok := byName[fi.EntitySet]
				if !ok {
					continue
				}
				m.Inquiries[i].Function = fi.Name
				m.Inquiries[i].Parameters = params[fi.Function]
			}
		}
	}
	// Sets may share a type, and functions a parameter list: the model
	// holds them once, but its JSON (the cache's) once per inquiry.
	size := 0
	for i := range m.Inquiries {
		q := &m.Inquiries[i]
		size += 64 + len(q.Name) + len(q.Type) + len(q.Function)
		for _, k := range q.Keys {
			size += 4 + len(k)
		}
		for _, cols := range [][]giColumn{q.Columns, q.Parameters} {
			for _, c := range cols {
				size += 24 + len(c.Name) + len(c.Type)
			}
		}
		if size > maxGIModelBytes {
			return nil, fmt.Errorf("$metadata describes more than %d MiB of inquiries, far more than any tenant has", maxGIModelBytes>>20)
		}
	}
	sort.Slice(m.Inquiries, func(i, j int) bool { return m.Inquiries[i].Name < m.Inquiries[j].Name })
	return m, nil
}

// maxGIModelBytes bounds the encoded model of a tenant's inquiries: a few
// hundred inquiries of some fifty columns make about a megabyte.
const maxGIModelBytes = 16 << 20

// inquiries returns the tenant's GI model: cached, or read from
// /t/{tenant}/api/odata/gi/$metadata and cached for every replica. The
// metadata lists every exposed inquiry whoever asks, so it is shared by
// the site's users.
func (c *client) inquiries(ctx context.Context) (*giModel, error) {
	if err := c.needTenant(); err != nil {
		return nil, err
	}
	if raw, ok := c.cached(ctx, c.inquiriesKey()); ok {
		var m giModel
		if json.Unmarshal(raw, &m) == nil {
			return &m, nil
		}
	}
	raw, err := c.shared(c.inquiriesKey(), func() ([]byte, error) {
		r, err := c.get(ctx, c.giPath("/$metadata"), nil, "application/xml")
		if err != nil {
			return nil, fmt.Errorf("read GI $metadata: %w", err)
		}
		if !r.ok() {
			if r.status == 404 {
				return nil, c.missingTenant()
			}
			return nil, c.commonError(parseFailure(r, false), "the generic inquiries' OData metadata")
		}
		if r.empty() {
			return nil, invalidResponse("Acumatica answered $metadata with an empty body")
		}
		m, err := parseGIMetadata(c.set.Tenant, r.body)
		if err != nil {
			return nil, toolerr.Wrap(toolerr.UpstreamInvalidResponse, err, "Acumatica's OData $metadata for the generic inquiries could not be read")
		}
		out, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode the GI model: %w", err)
		}
		c.store(ctx, c.inquiriesKey(), out, ttlInquiries)
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	var m giModel
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decode the GI model: %w", err)
	}
	return &m, nil
}

// needTenant fails when the site has no tenant, which every OData URL
// needs.
func (c *client) needTenant() error {
	if c.set.Tenant == "" {
		return toolerr.New(toolerr.InvalidArgument,
			"this site has no tenant setting, and Acumatica's OData URL for generic inquiries (/t/{tenant}/api/odata/gi) needs the tenant's login name; ask the operator to set the site's tenant")
	}
	return nil
}

func (c *client) missingTenant() error {
	return toolerr.New(toolerr.NotFound,
		"Acumatica has no generic-inquiry OData service for tenant %q (HTTP 404): the site's tenant setting must be the tenant's login name, and the instance must be 2024 R2 or later", c.set.Tenant)
}
