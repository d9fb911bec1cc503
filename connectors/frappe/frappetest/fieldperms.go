package frappetest

import "slices"

// Field-level permissions and site schemas that lack fields: the two ways a
// list query meets a field it may not have.
//
//   - A field with permlevel > 0 is readable only by roles granted that
//     level. reportview.validate_fields removes such a field from the
//     fields list without a word (data.fields.remove(field)), so the rows
//     simply lack its key, and an aggregate over it ("sum(f) as x") lacks
//     its alias; get_permitted_fields leaves it out of fields=["*"].
//   - A field the site's DocType does not have (an older release, or a
//     customised site that removed it) is refused with 417 DataError
//     "Field not permitted in query: <field>", in fields and filters alike.

// fieldPermLevels are the fields above permlevel 0, by DocType.
var fieldPermLevels = map[string]map[string]int{
	"Sales Invoice": {"base_grand_total": 1, "base_net_total": 1},
	"Customer":      {"default_currency": 1},
}

// permLevelRoles are the roles granted read on a DocType's higher levels.
var permLevelRoles = map[string]map[int][]string{
	"Sales Invoice": {1: {"Accounts Manager"}},
	"Customer":      {1: {"Accounts Manager"}},
}

// fieldReadable reports whether u may read field of doctype
// (meta.get_permlevel_access).
func fieldReadable(u *User, doctype, field string) bool {
	level := fieldPermLevels[doctype][field]
	if level == 0 {
		return true
	}
	return u != nil && u.hasRole(permLevelRoles[doctype][level])
}

// dropHighPermlevel is the permlevel step of reportview.validate_fields:
// it removes the entries whose first column is a field above the user's
// levels. Columns of other tables are judged by their own DocType.
func dropHighPermlevel(u *User, reg *registry, doctype string, fields []string) []string {
	out := fields[:0:0]
	for _, f := range fields {
		ref, ok, _ := extractFieldname(f)
		if ok && !isStandardField(ref.field) {
			dt := doctype
			if ref.qual != "" {
				if main := reg.get(doctype); main != nil {
					if pf := main.Field(ref.qual); pf != nil && (pf.IsTable() || pf.Type == "Link") {
						dt = pf.Options
					} else if len(ref.qual) > 3 && ref.qual[:3] == "tab" {
						dt = ref.qual[3:]
					}
				}
			}
			if !fieldReadable(u, dt, ref.field) {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// stripHighPermlevel is Document.apply_fieldlevel_read_permissions on a
// document read with GET: the fields above the user's levels are removed.
func stripHighPermlevel(u *User, doctype string, o *object) *object {
	if len(fieldPermLevels[doctype]) == 0 {
		return o
	}
	out := newObject(len(o.keys))
	for i, k := range o.keys {
		if fieldReadable(u, doctype, k) {
			out.set(k, o.vals[i])
		}
	}
	return out
}

// withoutFields returns reg with the named fields taken out of their
// DocTypes, as a site whose schema lacks them sees itself. Unchanged
// DocTypes are shared with reg.
func withoutFields(reg *registry, missing map[string][]string) *registry {
	if len(missing) == 0 {
		return reg
	}
	out := &registry{metas: make(map[string]*DocMeta, len(reg.metas))}
	for name, m := range reg.metas {
		drop := missing[name]
		if len(drop) == 0 {
			out.metas[name] = m
			continue
		}
		c := &DocMeta{Name: m.Name, IsTable: m.IsTable, Submittable: m.Submittable, IsTree: m.IsTree, byName: map[string]*Field{}}
		for _, f := range m.Fields {
			if slices.Contains(drop, f.Name) {
				continue
			}
			c.Fields = append(c.Fields, f)
			c.byName[f.Name] = f
		}
		c.derive()
		out.metas[name] = c
	}
	return out
}
