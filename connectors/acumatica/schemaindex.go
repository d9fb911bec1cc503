package acumatica

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/erpgate/erpgate/platform/connector"
	"github.com/erpgate/erpgate/platform/connector/inmemory"
	"github.com/erpgate/erpgate/platform/connector/toolerr"
)

// The schema-knowledge index: one searchable document per entity, per
// entity field, per inquiry and per inquiry column, built per site from
// the endpoint's OpenAPI document and the tenant's GI $metadata, stored in
// the platform's shared index (Postgres full-text search) and rebuilt when
// it expires or the site's endpoint or tenant changes.

// Index document kinds.
const (
	docEntity        = "entity"
	docField         = "field"
	docInquiry       = "inquiry"
	docInquiryColumn = "inquiry_column"
)

var docKinds = []string{docEntity, docField, docInquiry, docInquiryColumn}

// entityDoc is the data of an entity document.
type entityDoc struct {
	Entity  string     `json:"entity"`
	Form    string     `json:"form,omitempty"`
	Screen  string     `json:"screen,omitempty"`
	Module  string     `json:"module,omitempty"`
	Keys    []string   `json:"keys"`
	Fields  []fieldDoc `json:"fields"`
	Details []apiLink  `json:"details"`
	Linked  []apiLink  `json:"linked"`
}

// fieldDoc is the data of a field document.
type fieldDoc struct {
	Entity string `json:"entity,omitempty"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Label  string `json:"label,omitempty"`
}

// indexState is a usable index and what it was built from.
type indexState struct {
	index connector.SchemaIndex
	// warnings say what the index lacks (no inquiries when the tenant is
	// unset or their metadata could not be read).
	warnings []string
}

// indexVersion identifies what an index describes; a different endpoint
// or tenant setting forces a rebuild.
func (c *client) indexVersion() string { return c.set.endpoint() + "|" + c.set.Tenant }

// schemaIndex returns the site's index, building it when it is missing,
// expired or describes other settings. Without a shared index (a
// deployment without storage) it builds one in memory for this call.
func (c *client) schemaIndex(ctx context.Context) (indexState, error) {
	idx := c.call.Index
	if idx != nil {
		st, err := idx.Status(ctx)
		if err == nil && st.Built && st.Version == c.indexVersion() {
			return indexState{index: idx}, nil
		}
	} else {
		idx = inmemory.NewSiteStorage(nil).SchemaIndex(c.site.ID)
	}
	build := func() (any, error) {
		docs, warnings, err := c.buildIndexDocs(ctx)
		if err != nil {
			return nil, err
		}
		if err := idx.Replace(ctx, c.indexVersion(), docs, ttlIndex); err != nil {
			return nil, fmt.Errorf("store the schema index: %w", err)
		}
		return warnings, nil
	}
	var v any
	var err error
	if c.call.Index != nil {
		// Concurrent calls on one replica build the shared index once.
		v, err, _ = c.conn.fetches.Do(c.site.ID.String()+"\x00index/"+c.indexVersion(), build)
	} else {
		v, err = build()
	}
	if err != nil {
		return indexState{}, err
	}
	return indexState{index: idx, warnings: v.([]string)}, nil
}

// buildIndexDocs reads both documents and turns them into index documents.
func (c *client) buildIndexDocs(ctx context.Context) ([]connector.IndexDocument, []string, error) {
	m, err := c.model(ctx)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	var gm *giModel
	if c.set.Tenant == "" {
		warnings = append(warnings, "generic inquiries are not indexed: the site has no tenant setting")
	} else if gm, err = c.inquiries(ctx); err != nil {
		warnings = append(warnings, "generic inquiries are not indexed: their OData metadata could not be read ("+errorText(err)+")")
		gm = nil
	}
	if indexSize(m, gm) > maxIndexBytes {
		return nil, nil, toolerr.New(toolerr.UpstreamInvalidResponse,
			"Acumatica's metadata would make a schema index of more than %d MiB, far more than any endpoint's: erpgate does not build it", maxIndexBytes>>20)
	}
	docs := entityDocs(m)
	if gm != nil {
		docs = append(docs, inquiryDocs(gm)...)
	}
	return docs, warnings, nil
}

// maxIndexBytes bounds a site's schema index. Each field's document names
// its entity several times, so an endpoint's metadata of a few long names
// and many fields (within the response bound) would make terabytes of
// documents; Default 24.200.001 and its inquiries make well under 2 MiB.
const maxIndexBytes = 32 << 20

// indexSize is about the size of the documents entityDocs and inquiryDocs
// make of m and gm (gm may be nil), at least their size in most cases; it
// builds none of them.
func indexSize(m *apiModel, gm *giModel) int {
	const doc = 160 // a document's members and words beyond its names
	n := 0
	for _, e := range m.Entities {
		n += doc + 8*len(e.Name) + 3*len(e.Form) + 2*len(e.Screen)
		for _, f := range e.Fields {
			label := len(defaultFieldLabels[e.Name+"."+f.Name])
			n += doc + 6*len(e.Name) + 8*len(f.Name) + 3*len(f.Type) + 4*label + len(e.Form)
		}
		for _, links := range [][]apiLink{e.Details, e.Linked} {
			for _, l := range links {
				n += 16 + 4*len(l.Name) + 2*len(l.Entity)
			}
		}
	}
	if gm != nil {
		for i := range gm.Inquiries {
			q := &gm.Inquiries[i]
			n += doc + 8*len(q.Name) + 6*len(q.Type)
			for _, k := range q.Keys {
				n += 4 + 2*len(k)
			}
			for _, cols := range [][]giColumn{q.Columns, q.Parameters} {
				for _, col := range cols {
					n += 2*doc + 4*len(q.Name) + 2*len(q.Type) + 10*len(col.Name) + 3*len(col.Type)
				}
			}
		}
	}
	return n
}

// errorText is an error's model-safe message.
func errorText(err error) string {
	if te := asToolErr(err); te != nil {
		return te.Message
	}
	return "unexpected error"
}

// entityDocs indexes every top-level entity and its scalar fields.
func entityDocs(m *apiModel) []connector.IndexDocument {
	var docs []connector.IndexDocument
	for _, name := range m.names() {
		e := m.Entities[name]
		module := moduleOfScreen(e.Screen)
		ed := entityDoc{Entity: e.Name, Form: e.Form, Screen: e.Screen, Module: module, Keys: keysOf(e),
			Details: e.Details, Linked: e.Linked}
		if ed.Keys == nil {
			ed.Keys = []string{}
		}
		var fieldWords []string
		for _, f := range e.Fields {
			label := defaultFieldLabels[e.Name+"."+f.Name]
			fd := fieldDoc{Entity: e.Name, Name: f.Name, Type: f.Type, Label: label}
			ed.Fields = append(ed.Fields, fieldDoc{Name: f.Name, Type: f.Type, Label: label})
			fieldWords = append(fieldWords, f.Name, label)
			data, _ := json.Marshal(fd)
			docs = append(docs, connector.IndexDocument{
				Kind:     docField,
				Name:     e.Name + "." + f.Name,
				Title:    orDefault(label, words(f.Name)),
				Keywords: f.Name + " " + words(f.Name) + " " + label,
				Body:     fmt.Sprintf("%s field of %s %s %s %s", f.Type, e.Name, words(e.Name), e.Form, module),
				Data:     data,
			})
		}
		var linkWords []string
		for _, l := range append(append([]apiLink{}, e.Details...), e.Linked...) {
			linkWords = append(linkWords, l.Name, words(l.Name))
		}
		data, _ := json.Marshal(ed)
		title := e.Form
		if e.Screen != "" {
			title = strings.TrimSpace(e.Form + " (" + e.Screen + ")")
		}
		docs = append(docs, connector.IndexDocument{
			Kind:     docEntity,
			Name:     e.Name,
			Title:    orDefault(title, words(e.Name)),
			Keywords: e.Name + " " + words(e.Name) + " " + e.Form + " " + e.Screen,
			Body:     module + " " + strings.Join(fieldWords, " ") + " " + strings.Join(linkWords, " "),
			Data:     data,
		})
	}
	return docs
}

// inquiryDocs indexes every exposed inquiry and its columns.
func inquiryDocs(m *giModel) []connector.IndexDocument {
	var docs []connector.IndexDocument
	for i := range m.Inquiries {
		q := &m.Inquiries[i]
		data, _ := json.Marshal(describeInquiry(q))
		var cols []string
		for _, col := range q.Columns {
			cols = append(cols, col.Name, words(col.Name))
			cd, _ := json.Marshal(map[string]any{"inquiry": q.Name, "name": col.Name, "type": col.Type})
			docs = append(docs, connector.IndexDocument{
				Kind:     docInquiryColumn,
				Name:     q.Name + "." + col.Name,
				Title:    words(col.Name),
				Keywords: col.Name + " " + words(col.Name),
				Body:     col.Type + " column of inquiry " + q.Name + " " + words(q.Type),
				Data:     cd,
			})
		}
		docs = append(docs, connector.IndexDocument{
			Kind:     docInquiry,
			Name:     q.Name,
			Title:    q.Name,
			Keywords: q.Name + " " + q.Type + " " + words(q.Type) + " generic inquiry",
			Body:     strings.Join(cols, " ") + " " + strings.Join(columnNames(q.Parameters), " "),
			Data:     data,
		})
	}
	return docs
}

// words splits an identifier into words: "CustomerName" → "Customer Name".
func words(id string) string { return strings.Join(connector.SplitIdentifier(id), " ") }

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// moduleOfScreen names the Acumatica module a screen id belongs to.
func moduleOfScreen(screen string) string {
	if len(screen) < 2 {
		return ""
	}
	switch screen[:2] {
	case "GL", "CM", "CA", "TX":
		return moduleFinance
	case "AR":
		return moduleReceivables
	case "AP":
		return modulePayables
	case "SO":
		return moduleSales
	case "PO":
		return modulePurchasing
	case "IN":
		return moduleInventory
	case "CR":
		return moduleCRM
	case "PM", "CT":
		return moduleProjects
	case "EP":
		return moduleTimeExpenses
	case "CS", "SM":
		return moduleOrganisation
	case "PR":
		return "payroll"
	case "FS":
		return "field services"
	case "BC":
		return "commerce"
	case "SC":
		return "subcontracts"
	}
	return ""
}
