package frappetest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Writes, as Frappe v15 / ERPNext v15 do them (frappe/api/v1.py create_doc
// and update_doc, frappe/client.py submit, frappe/desk/form/utils.py
// add_comment, frappe/model/document.py insert / save / submit). Only the
// DocTypes erpgate writes are writable; every other write is refused with
// the 403 a role without the right gets.

// floatPrecision is System Settings' float_precision, ERPNext's default
// (3), unless Options.FloatPrecision sets it: the places a Float field
// such as a line's qty is rounded to (cint, so "" and "0" are 3). The
// currency precision of the seeded currencies ("#,###.##") is 2, the
// Cents of a rate or amount.
func (s *Simulator) floatPrecision() int {
	if n, err := strconv.Atoi(s.opts.FloatPrecision); err == nil && n > 0 {
		return min(n, 3) // a written line keeps thousandths
	}
	return 3
}

// numberFormatPlaces are the decimal places of System Settings'
// number formats (frappe.utils.number_format_info); a format not listed
// has two.
var numberFormatPlaces = map[string]int{
	"#,###.##": 2, "#.###,##": 2, "# ###.##": 2, "# ###,##": 2, "#'###.##": 2, "#, ###.##": 2,
	"#,##,###.##": 2, "#,###.###": 3, "#.###": 0, "#,###": 0, "#.########": 8,
}

// currencyPlaces is the precision of every Currency field on the site
// (frappe.model.meta.get_field_precision for a field without its own):
// System Settings' currency_precision when set (a cint of 0 counts as
// unset), else the places of its number_format. It does not depend on
// the document's currency.
func (s *Simulator) currencyPlaces() int {
	if n, err := strconv.Atoi(s.opts.CurrencyPrecision); err == nil && n > 0 {
		return min(n, 9)
	}
	if n, ok := numberFormatPlaces[s.numberFormat()]; ok {
		return n
	}
	return 2
}

func (s *Simulator) numberFormat() string {
	if s.opts.NumberFormat == "" {
		return "#,###.##"
	}
	return s.opts.NumberFormat
}

// flt rounds d to places as frappe.utils.flt(value, places) does under
// the site's rounding_method (frappe.utils.data.rounded): a tie to even
// under "Banker's Rounding", and under "Banker's Rounding (legacy)" at
// precision 0; otherwise away from zero.
func (s *Simulator) flt(d Decimal, places int) Decimal {
	switch m := s.roundingMethod(); {
	case m == "Banker's Rounding", m == "Banker's Rounding (legacy)" && places == 0:
		return d.RoundHalfEven(places)
	}
	return d.Round(places)
}

func (s *Simulator) roundingMethod() string {
	if s.opts.RoundingMethod == "" {
		return "Banker's Rounding (legacy)"
	}
	return s.opts.RoundingMethod
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// systemSettings is GET /api/resource/System Settings/System Settings:
// the Single's fields for a System Manager, the only role that may read
// it; 403 PermissionError for anyone else.
func (rc *reqCtx) systemSettings(name string) *apiError {
	if name != "System Settings" {
		return notFound("System Settings " + name + " not found")
	}
	if rc.user == nil || !rc.user.hasRole([]string{SystemManager}) {
		return docPermissionError(userName(rc.user), "System Settings", name, false)
	}
	o := newObject(16)
	o.set("name", "System Settings")
	o.set("owner", "Administrator")
	o.set("modified", "2024-12-02 09:30:00.000000")
	o.set("modified_by", "Administrator")
	o.set("docstatus", 0)
	o.set("idx", "0")
	o.set("country", "New Zealand")
	o.set("language", "en")
	o.set("time_zone", "Pacific/Auckland")
	o.set("date_format", "dd-mm-yyyy")
	o.set("time_format", "HH:mm:ss")
	o.set("number_format", rc.s.numberFormat())
	o.set("float_precision", strconv.Itoa(rc.s.floatPrecision()))
	o.set("currency_precision", rc.s.opts.CurrencyPrecision)
	o.set("rounding_method", rc.s.roundingMethod())
	o.set("doctype", "System Settings")
	return rc.respond("data", o)
}

// Role permissions for writes (ERPNext's doctype permissions for these
// roles; a role not listed has only what readRoles give it).
var (
	createRoles = map[string][]string{
		"Sales Order": {"Sales User", "Sales Manager", "Maintenance User"},
	}
	writeRoles = map[string][]string{
		"Sales Order":   {"Sales User", "Sales Manager", "Maintenance User"},
		"Sales Invoice": {"Accounts User", "Accounts Manager"},
		"Customer":      {"Sales Master Manager"},
	}
	submitRoles = map[string][]string{
		"Sales Order":   {"Sales User", "Sales Manager", "Maintenance User"},
		"Sales Invoice": {"Accounts User", "Accounts Manager"},
	}
)

func allowed(u *User, table map[string][]string, doctype string) bool {
	roles, ok := table[doctype]
	return u != nil && ok && u.hasRole(roles)
}

// noPermission is Document.check_permission(perm) failing: the permission
// check's log as a message (print_has_permission_check_logs) and
// raise_no_permission_to's _error_message.
func noPermission(u *User, perm, doctype, name string) *apiError {
	e := bareError("PermissionError")
	e.messages = []*object{printMessage("User <strong>" + userName(u) + "</strong> does not have doctype access via role permission for document <strong>" + doctype + "</strong>")}
	e.errorMsg = "You need the '" + perm + "' permission on <strong>" + doctype + "</strong> " + name + " to perform this action."
	return e
}

// erpnextError is a ValidationError subclass raised by ERPNext.
func erpnextError(cls, msg string) *apiError {
	e := frappeThrow("ValidationError", msg, "")
	e.excType, e.excPath = cls, "erpnext.exceptions."+cls
	return e
}

func frappeSubclass(cls, msg, title string) *apiError {
	e := frappeThrow("ValidationError", msg, title)
	e.excType, e.excPath = cls, "frappe.exceptions."+cls
	return e
}

// mandatoryError is Document._validate_mandatory: one plain message per
// missing field (BaseDocument._get_missing_mandatory_fields' texts), then
// MandatoryError "[Doctype, name]: fields".
func mandatoryError(doctype, name string, missing [][2]string) *apiError {
	e := &apiError{status: 417, excType: "MandatoryError", excPath: "frappe.exceptions.MandatoryError", traceback: true}
	var names []string
	for _, m := range missing {
		e.messages = append(e.messages, printMessage(m[1]))
		names = append(names, m[0])
	}
	e.message = "[" + doctype + ", " + name + "]: " + strings.Join(names, ", ")
	return e
}

// bodyObject returns the request's JSON body (frappe.form_dict for a
// JSON request) as an object.
func (rc *reqCtx) bodyObject() *object { return rc.form }

// lookup finds a document in the current data.
func (rc *reqCtx) lookup(doctype, name string) *Doc {
	return rc.s.dataset().Get(doctype, name)
}

// insertResource is POST /api/resource/<doctype> (create_doc: new_doc(**data).insert()).
func (rc *reqCtx) insertResource(doctype string) *apiError {
	meta := rc.s.reg.get(doctype)
	if meta == nil || rc.s.missing(doctype) {
		return doctypeNotFound(doctype)
	}
	if doctype != "Sales Order" {
		return noPermission(rc.user, "create", doctype, "")
	}
	rc.s.writeMu.Lock()
	defer rc.s.writeMu.Unlock()
	d, err := rc.newSalesOrder(rc.bodyObject())
	if err != nil {
		return err
	}
	rc.s.cur.Store(rc.s.dataset().withDoc(d))
	return rc.respond("data", stripHighPermlevel(rc.user, doctype, docAsDict(rc.s.reg, d, true)))
}

// objStr reads a string member of a JSON object ("" when absent or null).
func objStr(o *object, k string) string {
	v, _ := o.get(k)
	return strings.TrimSpace(cstr(v))
}

func objList(o *object, k string) []*object {
	v, _ := o.get(k)
	list, _ := v.([]any)
	var out []*object
	for _, x := range list {
		if r, ok := x.(*object); ok {
			out = append(out, r)
		}
	}
	return out
}

// newSalesOrder validates and builds a draft Sales Order the way
// Document.insert and ERPNext's SalesOrder.validate do, in their order:
// links, create permission, naming, party, delivery date, mandatory.
func (rc *reqCtx) newSalesOrder(in *object) (*Doc, *apiError) {
	ds := rc.s.dataset()
	today := fmtDate(rc.s.today)
	customer, company := objStr(in, "customer"), objStr(in, "company")
	rows := objList(in, "items")
	var bad []string
	cust := ds.Get("Customer", customer)
	if customer != "" && cust == nil {
		bad = append(bad, "Customer: "+customer)
	}
	comp := ds.Get("Company", company)
	if company != "" && comp == nil {
		bad = append(bad, "Company: "+company)
	}
	items := make([]*Doc, len(rows))
	for i, r := range rows {
		code := objStr(r, "item_code")
		items[i] = ds.Get("Item", code)
		if code != "" && items[i] == nil {
			bad = append(bad, fmt.Sprintf("Row #%d: Item Code: %s", i+1, code))
		}
	}
	if len(bad) > 0 {
		return nil, frappeSubclass("LinkValidationError", "Could not find "+strings.Join(bad, ", "), "")
	}
	if !allowed(rc.user, createRoles, "Sales Order") {
		return nil, noPermission(rc.user, "create", "Sales Order", "")
	}
	if v := cint(must(in.get("docstatus"))); v != 0 {
		return nil, frappeSubclass("DocstatusTransitionError", "Cannot change docstatus from 0 (Draft) to "+strconv.FormatInt(v, 10), "")
	}
	if company != "" && !companyAllowed(rc.user, company) {
		return nil, docPermissionError(userName(rc.user), "Company", company, true)
	}
	if cust != nil && cust.Int("disabled") == 1 {
		return nil, erpnextError("PartyDisabled", "Customer "+cust.Name+" is disabled")
	}
	txDate := objStr(in, "transaction_date")
	if txDate == "" {
		txDate = today
	}
	delivery := objStr(in, "delivery_date")
	for _, r := range rows {
		if dd := objStr(r, "delivery_date"); dd > delivery {
			delivery = dd
		}
	}
	if delivery == "" {
		return nil, validationError("Please enter Delivery Date")
	}
	if _, err := time.Parse("2006-01-02", txDate); err != nil {
		return nil, validationError("Invalid date: " + txDate)
	}
	if _, err := time.Parse("2006-01-02", delivery); err != nil {
		return nil, validationError("Invalid date: " + delivery)
	}
	if txDate > delivery {
		// frappe.msgprint(..., indicator="orange", raise_exception=True)
		e := frappeThrow("ValidationError", "Expected Delivery Date should be after Sales Order Date", "Invalid Delivery Date")
		e.messages[0].set("indicator", "orange")
		return nil, e
	}
	// _validate (mandatory fields) runs after the controller's validate.
	var missing [][2]string
	if customer == "" {
		missing = append(missing, [2]string{"customer", "Error: Value missing for Sales Order: Customer"})
	}
	if company == "" {
		missing = append(missing, [2]string{"company", "Error: Value missing for Sales Order: Company"})
	}
	if len(rows) == 0 {
		missing = append(missing, [2]string{"items", "Error: Data missing in table: Items"})
	}
	for i, r := range rows {
		if objStr(r, "item_code") == "" {
			missing = append(missing, [2]string{"item_code", fmt.Sprintf("Error: <strong>Sales Order Item</strong> Row #%d: Value missing for: Item Code", i+1)})
		}
	}
	if len(missing) > 0 {
		return nil, mandatoryError("Sales Order", "new-sales-order-1", missing)
	}
	compCurrency := comp.Str("default_currency")
	currency := cust.Str("default_currency")
	if currency == "" {
		currency = compCurrency
	}
	posted, _ := time.Parse("2006-01-02", txDate)
	// Rates and amounts are rounded to the site's currency precision
	// (whatever the currency), a tie as the rounding method says.
	places := rc.s.currencyPlaces()
	halfUp := places > 0
	switch rc.s.roundingMethod() {
	case "Banker's Rounding":
		halfUp = false
	case "Commercial Rounding":
		halfUp = true
	}
	s := &sellingCalc{currency: currency, companyCurrency: compCurrency, convE4: crossRate(currency, compCurrency, posted),
		halfUp: halfUp, unit: decimalScale / pow10(places)}
	for i, r := range rows {
		it := items[i]
		info := &itemInfo{Code: it.Name, Name: it.Str("item_name"), Group: it.Str("item_group"), UOM: it.Str("stock_uom"),
			PriceCents: it.Dec("standard_rate").Cents(), Stock: it.Int("is_stock_item") == 1}
		// calculate_taxes_and_totals rounds the line's floats
		// (round_floats_in): qty to float_precision.
		qty := rc.s.flt(flt(must(r.get("qty"))), rc.s.floatPrecision())
		if qty <= 0 {
			return nil, validationError(fmt.Sprintf("Row #%d: Quantity for Item %s cannot be zero or negative.", i+1, it.Name))
		}
		uom, factor := rc.s.lineUnit(it, objStr(r, "uom"))
		if u := ds.Get("UOM", uom); u != nil && u.Int("must_be_whole_number") == 1 && int64(qty)%decimalScale != 0 {
			// erpnext.utilities.transaction_base.validate_uom_is_integer,
			// on the qty rounded to its precision.
			e := frappeThrow("ValidationError", fmt.Sprintf("Row %d: Quantity (%s) cannot be a fraction. To allow this, disable '<strong>Must be Whole Number</strong>' in UOM <strong>%s</strong>.", i+1, pyFloat(qty.Float64()), uom), "")
			e.excType, e.excPath = "UOMMustBeIntegerError", "erpnext.utilities.transaction_base.UOMMustBeIntegerError"
			return nil, e
		}
		line := sellingLine{item: info, qtyM: int64(qty) / (decimalScale / 1000), rateC: s.fromCents(priceIn(info, currency) * factor), uom: uom, factor: factor}
		if v, ok := r.get("rate"); ok && v != nil {
			line.rateC = s.round(int64(flt(v)), s.unitSize())
		}
		s.lines = append(s.lines, line)
	}
	// set_missing_values applies the company's default Sales Taxes and
	// Charges Template: GST for the NZ and AU companies on orders in their
	// own currency (exports are zero-rated); the US company has none.
	tax := defaultSalesTax(comp.Name)
	if tax != nil && currency == compCurrency {
		s.taxRateBP = tax.TaxRateBP
	}
	s.compute()
	stamp := rc.s.stamp()
	owner := userName(rc.user)
	d := &Doc{DocType: "Sales Order", Fields: map[string]any{}, Children: map[string][]*Doc{}, defaults: rc.s.reg.get("Sales Order").template}
	d.Name = nextName(ds, "Sales Order", fmt.Sprintf("SAL-ORD-%d-", rc.s.today.Year()))
	f := d.Fields
	for k, v := range map[string]any{"owner": owner, "creation": stamp, "modified": stamp, "modified_by": owner, "docstatus": int64(0), "idx": int64(0)} {
		f[k] = v
	}
	f["title"] = cust.Str("customer_name")
	f["naming_series"] = "SAL-ORD-.YYYY.-"
	f["customer"] = cust.Name
	f["customer_name"] = cust.Str("customer_name")
	f["order_type"] = "Sales"
	f["company"] = comp.Name
	f["transaction_date"] = txDate
	f["delivery_date"] = delivery
	if po := objStr(in, "po_no"); po != "" {
		f["po_no"] = po
	}
	f["territory"] = cust.Str("territory")
	f["customer_group"] = cust.Str("customer_group")
	f["party_account_currency"] = currency
	fillSellingHeader(d, s)
	f["status"] = "Draft"
	f["delivery_status"] = "Not Delivered"
	f["billing_status"] = "Not Billed"
	if !hasStockLine(s) {
		f["delivery_status"] = "Not Applicable"
	}
	if s.taxRateBP != 0 {
		addRow(d, "taxes", rc.s.reg.get("Sales Taxes and Charges"), taxRow(tax, s), 0)
		f["taxes_and_charges"] = tax.TaxLabel + " - " + tax.Abbr
	}
	meta := rc.s.reg.get("Sales Order Item")
	for i, l := range s.lines {
		row := pricedItemRow(s, l)
		row["delivery_date"] = delivery
		if dd := objStr(rows[i], "delivery_date"); dd != "" {
			row["delivery_date"] = dd
		}
		row["transaction_date"] = txDate
		addRow(d, "items", meta, row, i)
	}
	addRow(d, "payment_schedule", rc.s.reg.get("Payment Schedule"), map[string]any{
		"due_date": txDate, "invoice_portion": Units(100), "payment_amount": s.dec(s.payable()),
		"outstanding": s.dec(s.payable()), "base_payment_amount": s.dec(s.basePayable()), "discount_type": "Percentage",
	}, 0)
	return d, nil
}

// defaultSalesTax returns the company's default sales tax, or nil.
func defaultSalesTax(company string) *companyInfo {
	for _, c := range demoCompanies {
		if c.Name == company && c.Abbr != "DSUS" {
			// A copy of the fields that never change (genSetup sets
			// TaxAccount on the shared value).
			ci := &companyInfo{Name: c.Name, Abbr: c.Abbr, Currency: c.Currency, TaxLabel: c.TaxLabel, TaxRateBP: c.TaxRateBP}
			ci.TaxAccount = ci.acct(ci.TaxLabel)
			return ci
		}
	}
	return nil
}

func hasStockLine(s *sellingCalc) bool {
	for _, l := range s.lines {
		if l.item.Stock {
			return true
		}
	}
	return false
}

// must drops the presence flag of object.get.
func must(v any, _ bool) any { return v }

// addRow appends a child row with the parent's standard columns and a
// random name, as Document.set_new_name does for children.
func addRow(parent *Doc, tf string, meta *DocMeta, values map[string]any, i int) {
	for k, v := range map[string]any{
		"owner": parent.Fields["owner"], "creation": parent.Fields["creation"], "modified": parent.Fields["modified"],
		"modified_by": parent.Fields["modified_by"], "docstatus": parent.Fields["docstatus"], "idx": int64(i + 1),
		"parent": parent.Name, "parentfield": tf, "parenttype": parent.DocType,
	} {
		values[k] = v
	}
	parent.Children[tf] = append(parent.Children[tf], &Doc{DocType: meta.Name, Name: excID()[:10], Fields: values, defaults: meta.template})
}

// nextName is the naming series' next name: prefix + 5 digits after the
// highest existing one (tabSeries keeps the current value).
func nextName(ds *Dataset, doctype, prefix string) string {
	top := 0
	for _, d := range ds.List(doctype) {
		if rest, ok := strings.CutPrefix(d.Name, prefix); ok {
			if n, err := strconv.Atoi(rest); err == nil && n > top {
				top = n
			}
		}
	}
	return fmt.Sprintf("%s%05d", prefix, top+1)
}

// crossRate is the deterministic exchange rate between any two of the
// demo currencies, through USD.
func crossRate(from, to string, d time.Time) int64 {
	switch {
	case from == to:
		return 10000
	case from == "USD":
		return exchangeRate(from, to, d)
	case to == "USD":
		return roundHalfEven(10000*10000, exchangeRate(to, from, d))
	}
	return roundHalfEven(crossRate(from, "USD", d)*crossRate("USD", to, d), 10000)
}

// forWrite takes the write lock and returns the stored document with a
// copy to change (frappe.get_doc(doctype, name, for_update=True)); the
// caller releases the lock with unlock. A missing document is a 404 and
// leaves the lock released.
func (rc *reqCtx) forWrite(doctype, name string) (unlock func(), cur, d *Doc, err *apiError) {
	rc.s.writeMu.Lock()
	cur = rc.lookup(doctype, name)
	if cur == nil {
		rc.s.writeMu.Unlock()
		return nil, nil, nil, notFound(doctype + " " + name + " not found")
	}
	return rc.s.writeMu.Unlock, cur, cur.clone(), nil
}

// updateResource is PUT /api/resource/<doctype>/<name> (update_doc:
// get_doc, doc.update(data), doc.save()).
func (rc *reqCtx) updateResource(doctype, name string) *apiError {
	meta := rc.s.reg.get(doctype)
	if meta == nil || rc.s.missing(doctype) {
		return doctypeNotFound(doctype)
	}
	unlock, cur, d, err := rc.forWrite(doctype, name)
	if err != nil {
		return err
	}
	defer unlock()
	if err := rc.applyUpdate(d, rc.bodyObject()); err != nil {
		return err
	}
	saved, err := rc.save(cur, d)
	if err != nil {
		return err
	}
	return rc.respond("data", stripHighPermlevel(rc.user, doctype, docAsDict(rc.s.reg, saved, true)))
}

// applyUpdate is Document.update(data): header fields of the DocType and
// whole child tables (rows keep their name when they send it).
func (rc *reqCtx) applyUpdate(d *Doc, in *object) *apiError {
	meta := rc.s.reg.get(d.DocType)
	for i, k := range in.keys {
		v := in.vals[i]
		switch k {
		case "name", "doctype", "owner", "creation", "flags":
			continue
		case "modified", "docstatus":
			if k == "docstatus" {
				d.Fields[k] = cint(v)
			} else {
				d.Fields[k] = cstr(v)
			}
			continue
		}
		f := meta.Field(k)
		if f == nil {
			continue
		}
		if f.IsTable() {
			list, _ := v.([]any)
			cm := rc.s.reg.get(f.Options)
			old := map[string]*Doc{}
			for _, r := range d.Children[k] {
				old[r.Name] = r
			}
			d.Children[k] = nil
			for j, x := range list {
				r, ok := x.(*object)
				if !ok {
					continue
				}
				row := &Doc{DocType: cm.Name, Name: objStr(r, "name"), Fields: map[string]any{}, defaults: cm.template}
				if prev := old[row.Name]; prev != nil {
					row.Fields = cloneFields(prev.Fields)
				} else {
					row.Name = excID()[:10]
				}
				for ri, rk := range r.keys {
					if cf := cm.Field(rk); cf != nil {
						row.Fields[rk] = storedValue(cf, r.vals[ri])
					}
				}
				for ck, cv := range map[string]any{"idx": int64(j + 1), "parent": d.Name, "parentfield": k, "parenttype": d.DocType} {
					row.Fields[ck] = cv
				}
				d.Children[k] = append(d.Children[k], row)
			}
			continue
		}
		d.Fields[k] = storedValue(f, v)
	}
	return nil
}

func cloneFields(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// storedValue converts a JSON value to the column's stored Go type.
func storedValue(f *Field, v any) any {
	switch {
	case v == nil:
		return nil
	case f.Type == "Check" || f.Type == "Int":
		return cint(v)
	case f.IsDecimal():
		return flt(v)
	}
	return cstr(v)
}

// save is Document._save after the data is applied: write permission,
// check_if_latest (modified, then the docstatus transition and its submit
// permission), the DocType's validations, then the new modified stamp on
// the document and its rows.
func (rc *reqCtx) save(cur, d *Doc) (*Doc, *apiError) {
	dt := d.DocType
	meta := rc.s.reg.get(dt)
	// _save: write permission first (submitting needs it too), then
	// check_if_latest: the modified stamp, then the docstatus transition.
	if !canRead(rc.user, dt) || !docAllowed(rc.user, rc.s.reg, cur) || !allowed(rc.user, writeRoles, dt) {
		return nil, noPermission(rc.user, "write", dt, d.Name)
	}
	stamp := rc.s.stamp()
	if sent := d.Str("modified"); sent != cur.Str("modified") {
		return nil, frappeSubclass("TimestampMismatchError", "Error: Document has been modified after you have opened it ("+cur.Str("modified")+", "+stamp+"). Please refresh to get the latest document.", "")
	}
	from, to := cur.Int("docstatus"), d.Int("docstatus")
	switch {
	case from == 0 && to == 0:
	case from == 0 && to == 1, from == 1 && to == 1:
		if !meta.Submittable || !allowed(rc.user, submitRoles, dt) {
			return nil, noPermission(rc.user, "submit", dt, d.Name)
		}
	case from == 1 && to == 0:
		return nil, frappeSubclass("DocstatusTransitionError", "Cannot change docstatus from 1 (Submitted) to 0 (Draft)", "")
	case from == 2:
		return nil, validationError("Cannot edit cancelled document")
	default:
		return nil, validationError("Invalid docstatus")
	}
	if from == 1 && to == 1 {
		if f := changedAfterSubmit(meta, cur, d); f != nil {
			// The simulator has no labels: the field name stands in.
			return nil, frappeSubclass("UpdateAfterSubmitError", " Not allowed to change <strong>"+f.Name+"</strong> after submission from <strong>"+toText(cur.Get(f.Name))+"</strong> to <strong>"+toText(d.Get(f.Name))+"</strong>", "Cannot Update After Submit")
		}
	}
	var also *Doc
	if dt == "Customer" {
		rc.fetchFromContact(d)
		if err := rc.validateCreditLimits(cur, d); err != nil {
			return nil, err
		}
		also = rc.createPrimaryContact(d)
	}
	if from == 0 && to == 1 {
		switch dt {
		case "Sales Order":
			d.Fields["status"] = "To Deliver and Bill"
			if d.Str("delivery_status") == "Not Applicable" {
				d.Fields["status"] = "To Bill"
			}
		case "Sales Invoice":
			if d.Dec("outstanding_amount") == 0 {
				d.Fields["outstanding_amount"] = Cents(partyTotal(d))
			}
			d.Fields["status"] = invoiceStatus(d, fmtDate(rc.s.today), false)
		}
	}
	user := userName(rc.user)
	d.Fields["modified"], d.Fields["modified_by"] = stamp, user
	for _, rows := range d.Children {
		for _, r := range rows {
			r.Fields["modified"], r.Fields["modified_by"], r.Fields["docstatus"] = stamp, user, to
			if _, ok := r.Fields["owner"]; !ok {
				r.Fields["owner"], r.Fields["creation"] = user, stamp
			}
		}
	}
	next := rc.s.dataset().withDoc(d)
	if also != nil {
		next = next.withDoc(also)
	}
	rc.s.cur.Store(next)
	return d, nil
}

// fetchFromContact is the fetch_from of Customer.email_id and mobile_no
// (customer_primary_contact.email_id, .mobile_no): on save they are read
// from the primary Contact, whatever was sent.
func (rc *reqCtx) fetchFromContact(d *Doc) {
	c := rc.s.dataset().Get("Contact", d.Str("customer_primary_contact"))
	if c == nil {
		return
	}
	d.Fields["email_id"], d.Fields["mobile_no"] = c.Get("email_id"), c.Get("mobile_no")
}

// createPrimaryContact is Customer.on_update's create_primary_contact: a
// customer without a primary contact (and not made from a lead) that has
// an e-mail or mobile gets a Contact made from them (make_contact), which
// becomes its customer_primary_contact.
func (rc *reqCtx) createPrimaryContact(d *Doc) *Doc {
	if d.Str("customer_primary_contact") != "" || d.Str("lead_name") != "" || (d.Str("email_id") == "" && d.Str("mobile_no") == "") {
		return nil
	}
	ds := rc.s.dataset()
	name := d.Str("customer_name")
	for i := 1; ds.Get("Contact", name) != nil; i++ {
		name = fmt.Sprintf("%s-%d", d.Str("customer_name"), i)
	}
	m := rc.s.reg.get("Contact")
	c := &Doc{DocType: "Contact", Name: name, Children: map[string][]*Doc{}, defaults: m.template, Fields: map[string]any{
		"owner": d.Fields["modified_by"], "creation": d.Fields["modified"], "modified": d.Fields["modified"], "modified_by": d.Fields["modified_by"],
		"docstatus": int64(0), "idx": int64(0), "first_name": d.Str("customer_name"), "full_name": d.Str("customer_name"),
		"email_id": d.Get("email_id"), "mobile_no": d.Get("mobile_no"), "is_primary_contact": int64(1),
	}}
	d.Fields["customer_primary_contact"] = name
	return c
}

// changedAfterSubmit returns a header field a submitted document may not
// change (none of the simulated fields is allow_on_submit).
func changedAfterSubmit(meta *DocMeta, cur, d *Doc) *Field {
	for _, f := range meta.DataFields() {
		if toText(cur.Get(f.Name)) != toText(d.Get(f.Name)) {
			return f
		}
	}
	return nil
}

// validateCreditLimits is ERPNext's Customer.validate_credit_limit_on_change:
// one row per company, and a limit no lower than what the customer owes
// the company (submitted invoices' outstanding, in company currency, plus
// submitted orders not yet billed unless bypass_credit_limit_check).
func (rc *reqCtx) validateCreditLimits(cur, d *Doc) *apiError {
	limits := d.Children["credit_limits"]
	if len(limits) == 0 || slices.Equal(sortedLimits(cur), sortedLimits(d)) {
		return nil
	}
	seen := map[string]bool{}
	for _, l := range limits {
		c := l.Str("company")
		if c == "" {
			return mandatoryError("Customer", d.Name, [][2]string{{"company", fmt.Sprintf("Error: <strong>Customer Credit Limit</strong> Row #%d: Value missing for: Company", l.Int("idx"))}})
		}
		if rc.s.dataset().Get("Company", c) == nil {
			return frappeSubclass("LinkValidationError", fmt.Sprintf("Could not find Row #%d: Company: %s", l.Int("idx"), c), "")
		}
		if seen[c] {
			return validationError("Credit limit is already defined for the Company " + c)
		}
		seen[c] = true
		owed := rc.customerOutstanding(d.Name, c, l.Int("bypass_credit_limit_check") == 1)
		if l.Dec("credit_limit").Cents() < owed {
			return validationError("New credit limit is less than current outstanding amount for the customer. Credit limit has to be atleast " + pyFloat(Cents(owed).Float64()))
		}
	}
	return nil
}

// sortedLimits lists a customer's credit limits ordered by company, as
// ERPNext compares the old and new ones.
func sortedLimits(d *Doc) []Decimal {
	rows := slices.Clone(d.Children["credit_limits"])
	slices.SortStableFunc(rows, func(a, b *Doc) int { return collateCompare(a.Str("company"), b.Str("company")) })
	out := make([]Decimal, len(rows))
	for i, r := range rows {
		out[i] = r.Dec("credit_limit")
	}
	return out
}

// customerOutstanding is erpnext.selling.doctype.customer.get_customer_outstanding
// in cents of the company currency.
func (rc *reqCtx) customerOutstanding(customer, company string, bypassOrders bool) int64 {
	ds := rc.s.dataset()
	var total int64
	for _, si := range ds.List("Sales Invoice") {
		if si.Int("docstatus") != 1 || si.Str("customer") != customer || si.Str("company") != company {
			continue
		}
		out := si.Dec("outstanding_amount").Cents()
		if si.Str("party_account_currency") != "" && si.Str("party_account_currency") != ds.Get("Company", company).Str("default_currency") {
			out = roundHalfEven(out*int64(si.Dec("conversion_rate")), decimalScale)
		}
		total += out
	}
	if !bypassOrders {
		for _, so := range ds.List("Sales Order") {
			if so.Int("docstatus") != 1 || so.Str("customer") != customer || so.Str("company") != company || so.Str("status") == "Closed" {
				continue
			}
			total += roundHalfEven(so.Dec("base_grand_total").Cents()*(100*decimalScale-int64(so.Dec("per_billed"))), 100*decimalScale)
		}
	}
	return total
}

// methodSubmit is frappe.client.submit(doc): the document is built from
// the sent dict (so its modified is the one checked) and submitted.
func (rc *reqCtx) methodSubmit() *apiError {
	if rc.r.Method != http.MethodPost && rc.r.Method != http.MethodPut {
		return frappeThrow("PermissionError", "Not permitted", "")
	}
	v, _ := rc.arg("doc")
	if s, ok := v.(string); ok {
		var err *apiError
		if v, err = jsonLoads(s); err != nil {
			return err
		}
	}
	in, ok := v.(*object)
	if !ok {
		return pythonError("TypeError", "submit() missing 1 required positional argument: 'doc'")
	}
	doctype, name := objStr(in, "doctype"), objStr(in, "name")
	meta := rc.s.reg.get(doctype)
	if meta == nil {
		return doctypeNotFound(doctype)
	}
	unlock, cur, d, err := rc.forWrite(doctype, name)
	if err != nil {
		return err
	}
	defer unlock()
	d.Fields["modified"] = nil // get_doc(dict) has only what was sent
	if err := rc.applyUpdate(d, in); err != nil {
		return err
	}
	d.Fields["docstatus"] = int64(1)
	saved, err := rc.save(cur, d)
	if err != nil {
		return err
	}
	return rc.respond("message", stripHighPermlevel(rc.user, doctype, docAsDict(rc.s.reg, saved, false)))
}

// methodAddComment is frappe.desk.form.utils.add_comment: the reference
// document must exist (404) and be readable by the user (403); the
// Comment is inserted ignoring Comment permissions, with comment_email
// and comment_by as the caller sent them.
func (rc *reqCtx) methodAddComment() *apiError {
	if rc.r.Method != http.MethodPost && rc.r.Method != http.MethodPut {
		return frappeThrow("PermissionError", "Not permitted", "")
	}
	arg := func(k string) string { v, _ := rc.arg(k); return cstr(v) }
	refType, refName, content := arg("reference_doctype"), arg("reference_name"), arg("content")
	for _, k := range []string{"reference_doctype", "reference_name", "content", "comment_email", "comment_by"} {
		if _, ok := rc.arg(k); !ok {
			return pythonError("TypeError", "add_comment() missing 1 required positional argument: '"+k+"'")
		}
	}
	meta := rc.s.reg.get(refType)
	if meta == nil || meta.IsTable {
		return doctypeNotFound(refType)
	}
	rc.s.writeMu.Lock()
	defer rc.s.writeMu.Unlock()
	ref := rc.lookup(refType, refName)
	if ref == nil {
		return notFound(refType + " " + refName + " not found")
	}
	if !canRead(rc.user, refType) {
		return noPermission(rc.user, "read", refType, ref.Name)
	}
	if !docAllowed(rc.user, rc.s.reg, ref) {
		return docPermissionError(userName(rc.user), refType, ref.Name, true)
	}
	stamp := rc.s.stamp()
	user := userName(rc.user)
	cm := rc.s.reg.get("Comment")
	c := &Doc{DocType: "Comment", Name: excID()[:10], Children: map[string][]*Doc{}, defaults: cm.template, Fields: map[string]any{
		"owner": user, "creation": stamp, "modified": stamp, "modified_by": user, "docstatus": int64(0), "idx": int64(0),
		"comment_type": "Comment", "comment_email": arg("comment_email"), "comment_by": arg("comment_by"),
		"reference_doctype": refType, "reference_name": ref.Name, "reference_owner": ref.Str("owner"),
		"content": sanitizeHTML(content),
	}}
	if c.Str("comment_email") == "" {
		c.Fields["comment_email"] = user
	}
	rc.s.cur.Store(rc.s.dataset().withDoc(c))
	return rc.respond("message", docAsDict(rc.s.reg, c, true)) // a Document: as_dict(no_nulls=True)
}

// sanitizeHTML stands in for frappe.utils.html_utils.sanitize_html: the
// simulator drops script elements and on* attributes' tags wholesale.
func sanitizeHTML(s string) string {
	lower := strings.ToLower(s)
	for {
		i := strings.Index(lower, "<script")
		if i < 0 {
			return s
		}
		j := strings.Index(lower[i:], "</script>")
		end := len(s)
		if j >= 0 {
			end = i + j + len("</script>")
		}
		s, lower = s[:i]+s[end:], lower[:i]+lower[end:]
	}
}
