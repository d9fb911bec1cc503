package acumaticatest

import (
	"fmt"
	"time"
)

// genInventoryDocuments: inventory receipts and issues with lines.
func (g *gen) genInventoryDocuments() {
	statuses := []string{"Released", "Released", "Balanced", "On Hold"}
	for i := 1; i <= 40; i++ {
		nbr := fmt.Sprintf("IR%06d", i)
		d := g.day(400 - i*9)
		r := g.top("InventoryReceipt", nbr, d.Add(9*time.Hour))
		var qty, cost Decimal
		for n := 1; n <= 1+i%3; n++ {
			it := g.stockItems[(i*23+n*11)%len(g.stockItems)]
			q := DecimalFromInt(int64(10 + (i*n)%40))
			uc := it.Decimal("AverageCost")
			ext := uc.Mul(q, 2)
			l := g.line(r, "Details", "InventoryReceiptDetail", n)
			l.set("LineNumber", int64(n)).set("InventoryID", it.String("InventoryID")).set("Description", it.String("Description")).
				set("Qty", q).set("UnitCost", uc).set("ExtCost", ext).set("UOM", it.String("BaseUOM")).
				set("WarehouseID", it.String("DefaultWarehouseID")).set("Location", "STOCK").set("CostLayerType", "Normal")
			qty += q
			cost += ext
		}
		status := statuses[i%len(statuses)]
		r.set("ReferenceNbr", nbr).set("Date", d).set("Status", status).set("Hold", status == "On Hold").
			set("PostPeriod", postPeriod(d)).set("Description", "Stock receipt "+nbr).set("TotalQty", qty).set("ControlQty", qty).
			set("TotalCost", cost).set("ControlCost", cost)
		g.ds.add(r)
	}
	for i := 1; i <= 40; i++ {
		nbr := fmt.Sprintf("II%06d", i)
		d := g.day(390 - i*9)
		r := g.top("InventoryIssue", nbr, d.Add(11*time.Hour))
		var qty, cost, amt Decimal
		for n := 1; n <= 1+i%2; n++ {
			it := g.stockItems[(i*31+n*5)%len(g.stockItems)]
			q := DecimalFromInt(int64(1 + (i+n)%12))
			l := g.line(r, "Details", "InventoryIssueDetail", n)
			ext := it.Decimal("AverageCost").Mul(q, 2)
			price := it.Decimal("DefaultPrice")
			l.set("LineNumber", int64(n)).set("InventoryID", it.String("InventoryID")).set("Description", it.String("Description")).
				set("Qty", q).set("UnitCost", it.Decimal("AverageCost")).set("ExtCost", ext).set("UnitPrice", price).
				set("ExtPrice", price.Mul(q, 2)).set("UOM", it.String("BaseUOM")).set("WarehouseID", it.String("DefaultWarehouseID")).
				set("Location", "STOCK").set("TranType", "Issue").set("Branch", branches[i%3]).set("CostLayerType", "Normal")
			qty += q
			cost += ext
			amt += price.Mul(q, 2)
		}
		status := statuses[(i+1)%len(statuses)]
		r.set("ReferenceNbr", nbr).set("Date", d).set("Status", status).set("PostPeriod", postPeriod(d)).
			set("Description", "Stock issue "+nbr).set("TotalQty", qty).set("ControlQty", qty).set("TotalCost", cost).
			set("TotalAmount", amt).set("ControlAmount", amt).set("ExternalRef", fmt.Sprintf("WO-%04d", i))
		g.ds.add(r)
	}
}

// genTimeAndExpenses: time entries, expense receipts and expense claims.
func (g *gen) genTimeAndExpenses() {
	approval := []string{"Approved", "Approved", "Pending Approval", "Open", "Released", "Rejected"}
	for i := 1; i <= 150; i++ {
		emp := g.employees[i%19]
		prj := g.projects[i%len(g.projects)]
		d := g.day(180 - i)
		key := fmt.Sprintf("time-%d", i)
		r := g.top("TimeEntry", key, d.Add(17*time.Hour))
		minutes := 30 * (1 + i%12)
		spent := fmt.Sprintf("%02d:%02d", minutes/60, minutes%60)
		billable := i%3 != 0
		billableTime := "00:00"
		if billable {
			billableTime = spent
		}
		r.set("TimeEntryID", r.ID).set("Employee", emp.String("EmployeeID")).set("Date", d).set("Time", d.Add(9*time.Hour)).
			set("ProjectID", prj.String("ProjectID")).set("ProjectTaskID", "01").set("Summary", fmt.Sprintf("Work on %s", prj.String("ProjectID"))).
			set("TimeSpent", spent).set("BillableTime", billableTime).set("Overtime", "00:00").set("BillableOvertime", "00:00").
			set("Billable", billable).set("ApprovalStatus", approval[i%len(approval)]).set("EarningType", "RG").
			set("CostRate", DecimalFromInt(int64(35+i%40))).set("LaborItem", "LABOR").set("CertifiedJob", false).
			set("Approver", g.employees[0].String("EmployeeID"))
		g.ds.add(r)
	}
	items := [][3]string{{"MEALS", "Business meal", "68000"}, {"TRAVEL", "Air fare", "64000"},
		{"HOTEL", "Hotel stay", "64000"}, {"MILEAGE", "Mileage", "64000"}, {"SUPPLIES", "Office supplies", "63000"}}
	claimStatus := []string{"Released", "Approved", "Pending Approval", "On Hold", "Rejected"}
	receiptSeq := 0
	for i := 1; i <= 40; i++ {
		nbr := fmt.Sprintf("EXP%06d", i)
		emp := g.employees[(i*3)%19]
		d := g.day(300 - i*7)
		r := g.top("ExpenseClaim", nbr, d.Add(16*time.Hour))
		status := claimStatus[i%len(claimStatus)]
		var total Decimal
		for n := 1; n <= 2; n++ {
			it := items[(i+n)%len(items)]
			receiptSeq++
			amt := g.cents(15, 600)
			rid := fmt.Sprintf("ER%06d", receiptSeq)
			l := g.line(r, "Details", "ExpenseClaimDetails", n)
			l.set("Date", d.AddDate(0, 0, -n)).set("ExpenseItemID", it[0]).set("Description", it[1]).set("Qty", DecimalFromInt(1)).
				set("UnitCost", amt).set("Amount", amt).set("ClaimAmount", amt).set("AmountInClaimCurrency", amt).
				set("NetAmount", amt).set("EmployeePart", Decimal(0)).set("TaxAmount", Decimal(0)).set("TipAmount", Decimal(0)).
				set("CurrencyID", "USD").set("ExpenseAccount", it[2]).set("ExpenseSubaccount", "030000").set("Branch", branches[i%3]).
				set("UOM", "EA").set("RefNbr", rid).set("Status", status).set("ProjectID", "X").set("Billable", false).
				set("TaxCategory", "EXEMPT")
			total += amt
			g.expenseReceipt(rid, l, emp, nbr, status)
		}
		r.set("RefNbr", nbr).set("ClaimedBy", emp.String("EmployeeID")).set("Date", d).set("Status", status).
			set("Description", fmt.Sprintf("Expenses of %s", emp.String("EmployeeName"))).set("CurrencyID", "USD").
			set("BaseCurrencyID", "USD").set("CurrencyRate", DecimalFromInt(1)).set("ReciprocalRate", DecimalFromInt(1)).
			set("ClaimTotal", total).set("TaxTotal", Decimal(0)).set("VATExemptTotal", Decimal(0)).
			set("VATTaxableTotal", Decimal(0)).set("DepartmentID", "ADMIN").set("LocationID", "MAIN")
		if status == "Released" || status == "Approved" {
			r.set("ApprovalDate", d.AddDate(0, 0, 2))
		}
		g.ds.add(r)
	}
	for i := receiptSeq + 1; i <= receiptSeq+40; i++ { // receipts not yet claimed
		it := items[i%len(items)]
		emp := g.employees[i%19]
		rid := fmt.Sprintf("ER%06d", i)
		d := g.day(60 - (i - receiptSeq))
		r := g.top("ExpenseReceipt", rid, d.Add(12*time.Hour))
		amt := g.cents(10, 300)
		r.set("ReceiptID", rid).set("Date", d).set("ClaimedBy", emp.String("EmployeeID")).set("ExpenseItemID", it[0]).
			set("ClaimAmount", amt).set("TaxTotal", Decimal(0)).set("Status", "Open").set("Branch", branches[i%3])
		rd := g.linked(r, "ReceiptDetails", "ExpenseReceiptDetails")
		rd.set("Description", it[1]).set("Qty", DecimalFromInt(1)).set("UnitCost", amt).set("Amount", amt).
			set("CurrencyID", "USD").set("BaseCurrencyID", "USD").set("ExpenseAccount", it[2]).set("ExpenseSubaccount", "030000").
			set("UOM", "EA").set("Billable", false).set("ProjectID", "X")
		g.ds.add(r)
	}
}

func (g *gen) expenseReceipt(rid string, line, emp *Record, claim, status string) {
	d := line.Time("Date")
	r := g.top("ExpenseReceipt", rid, d.Add(12*time.Hour))
	amt := line.Decimal("Amount")
	rstatus := "Released"
	if status != "Released" {
		rstatus = "Pending"
	}
	r.set("ReceiptID", rid).set("Date", d).set("ClaimedBy", emp.String("EmployeeID")).set("ExpenseItemID", line.String("ExpenseItemID")).
		set("ClaimAmount", amt).set("TaxTotal", Decimal(0)).set("Status", rstatus).set("Branch", line.String("Branch"))
	rd := g.linked(r, "ReceiptDetails", "ExpenseReceiptDetails")
	rd.set("Description", line.String("Description")).set("Qty", DecimalFromInt(1)).set("UnitCost", amt).set("Amount", amt).
		set("CurrencyID", "USD").set("BaseCurrencyID", "USD").set("ExpenseAccount", line.String("ExpenseAccount")).
		set("ExpenseSubaccount", "030000").set("UOM", "EA").set("ExpenseClaimID", claim).set("ExpenseClaimStatus", status).
		set("Billable", false).set("ProjectID", "X").set("RefNbr", rid)
	g.ds.add(r)
}

// genJournal: balanced GL batches (GL, AR and AP modules).
func (g *gen) genJournal() {
	statuses := []string{"Posted", "Posted", "Posted", "Unposted", "Balanced", "On Hold"}
	pairs := [][2]string{{"61000", "10200"}, {"62000", "10200"}, {"11000", "40000"}, {"13000", "20000"},
		{"60000", "21000"}, {"66000", "15000"}, {"10200", "11000"}, {"20000", "10200"}}
	for i := 1; i <= 100; i++ {
		module := "GL"
		switch {
		case i%7 == 0:
			module = "AR"
		case i%7 == 3:
			module = "AP"
		}
		nbr := fmt.Sprintf("%s%06d", module, i)
		d := g.day(420 - i*4)
		r := g.top("JournalTransaction", module+"/"+nbr, d.Add(18*time.Hour))
		status := statuses[i%len(statuses)]
		for n := 0; n < 1+i%2; n++ {
			p := pairs[(i+n)%len(pairs)]
			amt := g.cents(100, 25000)
			dr := g.line(r, "Details", "JournalTransactionDetail", 2*n+1)
			dr.set("LineNbr", int64(2*n+1)).set("Account", p[0]).set("Subaccount", "000000").set("BranchID", branches[i%3]).
				set("DebitAmount", amt).set("CreditAmount", Decimal(0)).set("TransactionDescription", "Batch "+nbr).
				set("Description", "Batch "+nbr).set("Qty", Decimal(0)).set("Project", "X").set("IsNonPM", true).set("NonBillable", false)
			cr := g.line(r, "Details", "JournalTransactionDetail", 2*n+2)
			cr.set("LineNbr", int64(2*n+2)).set("Account", p[1]).set("Subaccount", "000000").set("BranchID", branches[i%3]).
				set("DebitAmount", Decimal(0)).set("CreditAmount", amt).set("TransactionDescription", "Batch "+nbr).
				set("Description", "Batch "+nbr).set("Qty", Decimal(0)).set("Project", "X").set("IsNonPM", true).set("NonBillable", false)
		}
		r.set("Module", module).set("BatchNbr", nbr).set("Description", fmt.Sprintf("%s batch %d", module, i)).
			set("Status", status).set("Hold", status == "On Hold").set("PostPeriod", postPeriod(d)).set("TransactionDate", d).
			set("LedgerID", "ACTUAL").set("CurrencyID", "USD").set("BranchID", branches[i%3])
		g.ds.add(r)
	}
}
