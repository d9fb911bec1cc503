package acumaticatest

import (
	"strconv"
	"strings"
	"time"
)

// graphViews names the business-logic graph and primary view behind an
// entity, used in the "files:put" link (…/files/<graph>/<view>/<id>/{filename}).
var graphViews = map[string][2]string{
	"Customer": {"PX.Objects.AR.CustomerMaint", "BAccount"}, "Vendor": {"PX.Objects.AP.VendorMaint", "BAccount"},
	"StockItem": {"PX.Objects.IN.InventoryItemMaint", "Item"}, "NonStockItem": {"PX.Objects.IN.NonStockItemMaint", "Item"},
	"SalesOrder": {"PX.Objects.SO.SOOrderEntry", "Document"}, "Shipment": {"PX.Objects.SO.SOShipmentEntry", "Document"},
	"SalesInvoice": {"PX.Objects.SO.SOInvoiceEntry", "Document"}, "Invoice": {"PX.Objects.AR.ARInvoiceEntry", "Document"},
	"Payment": {"PX.Objects.AR.ARPaymentEntry", "Document"}, "Bill": {"PX.Objects.AP.APInvoiceEntry", "Document"},
	"Check": {"PX.Objects.AP.APPaymentEntry", "Document"}, "PurchaseOrder": {"PX.Objects.PO.POOrderEntry", "Document"},
	"PurchaseReceipt": {"PX.Objects.PO.POReceiptEntry", "Document"}, "InventoryReceipt": {"PX.Objects.IN.INReceiptEntry", "receipt"},
	"InventoryIssue": {"PX.Objects.IN.INIssueEntry", "issue"}, "Warehouse": {"PX.Objects.IN.INSiteMaint", "site"},
	"ItemClass": {"PX.Objects.IN.INItemClassMaint", "itemclass"}, "ItemWarehouse": {"PX.Objects.IN.INItemSiteMaint", "itemsiterecord"},
	"JournalTransaction": {"PX.Objects.GL.JournalEntry", "BatchModule"}, "Account": {"PX.Objects.GL.AccountMaint", "AccountRecords"},
	"Contact": {"PX.Objects.CR.ContactMaint", "Contact"}, "Lead": {"PX.Objects.CR.LeadMaint", "Lead"},
	"Opportunity": {"PX.Objects.CR.OpportunityMaint", "Opportunity"}, "BusinessAccount": {"PX.Objects.CR.BusinessAccountMaint", "BAccount"},
	"Case": {"PX.Objects.CR.CRCaseMaint", "Case"}, "Project": {"PX.Objects.PM.ProjectEntry", "Project"},
	"ProjectTask": {"PX.Objects.PM.ProjectTaskEntry", "Task"}, "Employee": {"PX.Objects.EP.EmployeeMaint", "Employee"},
	"ExpenseClaim": {"PX.Objects.EP.ExpenseClaimEntry", "ExpenseClaim"}, "ExpenseReceipt": {"PX.Objects.EP.ExpenseClaimDetailEntry", "ClaimDetails"},
	"TimeEntry": {"PX.Objects.EP.EmployeeActivitiesEntry", "Items"}, "CustomerLocation": {"PX.Objects.AR.CustomerLocationMaint", "Location"},
}

// detailViews names the view of detail collections in "files:put" links.
var detailViews = map[string]string{"Invoice/Details": "Transactions", "Bill/Details": "Transactions",
	"SalesOrder/Details": "Transactions", "SalesInvoice/Details": "Transactions", "PurchaseOrder/Details": "Transactions",
	"PurchaseReceipt/Details": "transactions", "Shipment/Details": "Transactions", "JournalTransaction/Details": "GLTranModuleBatNbr",
	"InventoryReceipt/Details": "transactions", "InventoryIssue/Details": "transactions", "ExpenseClaim/Details": "ExpenseClaimDetails"}

func graphView(entity string) (graph, view string) {
	if gv, ok := graphViews[entity]; ok {
		return gv[0], gv[1]
	}
	return "PX.Objects." + entity + "Maint", "Document"
}

// pathSet is a parsed $expand or $select: names at this level, each with
// the nested paths below it.
type pathSet map[string]pathSet

// parsePaths parses "A,B/C,B/D" into {A:{}, B:{C:{}, D:{}}}. Names keep
// their spelling; lookups are case-insensitive.
func parsePaths(s string) pathSet {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	root := pathSet{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		node := root
		for _, seg := range strings.Split(p, "/") {
			seg = strings.TrimSpace(seg)
			child := node.get(seg)
			if child == nil {
				child = pathSet{}
				node[seg] = child
			}
			node = child
		}
	}
	return root
}

func (ps pathSet) get(name string) pathSet {
	if ps == nil {
		return nil
	}
	if c, ok := ps[name]; ok {
		return c
	}
	for k, c := range ps {
		if strings.EqualFold(k, name) {
			return c
		}
	}
	return nil
}

func (ps pathSet) has(name string) bool { return ps.get(name) != nil }

// renderer serialises records of one endpoint version.
type renderer struct {
	ep   *endpointSchema
	base string // "/entity/Default/24.200.001"
	// short lists fields printed in shortest decimal form (values the
	// graph computed during a PUT); all=true prints every decimal short.
	short    map[string]bool
	allShort bool
}

// top writes a top-level record.
func (rn *renderer) top(b *strings.Builder, r *Record, rowNumber int, expand, sel pathSet) {
	es := rn.ep.schema(r.Entity)
	o := newJSONObject(b)
	o.str("id", r.ID)
	o.raw("rowNumber", strconv.Itoa(rowNumber))
	wn := newJSONObject(o.key("note"))
	wn.str("value", r.Note)
	wn.close()
	rn.fields(o, es, r, expand, sel, true)
	o.raw("custom", "{}")
	graph, view := graphView(r.Entity)
	links := newJSONObject(o.key("_links"))
	links.str("self", rn.base+"/"+r.Entity+"/"+r.ID)
	links.str("files:put", rn.base+"/files/"+graph+"/"+view+"/"+r.ID+"/{filename}")
	links.close()
	o.close()
}

// fields writes the fields of es in Acumatica's order. Detail collections
// and linked entities appear only when expanded.
func (rn *renderer) fields(o *jsonObject, es *entitySchema, r *Record, expand, sel pathSet, top bool) {
	for _, name := range es.Order {
		f := es.Fields[name]
		if sel != nil && !sel.has(name) {
			continue
		}
		switch f.Kind {
		case kindScalar:
			rn.scalar(o, f, r.Fields[name], top)
		case kindDetail:
			if !expand.has(name) {
				continue
			}
			sub := rn.ep.schema(f.Ref)
			if sub == nil {
				continue
			}
			b := o.key(name)
			b.WriteByte('[')
			for i, line := range r.Details[name] {
				if i > 0 {
					b.WriteByte(',')
				}
				rn.detail(b, r, name, sub, line, i+1, expand.get(name), subSelect(sel, name))
			}
			b.WriteByte(']')
		case kindLinked:
			if !expand.has(name) {
				continue
			}
			sub := rn.ep.schema(f.Ref)
			if sub == nil {
				continue
			}
			l := r.Linked[name]
			if l == nil {
				l = &Record{Entity: f.Ref, ID: guid(r.ID + "/" + name), Fields: map[string]any{}}
			}
			lo := newJSONObject(o.key(name))
			lo.str("id", l.ID)
			lo.raw("rowNumber", "1")
			lo.raw("note", "null")
			rn.fields(lo, sub, l, expand.get(name), subSelect(sel, name), false)
			lo.raw("custom", "{}")
			lo.close()
		}
	}
}

// subSelect narrows $select to a nested entity: naming the entity alone
// selects all of its fields.
func subSelect(sel pathSet, name string) pathSet {
	if sel == nil {
		return nil
	}
	c := sel.get(name)
	if len(c) == 0 {
		return nil
	}
	return c
}

func (rn *renderer) detail(b *strings.Builder, parent *Record, collection string, es *entitySchema, l *Record, n int, expand, sel pathSet) {
	o := newJSONObject(b)
	o.str("id", l.ID)
	o.raw("rowNumber", strconv.Itoa(n))
	wn := newJSONObject(o.key("note"))
	wn.str("value", l.Note)
	wn.close()
	rn.fields(o, es, l, expand, sel, false)
	o.raw("custom", "{}")
	graph, _ := graphView(parent.Entity)
	view := detailViews[parent.Entity+"/"+collection]
	if view == "" {
		view = collection
	}
	links := newJSONObject(o.key("_links"))
	links.str("files:put", rn.base+"/files/"+graph+"/"+view+"/"+l.ID+"/{filename}")
	links.close()
	o.close()
}

// scalar writes {"value":…} or {} for an empty field.
func (rn *renderer) scalar(o *jsonObject, f *schemaField, v any, top bool) {
	b := o.key(f.Name)
	if v == nil {
		switch f.Type {
		case tDecimal, tDouble:
			v = Decimal(0)
		default:
			b.WriteString("{}")
			return
		}
	}
	b.WriteString(`{"value":`)
	switch x := v.(type) {
	case string:
		writeJSONString(b, x)
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case Decimal:
		scale := decimalScale(f.Name)
		if rn.allShort || rn.short[f.Name] && top {
			scale = scaleShort
		}
		b.WriteString(x.Format(scale))
	case time.Time:
		writeJSONString(b, formatDateTime(x))
	default:
		b.WriteString("null")
	}
	b.WriteByte('}')
}
