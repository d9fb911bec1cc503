package acumaticatest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// references lists fields whose value must name an existing record; a
// PUT naming a missing one fails with 422 and the field's error.
var references = map[string]struct{ entity, label string }{
	"Invoice.Customer": {"Customer", "Customer"}, "SalesOrder.CustomerID": {"Customer", "Customer"},
	"SalesInvoice.CustomerID": {"Customer", "Customer"}, "Payment.CustomerID": {"Customer", "Customer"},
	"Shipment.CustomerID": {"Customer", "Customer"}, "CustomerLocation.Customer": {"Customer", "Customer"},
	"Project.Customer": {"Customer", "Customer"}, "Bill.Vendor": {"Vendor", "Vendor"}, "Check.Vendor": {"Vendor", "Vendor"},
	"PurchaseOrder.VendorID": {"Vendor", "Vendor"}, "PurchaseReceipt.VendorID": {"Vendor", "Vendor"},
	"Customer.CustomerClass": {"CustomerClass", "Customer Class"}, "Vendor.VendorClass": {"VendorClass", "Vendor Class"},
	"StockItem.ItemClass": {"ItemClass", "Item Class"},
}

// autoNumbered keys are assigned by numbering sequences on insert.
var autoNumbered = map[string]bool{"ReferenceNbr": true, "OrderNbr": true, "ReceiptNbr": true, "BatchNbr": true,
	"ShipmentNbr": true, "RefNbr": true, "ReceiptID": true, "CaseID": true, "OpportunityID": true,
	"ContactID": true, "LeadID": true, "TimeEntryID": true, "NoteID": true}

// defaultKeyValues are the document types a new document gets when the
// request leaves them out.
var defaultKeyValues = map[string]string{"Invoice.Type": "Invoice", "SalesOrder.OrderType": "SO", "Bill.Type": "Bill",
	"Payment.Type": "Payment", "Check.Type": "Payment", "PurchaseOrder.Type": "Normal", "PurchaseReceipt.Type": "Receipt",
	"SalesInvoice.Type": "Invoice", "JournalTransaction.Module": "GL"}

// dacNames are the record names in "Inserting 'X' record raised…" texts.
var dacNames = map[string]string{"Bill": "AP Transactions", "Invoice": "AR Transactions", "SalesOrder": "SO Order",
	"Customer": "Customer", "Vendor": "Vendor", "StockItem": "Stock Item", "PurchaseOrder": "PO Order"}

type fieldErrors map[string]string

// putEntity creates or updates a record (PUT), or updates one (PATCH).
// viewOnly is a PUT by a role with View Only rights on the form: an
// update is answered 200 with the record as it is and saves nothing (a
// PUT's 200 does not prove the values saved, api-facts.md §2.3); an
// insert is the form's 403.
func (s *Simulator) putEntity(w http.ResponseWriter, r *http.Request, rn *renderer, es *entitySchema, patch, viewOnly bool) {
	opts, ok := parseQuery(w, r, rn.ep, es)
	if !ok {
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if len(bytes.TrimSpace(raw)) == 0 {
		writeJSON(w, http.StatusBadRequest, `{"message":"The request is invalid.","modelState":{"":["The request body should not be empty."]}}`)
		return
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		writeJSON(w, http.StatusBadRequest, `{"message":"The request is invalid.","modelState":{"entity":[`+jsonString(err.Error())+`]}}`)
		return
	}

	s.data.mu.Lock()
	defer s.data.mu.Unlock()
	t := s.data.table(es.Name)
	existing := s.locate(t, es, body, r.URL.Query().Get("$filter"), rn.ep)
	switch {
	case patch && r.Header.Get("If-None-Match") == "*":
		writeJSON(w, http.StatusPreconditionFailed, httpError("The PATCH method cannot be used for insertion of a record, but a header of the request specifies that the record has to be inserted."))
		return
	case patch && existing == nil:
		writeJSON(w, http.StatusNotFound, httpError("The specified record cannot be found in the system."))
		return
	case existing != nil && r.Header.Get("If-None-Match") == "*":
		writeJSON(w, http.StatusPreconditionFailed, httpError("The entity already exists in the database and cannot be inserted."))
		return
	case existing == nil && r.Header.Get("If-Match") == "*":
		writeJSON(w, http.StatusPreconditionFailed, httpError("There is no entity with these keys in the database."))
		return
	case viewOnly && existing == nil:
		writeForbidden(w, es.Screen)
		return
	case viewOnly:
		var b strings.Builder
		rn.top(&b, existing, 1, opts.expand, opts.sel)
		writeJSON(w, http.StatusOK, b.String())
		return
	}

	now := s.now()
	var rec *Record
	if existing != nil {
		rec = existing.clone()
	} else {
		rec = newRecord(es.Name, guid(fmt.Sprintf("%s/put/%d/%d", es.Name, now.UnixNano(), len(t.rows))))
		if es.field("NoteID") != nil {
			rec.set("NoteID", rec.ID)
		}
		if es.field("CreatedDateTime") != nil {
			rec.set("CreatedDateTime", now)
		}
	}
	errs, lineErrs, bad := s.applyBody(rn.ep, es, rec, body)
	if bad != "" {
		writeJSON(w, http.StatusBadRequest, `{"message":"The request is invalid.","modelState":{"entity":[`+jsonString(bad)+`]}}`)
		return
	}
	s.applyRules(es, rec, body, existing == nil, errs, now)
	for _, f := range []string{"LastModifiedDateTime", "LastModified"} {
		if es.field(f) != nil {
			rec.set(f, now)
		}
	}
	if existing == nil {
		for _, k := range es.Keys {
			if rec.Fields[k] != nil {
				continue
			}
			if v, ok := defaultKeyValues[es.Name+"."+k]; ok {
				rec.set(k, v)
			} else if !autoNumbered[k] {
				errs[k] = fmt.Sprintf("'%s' cannot be empty.", k)
			}
		}
	}
	if len(errs) > 0 || len(lineErrs) > 0 {
		s.write422(w, rn, es, rec, body, errs, lineErrs, existing == nil)
		return
	}
	if existing == nil {
		for _, k := range es.Keys {
			if rec.Fields[k] == nil && autoNumbered[k] {
				rec.set(k, nextNumber(t, k, rec))
			}
		}
		if k := t.keyOf(rec); t.byKey[k] != nil {
			writeJSON(w, http.StatusInternalServerError, exceptionError("Another process has added the record. Your changes will be lost.", "PX.Data.PXLockViolationException", ""))
			return
		}
	} else {
		t.remove(existing)
	}
	t.put(rec)
	t.sort()
	short := map[string]bool{}
	for k := range body {
		short[k] = true
	}
	out := &renderer{ep: rn.ep, base: rn.base, short: short, allShort: existing == nil}
	var b strings.Builder
	out.top(&b, rec, 1, opts.expand, opts.sel)
	writeJSON(w, http.StatusOK, b.String())
}

// locate finds the record a PUT addresses: by "id", by key fields in the
// body, or by $filter.
func (s *Simulator) locate(t *table, es *entitySchema, body map[string]json.RawMessage, filter string, ep *endpointSchema) *Record {
	if t == nil {
		return nil
	}
	if raw, ok := body["id"]; ok {
		var id string
		if json.Unmarshal(raw, &id) == nil && id != "" {
			return t.byID[strings.ToLower(id)]
		}
	}
	if strings.TrimSpace(filter) != "" {
		if pred, err := compileFilter(filter, odataV3, &contractScope{ep: ep, es: es}); err == nil {
			for _, row := range t.rows {
				if pred(row) {
					return row
				}
			}
		}
		return nil
	}
	probe := newRecord(es.Name, "")
	for _, k := range es.Keys {
		v, ok := wrappedValue(body[k])
		if !ok || v == nil {
			return nil
		}
		probe.set(k, keyString(v))
		if n, isNum := v.(json.Number); isNum {
			if f, err := n.Float64(); err == nil {
				probe.set(k, fmt.Sprint(int64(f)))
			}
		}
	}
	return t.byKey[t.keyOf(probe)]
}

// wrappedValue reads {"value": X}; a number is kept as its JSON text
// (json.Number), as Json.NET reads a decimal from the text, not through
// a double.
func wrappedValue(raw json.RawMessage) (any, bool) {
	if raw == nil {
		return nil, false
	}
	var w struct {
		Value any `json:"value"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&w) != nil {
		return nil, false
	}
	return w.Value, true
}

// applyBody copies the request's fields into rec. It returns field
// errors, detail-line errors (collection → line index → field → message)
// and, for a body that cannot be bound at all, a model-state message.
func (s *Simulator) applyBody(ep *endpointSchema, es *entitySchema, rec *Record, body map[string]json.RawMessage) (fieldErrors, map[string]map[int]fieldErrors, string) {
	errs := fieldErrors{}
	lineErrs := map[string]map[int]fieldErrors{}
	for name, raw := range body {
		switch name {
		case "id", "rowNumber", "custom", "_links", "error", "files", "delete":
			continue
		case "note":
			if v, ok := wrappedValue(raw); ok {
				rec.Note, _ = v.(string)
			}
			continue
		}
		f := es.field(name)
		if f == nil {
			continue // the real API ignores properties outside the contract
		}
		switch f.Kind {
		case kindScalar:
			v, ok := wrappedValue(raw)
			if !ok {
				return nil, nil, fmt.Sprintf("Error converting value to type '%s'. Path '%s'.", f.Type, name)
			}
			gv, err := convertValue(f.Type, v)
			if err != nil {
				return nil, nil, fmt.Sprintf("Error converting value to type '%s'. Path '%s.value'.", f.Type, name)
			}
			if d, ok := gv.(Decimal); ok {
				// The column keeps its SQL scale (api-facts.md §2.2).
				if scale := decimalScale(f.Name); scale >= 0 {
					gv = d.Round(scale)
				}
			}
			rec.set(f.Name, gv)
			if ref, ok := references[es.Name+"."+f.Name]; ok && gv != nil {
				if s.data.tables[ref.entity] == nil || s.findLocked(ref.entity, keyString(gv)) == nil {
					errs[f.Name] = fmt.Sprintf("'%s' cannot be found in the system.", ref.label)
				}
			}
		case kindLinked:
			var obj map[string]json.RawMessage
			if json.Unmarshal(raw, &obj) != nil {
				return nil, nil, fmt.Sprintf("Error converting value. Path '%s'.", name)
			}
			sub := ep.schema(f.Ref)
			l := rec.Linked[f.Name]
			if l == nil {
				l = newRecord(f.Ref, guid(rec.ID+"/"+f.Name))
			} else {
				l = l.clone()
			}
			if _, _, bad := s.applyBody(ep, sub, l, obj); bad != "" {
				return nil, nil, bad
			}
			rec.link(f.Name, l)
		case kindDetail:
			var lines []map[string]json.RawMessage
			if json.Unmarshal(raw, &lines) != nil {
				return nil, nil, fmt.Sprintf("Error converting value. Path '%s'.", name)
			}
			sub := ep.schema(f.Ref)
			for i, lb := range lines {
				le, bad := s.applyLine(ep, sub, rec, f.Name, lb)
				if bad != "" {
					return nil, nil, bad
				}
				if len(le) > 0 {
					if lineErrs[f.Name] == nil {
						lineErrs[f.Name] = map[int]fieldErrors{}
					}
					lineErrs[f.Name][i] = le
				}
			}
		}
	}
	return errs, lineErrs, ""
}

// applyLine adds (no id), updates (id) or deletes ("delete": true) a line.
func (s *Simulator) applyLine(ep *endpointSchema, sub *entitySchema, rec *Record, coll string, lb map[string]json.RawMessage) (fieldErrors, string) {
	var id string
	if raw, ok := lb["id"]; ok {
		_ = json.Unmarshal(raw, &id)
	}
	lines := rec.Details[coll]
	idx := -1
	for i, l := range lines {
		if id != "" && strings.EqualFold(l.ID, id) {
			idx = i
		}
	}
	var del bool
	if raw, ok := lb["delete"]; ok {
		_ = json.Unmarshal(raw, &del)
	}
	if del {
		if idx >= 0 {
			rec.Details[coll] = append(lines[:idx:idx], lines[idx+1:]...)
		}
		return nil, ""
	}
	var l *Record
	if idx >= 0 {
		l = lines[idx].clone()
	} else {
		l = newRecord(sub.Name, guid(fmt.Sprintf("%s/%s/new/%d", rec.ID, coll, len(lines)+1)))
	}
	errs, _, bad := s.applyBody(ep, sub, l, lb)
	if bad != "" {
		return nil, bad
	}
	if inv := l.String("InventoryID"); inv != "" && sub.field("InventoryID") != nil &&
		s.findLocked("StockItem", inv) == nil && s.findLocked("NonStockItem", inv) == nil {
		errs["InventoryID"] = "'Inventory ID' cannot be found in the system."
	}
	if idx >= 0 {
		lines = append([]*Record(nil), lines...)
		lines[idx] = l
		rec.Details[coll] = lines
	} else {
		rec.addDetail(coll, l)
	}
	return errs, ""
}

// findLocked looks a single-key record up while s.data.mu is held.
func (s *Simulator) findLocked(entity, key string) *Record {
	t := s.data.tables[entity]
	if t == nil || len(t.keys) != 1 {
		return nil
	}
	return t.byKey[normKey(key)]
}

// convertValue turns a JSON value into the stored Go value of a wrapper.
func convertValue(wrapper string, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch wrapper {
	case tString, tGuid:
		s, ok := v.(string)
		if !ok {
			return fmt.Sprint(v), nil
		}
		return s, nil
	case tInt, tShort, tLong, tByte:
		num, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("not an integer")
		}
		n, err := num.Float64()
		if err != nil || n != float64(int64(n)) {
			return nil, fmt.Errorf("not an integer")
		}
		return int64(n), nil
	case tDecimal, tDouble:
		switch x := v.(type) {
		case json.Number:
			return DecimalFromJSON(x.String())
		case string:
			return ParseDecimal(x)
		}
		return nil, fmt.Errorf("not a number")
	case tBool:
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("not a boolean")
		}
		return b, nil
	case tDateTime:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("not a date")
		}
		t, ok := parseFilterTime(s)
		if !ok {
			return nil, fmt.Errorf("not a date")
		}
		return t.UTC(), nil
	}
	return v, nil
}

// nextNumber continues a numbering sequence: the highest existing value's
// prefix with the number part incremented.
func nextNumber(t *table, key string, rec *Record) any {
	maxNum, prefix, width := int64(0), "", 6
	isInt := false
rows:
	for _, r := range t.rows {
		for _, other := range t.keys { // numbering runs per document type
			if other != key && normKey(keyString(r.Fields[other])) != normKey(keyString(rec.Fields[other])) {
				continue rows
			}
		}
		switch v := r.Fields[key].(type) {
		case int64:
			isInt = true
			maxNum = max(maxNum, v)
		case string:
			i := len(v)
			for i > 0 && v[i-1] >= '0' && v[i-1] <= '9' {
				i--
			}
			n, _ := strconv.ParseInt(v[i:], 10, 64)
			if n >= maxNum {
				maxNum, prefix, width = n, v[:i], len(v)-i
			}
		}
	}
	if isInt {
		return maxNum + 1
	}
	if key == "TimeEntryID" || key == "NoteID" {
		return guid(fmt.Sprintf("%s/%d", t.entity, time.Now().UnixNano()))
	}
	return fmt.Sprintf("%s%0*d", prefix, width, maxNum+1)
}

// write422 renders the entity with errors: only the fields the request
// sent (and the keys), a record-level "error" (unless
// Options.FieldErrorsOnly), and "<NEW>" for keys that were not numbered
// yet.
func (s *Simulator) write422(w http.ResponseWriter, rn *renderer, es *entitySchema, rec *Record, body map[string]json.RawMessage,
	errs fieldErrors, lineErrs map[string]map[int]fieldErrors, inserting bool) {
	var b strings.Builder
	o := newJSONObject(&b)
	o.str("id", rec.ID)
	o.raw("rowNumber", "1")
	verb := "Updating"
	if inserting {
		verb = "Inserting"
	}
	name := dacNames[es.Name]
	if name == "" {
		name = es.Name
	}
	if !s.opts.FieldErrorsOnly {
		o.str("error", verb+"  '"+name+"' record raised at least one error. Please review the errors.")
	}
	sent := map[string]bool{}
	for k := range body {
		if f := es.field(k); f != nil {
			sent[f.Name] = true
		}
	}
	for _, k := range es.Keys {
		sent[k] = true
	}
	for k := range errs { // a required field the request left out
		sent[k] = true
	}
	for _, name := range es.Order {
		f := es.Fields[name]
		if !sent[name] {
			continue
		}
		switch f.Kind {
		case kindScalar:
			v := rec.Fields[name]
			if v == nil && inserting && autoNumbered[name] {
				v = "<NEW>"
			}
			writeFieldWithError(o, rn, f, v, errs[name])
		case kindDetail:
			sub := rn.ep.schema(f.Ref)
			var lines []map[string]json.RawMessage
			_ = json.Unmarshal(body[name], &lines)
			lb := o.key(name)
			lb.WriteByte('[')
			for i, l := range rec.Details[name] {
				if i > 0 {
					lb.WriteByte(',')
				}
				lo := newJSONObject(lb)
				lo.str("id", l.ID)
				lo.raw("rowNumber", fmt.Sprint(i+1))
				wn := newJSONObject(lo.key("note"))
				wn.str("value", l.Note)
				wn.close()
				lsent := map[string]bool{}
				if i < len(lines) {
					for k := range lines[i] {
						lsent[k] = true
					}
				}
				for _, ln := range sub.Order {
					lf := sub.Fields[ln]
					if lf.Kind != kindScalar || !lsent[ln] && !(ln == "InventoryID" && sub.field("InventoryID") != nil) {
						continue
					}
					writeFieldWithError(lo, rn, lf, l.Fields[ln], lineErrs[name][i][ln])
				}
				graph, _ := graphView(es.Name)
				view := detailViews[es.Name+"/"+name]
				if view == "" {
					view = name
				}
				links := newJSONObject(lo.key("_links"))
				links.str("files:put", rn.base+"/files/"+graph+"/"+view+"/"+l.ID+"/{filename}")
				links.close()
				lo.close()
			}
			lb.WriteByte(']')
		}
	}
	graph, view := graphView(es.Name)
	links := newJSONObject(o.key("_links"))
	links.str("self", rn.base+"/"+es.Name+"/"+rec.ID)
	links.str("files:put", rn.base+"/files/"+graph+"/"+view+"/"+rec.ID+"/{filename}")
	links.close()
	o.close()
	writeJSON(w, http.StatusUnprocessableEntity, b.String())
}

// writeFieldWithError writes {"value":…,"error":"…"} (values short, as
// the graph holds them in memory).
func writeFieldWithError(o *jsonObject, rn *renderer, f *schemaField, v any, errText string) {
	var tmp strings.Builder
	tmpObj := newJSONObject(&tmp)
	short := &renderer{ep: rn.ep, base: rn.base, allShort: true}
	short.scalar(tmpObj, f, v, true)
	tmpObj.close()
	// tmp is {"Name":{...}}; extract the inner object.
	inner := strings.TrimSuffix(strings.TrimPrefix(tmp.String(), "{"+jsonString(f.Name)+":"), "}")
	if errText != "" {
		inner = strings.TrimSuffix(inner, "}")
		if inner != "{" {
			inner += ","
		}
		inner += `"error":` + jsonString(errText) + "}"
	}
	o.raw(f.Name, inner)
}

// deleteEntity removes a record by keys or id (204).
func (s *Simulator) deleteEntity(w http.ResponseWriter, r *http.Request, es *entitySchema, segs []string) {
	rec := s.findRecord(es, segs)
	if rec == nil {
		writeNoEntity(w)
		return
	}
	s.data.mu.Lock()
	s.data.table(es.Name).remove(rec)
	s.data.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// invokeAction accepts a known action on an existing record and reports
// it completed (204 with Location), or, for a processing action, started
// as a long operation of p's session (202 with its status URL, longop.go).
func (s *Simulator) invokeAction(w http.ResponseWriter, r *http.Request, p *principal, rn *renderer, es *entitySchema, action string) {
	paths, _ := rn.ep.swagger["paths"].(map[string]any)
	item, _ := paths["/"+es.Name+"/"+action].(map[string]any)
	if _, ok := item["post"]; !ok || strings.HasPrefix(action, "{") {
		writeNotFound(w, r)
		return
	}
	var req struct {
		Entity map[string]json.RawMessage `json:"entity"`
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if json.Unmarshal(raw, &req) != nil || req.Entity == nil {
		writeJSON(w, http.StatusBadRequest, httpError("The request is invalid."))
		return
	}
	s.data.mu.RLock()
	rec := s.locate(s.data.tables[es.Name], es, req.Entity, "", rn.ep)
	s.data.mu.RUnlock()
	if rec == nil {
		writeNoEntity(w)
		return
	}
	if isLongAction(action) {
		id := s.startLongOperation(p.session, es.Screen)
		w.Header().Set("Location", rn.base+"/"+es.Name+"/"+action+"/status/"+id)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Location", rn.base+"/"+es.Name+"/"+rec.ID)
	w.WriteHeader(http.StatusNoContent)
}
