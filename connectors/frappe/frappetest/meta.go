package frappetest

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
)

// Field describes one data field of a DocType, as in the doctype JSON.
type Field struct {
	Name     string // fieldname
	Type     string // Frappe fieldtype, e.g. "Currency", "Link", "Table"
	Options  string // Link/Table target doctype, Select options, currency field...
	Default  string // static default ("" when none)
	Required bool
}

// IsTable reports whether the field is a child-table field.
func (f *Field) IsTable() bool { return f.Type == "Table" || f.Type == "Table MultiSelect" }

// IsNumeric reports whether the column is stored as a NOT NULL number
// (Check, Int, Float, Currency, Percent, Duration), defaulting to 0.
func (f *Field) IsNumeric() bool { return isNumericType(f.Type) }

// IsDecimal reports whether the column is a decimal(21,9) column serialised
// as a JSON float.
func (f *Field) IsDecimal() bool {
	return f.Type == "Float" || f.Type == "Currency" || f.Type == "Percent"
}

func isNumericType(t string) bool {
	switch t {
	case "Check", "Int", "Float", "Currency", "Percent", "Duration":
		return true
	}
	return false
}

// noValueTypes are field types without a database column.
var noValueTypes = map[string]bool{
	"Section Break": true, "Column Break": true, "Tab Break": true, "HTML": true,
	"Table": true, "Table MultiSelect": true, "Button": true, "Image": true,
	"Fold": true, "Heading": true,
}

// DocMeta is the simulator's view of a DocType definition.
type DocMeta struct {
	Name        string
	IsTable     bool // child doctype (istable)
	Submittable bool
	IsTree      bool
	Fields      []*Field // in field_order
	byName      map[string]*Field

	// Derived once when the registry is built (read-only afterwards).
	dataFields, tableFields, companyLinks []*Field
	// template holds the insert-time value of every field with a static
	// default; documents read it for columns they do not set.
	template map[string]any
	// sizeHint is the largest number of fields set on a generated document
	// so far, used to size new documents' maps (generation speed only).
	sizeHint atomic.Int32
}

// noteSize records how many fields a generated document ended up with.
func (m *DocMeta) noteSize(n int) {
	if int32(n) > m.sizeHint.Load() {
		m.sizeHint.Store(int32(n))
	}
}

// Field returns the named field or nil. Standard columns are not fields.
func (m *DocMeta) Field(name string) *Field { return m.byName[name] }

// DataFields returns the fields that have a database column, in order.
// The slice is shared: do not modify it.
func (m *DocMeta) DataFields() []*Field { return m.dataFields }

// TableFields returns the child-table fields in order (shared slice).
func (m *DocMeta) TableFields() []*Field { return m.tableFields }

// CompanyLinks returns the Link fields pointing at Company (used by User
// Permissions on Company); the slice is shared.
func (m *DocMeta) CompanyLinks() []*Field { return m.companyLinks }

// derive computes the cached field lists and the insert template.
func (m *DocMeta) derive() {
	m.dataFields, m.tableFields, m.companyLinks = nil, nil, nil
	m.template = map[string]any{}
	for _, f := range m.Fields {
		if f.IsTable() {
			m.tableFields = append(m.tableFields, f)
		}
		if f.Type == "Link" && f.Options == "Company" && !ignoresUserPermissions[m.Name+"."+f.Name] {
			m.companyLinks = append(m.companyLinks, f)
		}
		if noValueTypes[f.Type] {
			continue
		}
		m.dataFields = append(m.dataFields, f)
		if v := staticDefault(f); v != nil {
			m.template[f.Name] = v
		}
	}
}

// standardFields are the columns every table has (frappe default_fields).
var standardFields = []string{"name", "owner", "creation", "modified", "modified_by", "docstatus", "idx"}

// childTableFields are the extra standard columns of child tables.
var childTableFields = []string{"parent", "parentfield", "parenttype"}

// optionalFields are the optional meta columns returned by fields=["*"].
var optionalFields = []string{"_user_tags", "_comments", "_assign", "_liked_by"}

// isStandardField mirrors frappe.desk.reportview.is_standard.
func isStandardField(f string) bool {
	switch f {
	case "name", "owner", "creation", "modified", "modified_by", "docstatus", "idx",
		"parent", "parentfield", "parenttype", "_user_tags", "_comments", "_assign", "_liked_by", "_seen":
		return true
	}
	return false
}

// standardType gives the column type of a standard field.
func standardType(f string) string {
	switch f {
	case "creation", "modified":
		return "Datetime"
	case "docstatus", "idx":
		return "Int"
	}
	return "Data"
}

// columnType returns the type of column f on this doctype and whether the
// column exists in the table.
func (m *DocMeta) columnType(f string) (string, bool) {
	if fd := m.byName[f]; fd != nil {
		if noValueTypes[fd.Type] {
			return fd.Type, false
		}
		return fd.Type, true
	}
	switch f {
	case "name", "owner", "creation", "modified", "modified_by", "docstatus", "idx":
		return standardType(f), true
	case "parent", "parentfield", "parenttype":
		return "Data", m.IsTable
	case "_user_tags", "_comments", "_assign", "_liked_by":
		return "Text", !m.IsTable
	}
	return "", false
}

// registry holds the DocType metadata known to the simulator.
type registry struct {
	metas map[string]*DocMeta
}

func (r *registry) get(name string) *DocMeta { return r.metas[name] }

func (r *registry) names() []string {
	out := make([]string, 0, len(r.metas))
	for n := range r.metas {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// catalogEntry is one doctype in compact catalogue notation.
type catalogEntry struct {
	name   string
	attrs  string
	fields string
}

// newRegistry parses the built-in catalogues, then appends the fields
// later v15 releases added to catalogued doctypes (fieldAdditions).
func newRegistry() *registry {
	r := &registry{metas: map[string]*DocMeta{}}
	for _, cat := range [][]catalogEntry{erpnextCatalog, extraCatalog, ledgerCatalog, buyingCatalog} {
		for _, e := range cat {
			m := parseCatalogEntry(e)
			r.metas[m.Name] = m
		}
	}
	for dt, specs := range fieldAdditions {
		m := r.metas[dt]
		for _, spec := range strings.Split(specs, ", ") {
			f := parseFieldSpec(spec)
			if m == nil || f == nil || m.byName[f.Name] != nil {
				panic("frappetest: bad field addition " + dt + " " + spec)
			}
			m.Fields = append(m.Fields, f)
			m.byName[f.Name] = f
		}
	}
	for _, m := range r.metas {
		m.derive()
	}
	return r
}

func parseCatalogEntry(e catalogEntry) *DocMeta {
	m := &DocMeta{Name: e.name, byName: map[string]*Field{}}
	for _, a := range strings.Fields(e.attrs) {
		switch a {
		case "is_submittable=1":
			m.Submittable = true
		case "istable=1":
			m.IsTable = true
		case "is_tree=1":
			m.IsTree = true
		}
	}
	for _, spec := range strings.Split(e.fields, ", ") {
		f := parseFieldSpec(strings.TrimSpace(spec))
		if f == nil {
			panic(fmt.Sprintf("frappetest: bad field spec %q in %s", spec, e.name))
		}
		m.Fields = append(m.Fields, f)
		m.byName[f.Name] = f
	}
	return m
}

// parseFieldSpec parses "fieldname:Fieldtype(options)*(unique)=default".
func parseFieldSpec(s string) *Field {
	name, rest, ok := strings.Cut(s, ":")
	if !ok || name == "" {
		return nil
	}
	f := &Field{Name: name}
	// type runs until '(' '*' '=' or end
	end := strings.IndexAny(rest, "(*=")
	if end < 0 {
		f.Type = rest
		return f
	}
	f.Type = rest[:end]
	rest = rest[end:]
	if strings.HasPrefix(rest, "(") {
		close := strings.Index(rest, ")")
		f.Options = rest[1:close]
		rest = rest[close+1:]
	}
	if strings.HasPrefix(rest, "*") {
		f.Required = true
		rest = rest[1:]
	}
	if strings.HasPrefix(rest, "(unique)") {
		rest = rest[len("(unique)"):]
	}
	if strings.HasPrefix(rest, "=") {
		f.Default = rest[1:]
	}
	return f
}
