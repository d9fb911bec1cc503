package acumaticatest

import (
	"fmt"
	"time"
)

// taxRates by tax zone.
var taxRates = map[string]Decimal{"NY": mustDecimal("0.08"), "CA": mustDecimal("0.0725"),
	"TX": mustDecimal("0.0625"), "EXEMPT": 0}

// genSales: sales orders with lines, their shipments and SO invoices.
func (g *gen) genSales() {
	soStatus := []string{"Open", "Open", "Completed", "Completed", "Completed", "Shipping", "Back Order", "On Hold", "Canceled", "Completed"}
	shipSeq, invSeq := 0, 0
	for i := 1; i <= 320; i++ {
		typ, nbr := "SO", fmt.Sprintf("SO%06d", i)
		switch {
		case i%29 == 0:
			typ, nbr = "RM", fmt.Sprintf("RM%06d", i)
		case i%41 == 0:
			typ, nbr = "CM", fmt.Sprintf("CM%06d", i)
		}
		daysAgo := 480 - i*3/2
		orderDate := g.day(daysAgo)
		r := g.top("SalesOrder", typ+"/"+nbr, orderDate.Add(9*time.Hour+time.Duration(i*7919%36000)*time.Second))
		c := g.customers[(i*7)%len(g.customers)]
		status := soStatus[i%len(soStatus)]
		if typ != "SO" && status == "Shipping" {
			status = "Open"
		}
		r.set("OrderType", typ).set("OrderNbr", nbr).set("CustomerID", c.String("CustomerID")).set("Date", orderDate).
			set("RequestedOn", orderDate.AddDate(0, 0, 7)).set("EffectiveDate", orderDate).set("CreatedDate", orderDate).
			set("Description", fmt.Sprintf("Order %d for %s", i, c.String("CustomerName"))).set("Status", status).
			set("Hold", status == "On Hold").set("Approved", status != "On Hold").set("CreditHold", false).
			set("CurrencyID", "USD").set("BaseCurrencyID", "USD").set("CurrencyRate", DecimalFromInt(1)).
			set("ReciprocalRate", DecimalFromInt(1)).set("LocationID", "MAIN").set("ShipVia", c.String("ShipVia")).
			set("Branch", branches[i%3]).set("CustomerOrder", fmt.Sprintf("%06d", 77000+i*13)).
			set("PaymentMethod", "CHECK").set("Project", "X").set("IsTaxValid", false).set("WillCall", false).
			set("DisableAutomaticDiscountUpdate", false).set("DisableAutomaticTaxCalculation", false).
			set("BillToAddressOverride", false).set("BillToContactOverride", false).set("ShipToAddressOverride", false).
			set("ShipToContactOverride", false).set("BillToAddressValidated", true).set("ShipToAddressValidated", i%4 != 0).
			set("TaxCalcMode", "Tax Settings").set("ExternalOrderOriginal", false).set("UsrExternalOrderOriginal", false)
		if i%8 == 0 {
			r.set("ExternalRef", fmt.Sprintf("WEB-%05d", i))
		}
		lines := 1 + g.rng.IntN(4)
		var subtotal, qtyTotal Decimal
		for n := 1; n <= lines; n++ {
			it := g.stockItems[(i*13+n*29)%len(g.stockItems)]
			qty := DecimalFromInt(int64(1 + g.rng.IntN(12)))
			price := it.Decimal("DefaultPrice")
			amount := price.Mul(qty, 2)
			l := g.line(r, "Details", "SalesOrderDetail", n)
			open := qty
			if status == "Completed" || status == "Canceled" {
				open = 0
			}
			l.set("LineNbr", int64(n)).set("InventoryID", it.String("InventoryID")).set("LineDescription", it.String("Description")).
				set("OrderQty", qty).set("OpenQty", open).set("UnitPrice", price).set("UOM", it.String("SalesUOM")).
				set("WarehouseID", it.String("DefaultWarehouseID")).set("LineType", "Goods for IN").set("Amount", amount).
				set("ExtendedPrice", amount).set("DiscountPercent", Decimal(0)).set("DiscountAmount", Decimal(0)).
				set("DiscountedUnitPrice", price).set("UnitCost", it.Decimal("AverageCost")).set("TaxCategory", "TAXABLE").
				set("Branch", r.String("Branch")).set("Account", "40000").set("ShipOn", orderDate.AddDate(0, 0, 5)).
				set("RequestedOn", orderDate.AddDate(0, 0, 7)).set("Completed", status == "Completed").
				set("QtyOnShipments", qty.Sub(open)).set("UnbilledAmount", amount).set("Operation", "Issue").
				set("ShippingRule", "Cancel Remainder").set("FreeItem", false).set("ManualDiscount", false).
				set("ManualPrice", false).set("MarkForPO", false).set("Commissionable", true).set("AutoCreateIssue", false).
				set("CalculateDiscountsOnImport", false).set("OvershipThreshold", DecimalFromInt(100)).
				set("UndershipThreshold", DecimalFromInt(100)).
				set("LastModifiedDate", r.Time("LastModified").Format("01/02/2006 15:04:05"))
			subtotal += amount
			qtyTotal += qty
		}
		tax := subtotal.Mul(taxRates[c.String("TaxZone")], 2)
		r.set("TaxTotal", tax).set("OrderTotal", subtotal+tax).set("ControlTotal", subtotal+tax).set("OrderedQty", qtyTotal).
			set("VATExemptTotal", Decimal(0)).set("VATTaxableTotal", Decimal(0))
		addr := c.Link("MainContact").Link("Address")
		r.link("ShipToAddress", addr)
		r.link("BillToAddress", addr)
		bc := g.linked(r, "BillToContact", "DocContact")
		bc.set("BusinessName", c.String("CustomerName")).set("Email", c.String("Email")).
			set("Attention", c.Link("MainContact").String("DisplayName")).set("Phone1", c.Link("MainContact").String("Phone1"))
		g.ds.add(r)
		g.salesOrders = append(g.salesOrders, r)

		if typ == "SO" && (status == "Completed" || status == "Shipping") && shipSeq < 160 {
			shipSeq++
			g.shipment(r, shipSeq, status)
			if status == "Completed" && invSeq < 90 {
				invSeq++
				g.salesInvoice(r, invSeq)
			}
		}
	}
}

func (g *gen) shipment(so *Record, seq int, soStatus string) {
	nbr := fmt.Sprintf("SH%06d", seq)
	shipDate := so.Time("Date").AddDate(0, 0, 3)
	r := g.top("Shipment", nbr, shipDate.Add(10*time.Hour))
	status := "Completed"
	if soStatus == "Shipping" {
		status = []string{"Open", "Confirmed"}[seq%2]
	}
	var qty Decimal
	for n, sl := range so.Detail("Details") {
		l := g.line(r, "Details", "ShipmentDetail", n+1)
		q := sl.Decimal("OrderQty")
		l.set("LineNbr", int64(n+1)).set("InventoryID", sl.String("InventoryID")).set("Description", sl.String("LineDescription")).
			set("OrderType", so.String("OrderType")).set("OrderNbr", so.String("OrderNbr")).set("OrderLineNbr", sl.Int("LineNbr")).
			set("ShippedQty", q).set("OrderedQty", q).set("OriginalQty", q).set("OpenQty", Decimal(0)).set("UOM", sl.String("UOM")).
			set("WarehouseID", sl.String("WarehouseID")).set("LocationID", "STOCK").set("FreeItem", false)
		qty += q
	}
	o := g.line(r, "Orders", "ShipmentOrderDetail", 1)
	o.set("OrderType", so.String("OrderType")).set("OrderNbr", so.String("OrderNbr")).set("ShipmentNbr", nbr).
		set("ShipmentType", "Shipment").set("ShippedQty", qty).set("ShippedWeight", Decimal(0)).set("ShippedVolume", Decimal(0)).
		set("OrderNoteID", so.ID)
	r.set("ShipmentNbr", nbr).set("Type", "Shipment").set("Status", status).set("CustomerID", so.String("CustomerID")).
		set("LocationID", "MAIN").set("WarehouseID", so.Detail("Details")[0].String("WarehouseID")).set("ShipmentDate", shipDate).
		set("EffectiveDate", shipDate).set("Operation", "Issue").set("ShipVia", so.String("ShipVia")).set("ShippedQty", qty).
		set("ControlQty", qty).set("Hold", false).set("Picked", status != "Open").set("BaseCurrencyID", "USD").
		set("CurrencyRate", DecimalFromInt(1)).set("ReciprocalRate", DecimalFromInt(1)).set("FreightPrice", Decimal(0)).
		set("FreightCost", Decimal(0)).set("FreightCurrencyID", "USD").set("PackageCount", int64(1+seq%3)).
		set("PackageWeight", DecimalFromInt(int64(2+seq%20))).set("ShippedWeight", DecimalFromInt(int64(2+seq%20))).
		set("Description", "Shipment for "+so.String("OrderNbr")).set("Owner", g.pickRec(g.employees).String("EmployeeName")).
		set("GroundCollect", false).set("Insurance", false).set("ResidentialDelivery", false).set("SaturdayDelivery", false).
		set("UseCustomersAccount", false).set("UnlimitedPackages", false).set("CreateNewShipmentForEveryOrder", false)
	g.ds.add(r)
	sl := g.line(so, "Shipments", "SalesOrderShipment", 1)
	sl.set("ShipmentNbr", nbr).set("ShipmentType", "Shipment").set("ShipmentDate", shipDate).set("Status", status).
		set("ShippedQty", qty).set("ShippedWeight", Decimal(0)).set("ShippedVolume", Decimal(0)).set("OrderNoteID", so.ID).
		set("ShippingNoteID", r.ID)
}

func (g *gen) salesInvoice(so *Record, seq int) {
	nbr := fmt.Sprintf("INV%06d", seq)
	d := so.Time("Date").AddDate(0, 0, 4)
	r := g.top("SalesInvoice", "Invoice/"+nbr, d.Add(11*time.Hour))
	var detail Decimal
	for n, sl := range so.Detail("Details") {
		l := g.line(r, "Details", "SalesInvoiceDetail", n+1)
		l.set("LineNbr", int64(n+1)).set("InventoryID", sl.String("InventoryID")).set("TransactionDescr", sl.String("LineDescription")).
			set("Qty", sl.Decimal("OrderQty")).set("UnitPrice", sl.Decimal("UnitPrice")).set("Amount", sl.Decimal("Amount")).
			set("UOM", sl.String("UOM")).set("WarehouseID", sl.String("WarehouseID")).set("OrderType", so.String("OrderType")).
			set("OrderNbr", so.String("OrderNbr")).set("OrderLineNbr", sl.Int("LineNbr")).set("BranchID", so.String("Branch")).
			set("Account", "40000").set("SubAccount", "010000").set("TaxCategory", "TAXABLE").set("DiscountAmount", Decimal(0)).
			set("DiscountPercent", Decimal(0)).set("ManualDiscount", false).set("ManualPrice", false).set("NoteID", l.ID)
		detail += sl.Decimal("Amount")
	}
	amount := so.Decimal("OrderTotal")
	balance := amount
	status := "Open"
	if seq%3 == 0 {
		balance, status = 0, "Closed"
	}
	r.set("Type", "Invoice").set("ReferenceNbr", nbr).set("CustomerID", so.String("CustomerID")).set("Date", d).
		set("DueDate", d.AddDate(0, 0, 30)).set("Status", status).set("Amount", amount).set("Balance", balance).
		set("DetailTotal", detail).set("TaxTotal", so.Decimal("TaxTotal")).set("DiscountTotal", Decimal(0)).
		set("FreightPrice", Decimal(0)).set("PaymentTotal", amount-balance).set("CashDiscount", Decimal(0)).
		set("Currency", "USD").set("Hold", false).set("CreditHold", false).set("IsTaxValid", false).
		set("CustomerOrder", so.String("CustomerOrder")).set("Description", so.String("Description")).
		set("Project", "X").set("CreatedDate", d).set("LastModifiedDate", r.Time("LastModifiedDateTime")).
		set("VATExemptTotal", Decimal(0)).set("VATTaxableTotal", Decimal(0)).set("TaxCalcMode", "Tax Settings").
		set("BillToAddressOverride", false).set("BillToContactOverride", false).set("ShipToAddressOverride", false).
		set("ShipToContactOverride", false)
	g.ds.add(r)
}
