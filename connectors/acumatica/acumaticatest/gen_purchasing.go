package acumaticatest

import (
	"fmt"
	"time"
)

// genPurchasing: purchase orders with lines and their receipts.
func (g *gen) genPurchasing() {
	poStatus := []string{"Open", "Closed", "Closed", "On Hold", "Pending Approval", "Completed", "Canceled"}
	receipts := 0
	for i := 1; i <= 120; i++ {
		nbr := fmt.Sprintf("PO%06d", i)
		d := g.day(450 - i*3)
		r := g.top("PurchaseOrder", "Normal/"+nbr, d.Add(9*time.Hour+time.Duration(i*331%20000)*time.Second))
		v := g.vendors[(i*5)%len(g.vendors)]
		status := poStatus[i%len(poStatus)]
		var total Decimal
		for n := 1; n <= 1+g.rng.IntN(4); n++ {
			it := g.stockItems[(i*19+n*7)%len(g.stockItems)]
			qty := DecimalFromInt(int64(5 + g.rng.IntN(50)))
			cost := it.Decimal("AverageCost")
			ext := cost.Mul(qty, 2)
			received := Decimal(0)
			if status == "Closed" || status == "Completed" {
				received = qty
			}
			l := g.line(r, "Details", "PurchaseOrderDetail", n)
			l.set("LineNbr", int64(n)).set("InventoryID", it.String("InventoryID")).set("LineDescription", it.String("Description")).
				set("Description", it.String("Description")).set("LineType", "Goods for IN").set("OrderQty", qty).
				set("OrderedQty", qty).set("UnitCost", cost).set("ExtendedCost", ext).set("UOM", it.String("PurchaseUOM")).
				set("WarehouseID", it.String("DefaultWarehouseID")).set("Account", "20150").set("Subaccount", "000000").
				set("BranchID", branches[i%3]).set("Promised", d.AddDate(0, 0, 10)).set("Requested", d.AddDate(0, 0, 10)).
				set("QtyOnReceipts", received).set("ReceivedAmount", cost.Mul(received, 2)).set("Completed", received == qty).
				set("Cancelled", status == "Canceled").set("OrderType", "Normal").set("OrderNbr", nbr).
				set("MinReceiptPercent", DecimalFromInt(0)).set("MaxReceiptPercent", DecimalFromInt(100)).
				set("CompleteOn", DecimalFromInt(100)).set("ReceiptAction", "Accept but Warn").set("TaxCategory", "TAXABLE").
				set("CalculateDiscountsOnImport", false)
			total += ext
		}
		r.set("Type", "Normal").set("OrderNbr", nbr).set("VendorID", v.String("VendorID")).set("Date", d).
			set("PromisedOn", d.AddDate(0, 0, 10)).set("Status", status).set("Hold", status == "On Hold").
			set("LineTotal", total).set("TaxTotal", Decimal(0)).set("OrderTotal", total).set("ControlTotal", total).
			set("CurrencyID", "USD").set("BaseCurrencyID", "USD").set("CurrencyRate", DecimalFromInt(1)).
			set("CurrencyReciprocalRate", DecimalFromInt(1)).set("CurrencyEffectiveDate", d).set("CurrencyRateTypeID", "SPOT").
			set("Branch", branches[i%3]).set("Location", "MAIN").set("Terms", v.String("Terms")).
			set("Owner", g.pickRec(g.employees).String("EmployeeName")).set("Description", "Replenishment order "+nbr).
			set("VendorRef", fmt.Sprintf("VQ-%05d", 9000+i)).set("Project", "X").set("IsTaxValid", false).
			set("VendorTaxZone", v.String("TaxZone"))
		g.ds.add(r)
		if (status == "Closed" || status == "Completed") && receipts < 80 {
			receipts++
			g.purchaseReceipt(r, receipts)
		}
	}
}

func (g *gen) purchaseReceipt(po *Record, seq int) {
	nbr := fmt.Sprintf("PR%06d", seq)
	d := po.Time("Date").AddDate(0, 0, 8)
	r := g.top("PurchaseReceipt", "Receipt/"+nbr, d.Add(13*time.Hour))
	var qty, cost Decimal
	for n, pl := range po.Detail("Details") {
		l := g.line(r, "Details", "PurchaseReceiptDetail", n+1)
		q := pl.Decimal("OrderQty")
		l.set("LineNbr", int64(n+1)).set("InventoryID", pl.String("InventoryID")).set("TransactionDescription", pl.String("LineDescription")).
			set("LineType", "Goods for IN").set("ReceiptQty", q).set("OrderedQty", q).set("OpenQty", Decimal(0)).
			set("UnitCost", pl.Decimal("UnitCost")).set("ExtendedCost", pl.Decimal("ExtendedCost")).set("UOM", pl.String("UOM")).
			set("Warehouse", pl.String("WarehouseID")).set("Location", "RECEIVING").set("POOrderType", "Normal").
			set("POOrderNbr", po.String("OrderNbr")).set("POLineNbr", pl.Int("LineNbr")).set("Branch", po.String("Branch")).
			set("Account", "13000").set("Subaccount", "040000").set("EditableUnitCost", false)
		qty += q
		cost += pl.Decimal("ExtendedCost")
	}
	r.set("Type", "Receipt").set("ReceiptNbr", nbr).set("VendorID", po.String("VendorID")).set("Date", d).
		set("Status", "Released").set("Hold", false).set("PostPeriod", postPeriod(d)).set("Warehouse", po.Detail("Details")[0].String("WarehouseID")).
		set("Branch", po.String("Branch")).set("Location", "MAIN").set("CurrencyID", "USD").set("BaseCurrencyID", "USD").
		set("CurrencyRate", DecimalFromInt(1)).set("CurrencyReciprocalRate", DecimalFromInt(1)).set("CurrencyEffectiveDate", d).
		set("CurrencyRateTypeID", "SPOT").set("TotalQty", qty).set("ControlQty", qty).set("TotalCost", cost).
		set("UnbilledQuantity", Decimal(0)).set("CreateBill", true).set("BillDate", d).
		set("VendorRef", po.String("VendorRef")).set("ProcessReturnWithOriginalCost", false)
	g.ds.add(r)
}

// genPayables: AP bills and adjustments (AP301000) with lines, and the
// checks that pay them (AP302000).
func (g *gen) genPayables() {
	checks := 0
	expense := [][2]string{{"61000", "Office rent"}, {"62000", "Utilities"}, {"63000", "Office supplies"},
		{"64000", "Travel"}, {"65000", "Professional fees"}, {"13000", "Inventory purchase"}, {"50100", "Freight"}}
	for i := 1; i <= 220; i++ {
		typ := "Bill"
		switch {
		case i%17 == 0:
			typ = "Debit Adj."
		case i%29 == 0:
			typ = "Credit Adj."
		}
		nbr := fmt.Sprintf("AP%06d", i)
		d := g.day(480 - i*2)
		r := g.top("Bill", typ+"/"+nbr, d.Add(10*time.Hour+time.Duration(i*7907%25000)*time.Second))
		v := g.vendors[(i*3)%len(g.vendors)]
		var amount Decimal
		for n := 1; n <= 1+g.rng.IntN(3); n++ {
			e := expense[(i+n)%len(expense)]
			l := g.line(r, "Details", "BillDetail", n)
			qty := DecimalFromInt(int64(1 + g.rng.IntN(5)))
			cost := g.cents(20, 900)
			ext := cost.Mul(qty, 2)
			l.set("Account", e[0]).set("Subaccount", "000000").set("TransactionDescription", e[1]).set("Description", e[1]).
				set("Qty", qty).set("UnitCost", cost).set("ExtendedCost", ext).set("Amount", ext).set("UOM", "EA").
				set("Branch", branches[i%3]).set("TaxCategory", "EXEMPT").set("Project", "X").set("NonBillable", false).
				set("CalculateDiscountsOnImport", false)
			if e[0] == "13000" {
				it := g.stockItems[(i*3+n)%len(g.stockItems)]
				l.set("InventoryID", it.String("InventoryID")).set("UOM", it.String("PurchaseUOM"))
			}
			amount += ext
		}
		status, balance := "Open", amount
		switch {
		case i%13 == 0:
			status = "On Hold"
		case i%31 == 0:
			status = "Balanced"
		case i <= 150 && i%4 != 0:
			status, balance = "Closed", 0
		}
		r.set("Type", typ).set("ReferenceNbr", nbr).set("Vendor", v.String("VendorID")).set("VendorRef", fmt.Sprintf("INV-%06d", 40000+i*7)).
			set("Date", d).set("DueDate", d.AddDate(0, 0, termsDays[v.String("Terms")])).set("PostPeriod", postPeriod(d)).
			set("Status", status).set("Hold", status == "On Hold").set("Amount", amount).set("Balance", balance).
			set("TaxTotal", Decimal(0)).set("Terms", v.String("Terms")).set("BranchID", branches[i%3]).set("CurrencyID", "USD").
			set("Description", fmt.Sprintf("%s from %s", typ, v.String("VendorName"))).set("ApprovedForPayment", status != "On Hold").
			set("LocationID", "MAIN").set("Project", "X").set("CashAccount", "10200").set("IsTaxValid", false)
		g.ds.add(r)
		g.bills = append(g.bills, r)
		if typ == "Bill" && status == "Closed" {
			checks++
			g.check(r, checks, amount)
		}
	}
}

func (g *gen) check(bill *Record, seq int, paid Decimal) {
	nbr := fmt.Sprintf("CK%06d", seq)
	d := bill.Time("Date").AddDate(0, 0, 15)
	if d.After(g.now) {
		d = g.day(1)
	}
	r := g.top("Check", "Payment/"+nbr, d.Add(15*time.Hour))
	r.set("Type", "Payment").set("ReferenceNbr", nbr).set("Vendor", bill.String("Vendor")).set("ApplicationDate", d).
		set("PaymentAmount", paid).set("UnappliedBalance", Decimal(0)).set("PaymentMethod", "CHECK").set("CashAccount", "10200").
		set("PaymentRef", fmt.Sprintf("%06d", 5000+seq)).set("Status", "Closed").set("Hold", false).set("CurrencyID", "USD").
		set("Description", "Payment of "+bill.String("ReferenceNbr"))
	l := g.line(r, "Details", "CheckDetail", 1)
	l.set("DocType", "Bill").set("ReferenceNbr", bill.String("ReferenceNbr")).set("AmountPaid", paid).
		set("Balance", Decimal(0)).set("CashDiscountBalance", Decimal(0)).set("DocLineNbr", int64(0))
	g.ds.add(r)
}
