package acumaticatest

import (
	"fmt"
	"time"
)

// termsDays maps credit terms to days until due.
var termsDays = map[string]int{"NET30": 30, "NET15": 15, "NET45": 45, "30D": 30, "COD": 0}

// genReceivables: AR invoices and memos (AR301000) with lines, and the
// customer payments that settle them (AR302000).
func (g *gen) genReceivables() {
	payments := 0
	for i := 1; i <= 320; i++ {
		typ := "Invoice"
		switch {
		case i%15 == 0:
			typ = "Credit Memo"
		case i%23 == 0:
			typ = "Debit Memo"
		}
		nbr := fmt.Sprintf("AR%06d", i)
		d := g.day(500 - i*3/2)
		r := g.top("Invoice", typ+"/"+nbr, d.Add(8*time.Hour+time.Duration(i*104729%30000)*time.Second))
		c := g.customers[(i*11)%len(g.customers)]
		terms := c.String("Terms")
		lines := 1 + g.rng.IntN(3)
		var subtotal Decimal
		for n := 1; n <= lines; n++ {
			l := g.line(r, "Details", "InvoiceDetail", n)
			var id, descr, uom string
			var price Decimal
			if n == 1 && i%4 == 0 {
				it := g.nonStockItems[i%len(g.nonStockItems)]
				id, descr, uom, price = it.String("InventoryID"), it.String("Description"), it.String("SalesUnit"), it.Decimal("DefaultPrice")
			} else {
				it := g.stockItems[(i*5+n*17)%len(g.stockItems)]
				id, descr, uom, price = it.String("InventoryID"), it.String("Description"), it.String("SalesUOM"), it.Decimal("DefaultPrice")
			}
			qty := DecimalFromInt(int64(1 + g.rng.IntN(6)))
			amount := price.Mul(qty, 2)
			l.set("LineNbr", int64(n)).set("InventoryID", id).set("TransactionDescription", descr).set("Qty", qty).
				set("UnitPrice", price).set("UOM", uom).set("Amount", amount).set("ExtendedPrice", amount).
				set("DiscountAmount", Decimal(0)).set("Account", "40000").set("Subaccount", "010000").
				set("Branch", branches[i%3]).set("TaxCategory", "TAXABLE").set("CalculateDiscountsOnImport", false).
				set("LastModifiedDateTime", r.Time("LastModifiedDateTime"))
			subtotal += amount
		}
		tax := subtotal.Mul(taxRates[c.String("TaxZone")], 2)
		amount := subtotal + tax
		status, balance := "Open", amount
		switch {
		case i%17 == 0:
			status = "On Hold"
		case i%19 == 0:
			status = "Balanced"
		case i <= 220 && i%3 != 0:
			status, balance = "Closed", 0
		case i%5 == 0:
			balance = amount - amount.Mul(mustDecimal("0.4"), 2)
		}
		r.set("Type", typ).set("ReferenceNbr", nbr).set("Customer", c.String("CustomerID")).set("Date", d).
			set("DueDate", d.AddDate(0, 0, termsDays[terms])).set("PostPeriod", postPeriod(d)).set("Terms", terms).
			set("Status", status).set("Hold", status == "On Hold").set("Amount", amount).set("Balance", balance).
			set("TaxTotal", tax).set("Description", fmt.Sprintf("%s %d for %s", typ, i, c.String("CustomerName"))).
			set("LinkARAccount", "11000").set("LinkBranch", branches[i%3]).set("LocationID", "MAIN").set("Project", "X").
			set("CustomerOrder", fmt.Sprintf("PO-%05d", 3000+i)).set("BillingPrinted", i%2 == 0).set("IsTaxValid", false).
			set("BillToContactOverride", false).set("ShipToContactOverride", false)
		if i%12 == 0 {
			r.Note = "Customer asked for a copy by post."
		}
		bc := g.linked(r, "BillToContact", "DocContact")
		bc.set("BusinessName", c.String("CustomerName")).set("Email", c.String("Email"))
		g.ds.add(r)
		g.invoices = append(g.invoices, r)

		if typ == "Invoice" && amount != balance && status != "On Hold" {
			payments++
			g.payment(r, payments, amount-balance)
		}
	}
}

func (g *gen) payment(inv *Record, seq int, paid Decimal) {
	nbr := fmt.Sprintf("PY%06d", seq)
	d := inv.Time("Date").AddDate(0, 0, 10+seq%20)
	if d.After(g.now) {
		d = g.day(1)
	}
	r := g.top("Payment", "Payment/"+nbr, d.Add(14*time.Hour))
	method := []string{"CHECK", "WIRE", "ACH", "CARD"}[seq%4]
	r.set("Type", "Payment").set("ReferenceNbr", nbr).set("CustomerID", inv.String("Customer")).set("ApplicationDate", d).
		set("PaymentAmount", paid).set("AppliedToDocuments", paid).set("AvailableBalance", Decimal(0)).
		set("AppliedToOrders", Decimal(0)).set("PaymentMethod", method).set("CashAccount", "10200").
		set("PaymentRef", fmt.Sprintf("%s%05d", method[:2], 10000+seq)).set("Status", "Closed").set("Hold", false).
		set("CurrencyID", "USD").set("Description", "Payment for "+inv.String("ReferenceNbr")).
		set("Branch", inv.String("LinkBranch")).set("BranchID", inv.String("LinkBranch")).set("CustomerLocationID", "MAIN").
		set("IsCCPayment", method == "CARD").set("IsNewCard", false).set("SaveCard", false)
	if inv.Decimal("Balance") != 0 {
		r.set("Status", "Closed")
	}
	l := g.line(r, "DocumentsToApply", "PaymentDetail", 1)
	l.set("DocType", "Invoice").set("ReferenceNbr", inv.String("ReferenceNbr")).set("AmountPaid", paid).
		set("CashDiscountTaken", Decimal(0)).set("BalanceWriteOff", Decimal(0)).set("DocLineNbr", int64(0)).
		set("Description", inv.String("Description")).set("CustomerOrder", inv.String("CustomerOrder"))
	g.ds.add(r)
}
