package acumaticatest

import (
	"encoding/json"
	"time"
)

// The business logic a PUT runs after the request's fields are bound, as
// the forms' graphs do: required fields, defaults taken from the records a
// document names, line amounts and totals, and a sales order's hold
// status. Only what erpgate's write tools touch is modelled; other
// entities keep the bare upsert of contract_write.go.

// required are the fields an inserted record must have, with the error
// Acumatica puts on the field when it is empty ("'Customer' cannot be
// empty."). Key fields are checked separately.
var required = map[string]map[string]string{
	"SalesOrder": {"CustomerID": "'Customer' cannot be empty."},
	"Customer":   {"CustomerName": "'Customer Name' cannot be empty."},
}

// applyRules runs the entity's graph logic on rec, which holds the bound
// request; body is the request, inserting whether rec is new. Field
// errors are added to errs. s.data.mu is held.
func (s *Simulator) applyRules(es *entitySchema, rec *Record, body map[string]json.RawMessage, inserting bool, errs fieldErrors, now time.Time) {
	if inserting {
		for f, msg := range required[es.Name] {
			if rec.Fields[f] == nil && errs[f] == "" {
				errs[f] = msg
			}
		}
	}
	switch es.Name {
	case "SalesOrder":
		s.salesOrderRules(rec, body, inserting, now)
	case "Customer":
		customerRules(rec, body)
	}
}

// salesOrderRules: a new order takes its currency, location and ship-via
// from the customer and today's date; it is put on hold unless the
// request says otherwise (the SO order type's "Hold Document on Entry"),
// and its Status follows Hold: "On Hold" while held, "Open" once released.
// Lines take the item's description, unit, warehouse and default price
// (in the base currency, converted at the order's rate in another one);
// amounts and the order's totals (with the customer's tax zone's rate) are
// recomputed on every save.
func (s *Simulator) salesOrderRules(rec *Record, body map[string]json.RawMessage, inserting bool, now time.Time) {
	cust := s.findLocked("Customer", rec.String("CustomerID"))
	if inserting {
		today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
		defaults := map[string]any{"Date": today, "Approved": false, "CreditHold": false, "BaseCurrencyID": baseCurrency,
			"CurrencyRate": DecimalFromInt(1), "ReciprocalRate": DecimalFromInt(1), "LocationID": "MAIN", "Branch": "HEADOFFICE",
			"PaymentMethod": "CHECK", "Project": "X", "IsTaxValid": false, "WillCall": false, "ControlTotal": Decimal(0),
			"DisableAutomaticDiscountUpdate": false, "DisableAutomaticTaxCalculation": false, "TaxCalcMode": "Tax Settings",
			"BillToAddressOverride": false, "BillToContactOverride": false, "ShipToAddressOverride": false,
			"ShipToContactOverride": false, "BillToAddressValidated": true, "ShipToAddressValidated": true, "Hold": true}
		if cust != nil {
			defaults["CurrencyID"] = cust.String("CurrencyID")
			defaults["ShipVia"] = cust.String("ShipVia")
			if r, ok := currencyRates[cust.String("CurrencyID")]; ok {
				defaults["CurrencyRate"], defaults["ReciprocalRate"] = r[0], r[1]
			}
		}
		for f, v := range defaults {
			if rec.Fields[f] == nil {
				rec.set(f, v)
			}
		}
		for _, f := range []string{"RequestedOn", "EffectiveDate", "CreatedDate"} {
			if rec.Fields[f] == nil {
				rec.set(f, rec.Time("Date"))
			}
		}
	}
	if _, sent := body["Hold"]; sent || inserting {
		switch {
		case rec.Bool("Hold"):
			rec.set("Status", "On Hold").set("Approved", false)
		case inserting || rec.String("Status") == "On Hold":
			rec.set("Status", "Open").set("Approved", true)
		}
	}
	// Amounts are kept to the order currency's Decimal Precision
	// (Currencies, CM202000): each line's amount is rounded to it, and the
	// totals are sums of rounded amounts.
	places := 2
	if cur := s.findLocked("Currency", rec.String("CurrencyID")); cur != nil && cur.Fields["DecimalPrecision"] != nil {
		places = int(cur.Int("DecimalPrecision"))
	}
	var subtotal, qty Decimal
	lines := rec.Details["Details"] // a copy of the stored slice (clone)
	for i := range lines {
		l := lines[i].clone() // lines are shared with the stored record until saved
		lines[i] = l
		if l.Fields["LineNbr"] == nil {
			l.set("LineNbr", int64(i+1))
		}
		if item := s.findLocked("StockItem", l.String("InventoryID")); item != nil {
			for f, src := range map[string]string{"LineDescription": "Description", "UOM": "SalesUOM", "WarehouseID": "DefaultWarehouseID"} {
				if l.Fields[f] == nil {
					l.set(f, item.String(src))
				}
			}
			if l.Fields["UnitPrice"] == nil {
				// No price list has a price in the order's currency: the
				// item's default price, in the base currency, converted at
				// the order's rate and kept to the column's six places.
				price := item.Decimal("DefaultPrice")
				if rec.String("CurrencyID") != rec.String("BaseCurrencyID") && rec.Fields["ReciprocalRate"] != nil {
					price = price.Mul(rec.Decimal("ReciprocalRate"), 6)
				}
				l.set("UnitPrice", price)
			}
			if l.Fields["UnitCost"] == nil {
				l.set("UnitCost", item.Decimal("AverageCost"))
			}
		}
		if l.Fields["LineType"] == nil {
			l.set("LineType", "Goods for IN").set("Operation", "Issue").set("TaxCategory", "TAXABLE").
				set("DiscountPercent", Decimal(0)).set("DiscountAmount", Decimal(0)).set("Completed", false)
		}
		amount := l.Decimal("UnitPrice").Mul(l.Decimal("OrderQty"), places)
		l.set("Amount", amount).set("ExtendedPrice", amount).set("DiscountedUnitPrice", l.Decimal("UnitPrice"))
		if l.Fields["OpenQty"] == nil { // a new line: nothing shipped or billed yet
			l.set("OpenQty", l.Decimal("OrderQty")).set("UnbilledAmount", amount)
		}
		subtotal += amount
		qty += l.Decimal("OrderQty")
	}
	var rate Decimal
	if cust != nil {
		rate = taxRates[cust.String("TaxZone")]
	}
	tax := subtotal.Mul(rate, places)
	rec.set("OrderedQty", qty).set("TaxTotal", tax).set("OrderTotal", subtotal+tax)
}

// customerRules keeps the two contract fields over one column in step:
// Customer.CreditLimit and CreditVerificationRules.CreditLimit both map
// to the customer's credit limit (endpoint metadata 24.200.001), so a
// write to either shows in both.
func customerRules(rec *Record, body map[string]json.RawMessage) {
	rules := rec.Linked["CreditVerificationRules"]
	var nested bool
	if raw, ok := body["CreditVerificationRules"]; ok {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			_, nested = obj["CreditLimit"]
		}
	}
	switch {
	case rules == nil:
	case nested:
		rec.set("CreditLimit", rules.Fields["CreditLimit"])
	default:
		rules = rules.clone() // shared with the stored record until saved
		rules.set("CreditLimit", rec.Fields["CreditLimit"])
		rec.link("CreditVerificationRules", rules)
	}
}
