package frappetest

// getResource is GET /api/resource/<doctype>/<name> (read_doc): 404 for a
// missing DocType or document (before any permission check), 403 when the
// user lacks role permission or a User Permission hides the document.
func (rc *reqCtx) getResource(doctype, name string) *apiError {
	d, err := rc.loadDoc(doctype, name)
	if err != nil {
		return err
	}
	return rc.respond("data", stripHighPermlevel(rc.user, doctype, docAsDict(rc.s.reg, d, true)))
}

// loadDoc is frappe.get_doc + has_permission("read").
func (rc *reqCtx) loadDoc(doctype, name string) (*Doc, *apiError) {
	meta := rc.s.reg.get(doctype)
	if meta == nil || rc.s.missing(doctype) {
		return nil, doctypeNotFound(doctype)
	}
	var d *Doc
	if meta.IsTable {
		for _, c := range rc.s.dataset().List(doctype) {
			if collateCompare(c.Name, name) == 0 {
				d = c
			}
		}
	} else {
		d = rc.s.dataset().Get(doctype, name)
	}
	if d == nil {
		return nil, notFound(doctype + " " + name + " not found")
	}
	if meta.IsTable {
		return nil, bareError("PermissionError")
	}
	if !canRead(rc.user, doctype) {
		return nil, docPermissionError(userName(rc.user), doctype, d.Name, false)
	}
	if !docAllowed(rc.user, rc.s.reg, d) {
		return nil, docPermissionError(userName(rc.user), doctype, d.Name, true)
	}
	return d, nil
}

// docAsDict is Document.as_dict(no_nulls): standard columns, data fields in
// field order, (child) parent columns, "doctype", then every table field.
func docAsDict(reg *registry, d *Doc, noNulls bool) *object {
	m := reg.get(d.DocType)
	o := newObject(len(m.Fields) + 12)
	put := func(k string, v any) {
		if v == nil && noNulls {
			return
		}
		o.set(k, v)
	}
	for _, f := range standardFields {
		put(f, d.Get(f))
	}
	for _, f := range m.DataFields() {
		put(f.Name, d.Get(f.Name))
	}
	if m.IsTable {
		for _, f := range childTableFields {
			put(f, d.Get(f))
		}
	}
	o.set("doctype", d.DocType)
	for _, tf := range m.TableFields() {
		rows := d.Children[tf.Name]
		list := make([]*object, len(rows))
		for i, c := range rows {
			list[i] = docAsDict(reg, c, noNulls)
		}
		o.set(tf.Name, list)
	}
	return o
}
