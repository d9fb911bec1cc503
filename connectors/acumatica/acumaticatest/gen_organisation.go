package acumaticatest

import (
	"fmt"
	"time"
)

// Branches of the demo company (CompaniesStructure is an inquiry entity;
// documents carry the branch code).
var branches = []string{"HEADOFFICE", "EAST", "WEST"}

// baseCurrency is the demo company's base currency: its actual ledger's
// currency, and the currency of its items' default prices and costs.
const baseCurrency = "USD"

// currencyRates are the demo company's exchange rates of the other
// currencies (Currency Rates, CM301000, which the Default endpoint does
// not expose): the base currency's units a unit of the currency is worth,
// and its reciprocal, the currency's units a base unit buys. A new
// document in the currency takes them as its CurrencyRate and
// ReciprocalRate.
var currencyRates = map[string][2]Decimal{
	"EUR": {mustDecimal("1.25"), mustDecimal("0.8")},
	"GBP": {mustDecimal("1.6"), mustDecimal("0.625")},
	"CAD": {mustDecimal("0.8"), mustDecimal("1.25")},
	"JPY": {mustDecimal("0.008"), DecimalFromInt(125)},
	"KWD": {mustDecimal("3.2"), mustDecimal("0.3125")},
}

// genOrganisation: currencies, employees, salespersons, payment methods,
// ship-via codes and the tax setup.
func (g *gen) genOrganisation() {
	// Decimal Precision is how many places Acumatica keeps of an amount
	// in the currency (a line's amount, a document's totals): the yen has
	// none, the Kuwaiti dinar three.
	for i, c := range []struct {
		id, name, symbol string
		prec             int64
	}{{"USD", "US Dollar", "$", 2}, {"EUR", "Euro", "€", 2}, {"GBP", "Pound Sterling", "£", 2},
		{"CAD", "Canadian Dollar", "C$", 2}, {"JPY", "Japanese Yen", "¥", 0}, {"KWD", "Kuwaiti Dinar", "KD", 3}} {
		r := g.top("Currency", c.id, g.stamp(900+i))
		r.set("CurrencyID", c.id).set("Description", c.name).set("CurrencySymbol", c.symbol).
			set("DecimalPrecision", c.prec).set("Active", true).set("UseForAccounting", c.id == "USD")
		g.ds.add(r)
	}
	for i := 1; i <= 20; i++ {
		first, last := personName(i + 3)
		id := fmt.Sprintf("EP%08d", i)
		r := g.top("Employee", id, g.stamp(800-i*10))
		r.set("EmployeeID", id).set("EmployeeName", first+" "+last).set("Status", "Active")
		if i == 20 {
			r.set("Status", "Inactive")
		}
		ci := g.linked(r, "ContactInfo", "Contact")
		ci.set("FirstName", first).set("LastName", last).set("DisplayName", first+" "+last).
			set("Email", fmt.Sprintf("%s.%s@demo-company.com", lower(first), lower(last))).
			set("Phone1", fmt.Sprintf("+1 (555) 010-%04d", i)).set("Active", i != 20)
		g.employees = append(g.employees, g.ds.add(r))
	}
	for i := 1; i <= 8; i++ {
		first, last := personName(i * 3)
		id := fmt.Sprintf("SP%04d", i)
		r := g.top("Salesperson", id, g.stamp(700-i))
		r.set("SalespersonID", id).set("Name", first+" "+last).set("IsActive", i != 8).
			set("DefaultCommission", DecimalFromInt(int64(2+i%4))).set("SalesSubaccount", "000000")
		g.salespersons = append(g.salespersons, g.ds.add(r))
	}
	for i, pm := range [][3]string{{"CHECK", "Check", "Cash/Check"}, {"CASH", "Cash", "Cash/Check"},
		{"CARD", "Credit Card", "Credit Card"}, {"WIRE", "Wire Transfer", "Direct Deposit"}, {"ACH", "ACH Transfer", "Direct Deposit"}} {
		r := g.top("PaymentMethod", pm[0], g.stamp(880+i))
		r.set("PaymentMethodID", pm[0]).set("Description", pm[1]).set("MeansOfPayment", pm[2]).
			set("Active", true).set("UseInAR", true).set("UseInAP", pm[0] != "CARD").set("IntegratedProcessing", pm[0] == "CARD")
		g.ds.add(r)
	}
	for i, sv := range [][3]string{{"TRUCK", "Company truck", "Manual"}, {"FEDEX", "FedEx Ground", "Net"},
		{"UPS", "UPS Ground", "Net"}, {"LOCAL", "Local courier", "Gross"}, {"PICKUP", "Customer pick-up", "Manual"}} {
		r := g.top("ShipVia", sv[0], g.stamp(870+i))
		r.set("CarrierID", sv[0]).set("Description", sv[1]).set("CalculationMethod", sv[2]).
			set("CommonCarrier", sv[0] == "FEDEX" || sv[0] == "UPS").set("TaxCategory", "TAXABLE").
			set("FreightSalesAccount", "40100").set("FreightSalesSubaccount", "000000").
			set("FreightExpenseAccount", "50100").set("FreightExpenseSubaccount", "000000")
		g.ds.add(r)
	}
	for i, tc := range [][2]string{{"TAXABLE", "Taxable goods and services"}, {"EXEMPT", "Tax exempt"}} {
		r := g.top("TaxCategory", tc[0], g.stamp(860+i))
		r.set("TaxCategoryID", tc[0]).set("Description", tc[1]).set("Active", true).set("ExcludeListedTaxes", tc[0] == "EXEMPT")
		g.ds.add(r)
	}
	for i, tx := range [][3]string{{"NYSTATE", "New York State Sales Tax", "Sales"}, {"CASTATE", "California Sales Tax", "Sales"},
		{"TXSTATE", "Texas Sales Tax", "Sales"}, {"EUVAT", "EU VAT 20%", "VAT"}} {
		r := g.top("Tax", tx[0], g.stamp(850+i))
		r.set("TaxID", tx[0]).set("Description", tx[1]).set("TaxType", tx[2]).set("CalculateOn", "Extended Price").
			set("TaxAgency", "V000001").set("TaxPayableAccount", "24000").set("TaxPayableSubaccount", "000000").
			set("TaxClaimableAccount", "14000").set("TaxClaimableSubaccount", "000000").
			set("ReverseVAT", false).set("PendingVAT", false).set("DeductibleVAT", tx[2] == "VAT")
		g.ds.add(r)
	}
	for i, tz := range [][2]string{{"NY", "New York"}, {"CA", "California"}, {"TX", "Texas"}, {"EXEMPT", "Exempt zone"}} {
		r := g.top("TaxZone", tz[0], g.stamp(840+i))
		r.set("TaxZoneID", tz[0]).set("Description", tz[1])
		g.ds.add(r)
	}
}

// genFinance: chart of accounts, subaccounts, ledgers and the master
// financial calendar.
func (g *gen) genFinance() {
	accounts := [][4]string{
		{"10100", "Petty Cash", "Asset", "CASH"}, {"10200", "Company Checking Account", "Asset", "CASH"},
		{"10300", "Savings Account", "Asset", "CASH"}, {"11000", "Accounts Receivable", "Asset", "AR"},
		{"11500", "Undeposited Funds", "Asset", "CASH"}, {"12000", "Prepaid Expenses", "Asset", "PREPAID"},
		{"13000", "Inventory", "Asset", "INVENT"}, {"14000", "Tax Claimable", "Asset", "TAX"},
		{"15000", "Fixed Assets", "Asset", "FA"}, {"20000", "Accounts Payable", "Liability", "AP"},
		{"20150", "PO Accrual", "Liability", "AP"}, {"21000", "Accrued Payroll", "Liability", "PAYROLL"},
		{"24000", "Sales Tax Payable", "Liability", "TAX"}, {"25000", "Customer Prepayments", "Liability", "AR"},
		{"30000", "Owner's Equity", "Liability", "EQUITY"}, {"31000", "Retained Earnings", "Liability", "EQUITY"},
		{"40000", "Sales Revenue", "Income", "SALES"}, {"40100", "Freight Revenue", "Income", "SALES"},
		{"40200", "Service Revenue", "Income", "SALES"}, {"41000", "Sales Discounts", "Income", "SALES"},
		{"50000", "Cost of Goods Sold", "Expense", "COGS"}, {"50100", "Freight Expense", "Expense", "COGS"},
		{"60000", "Salaries and Wages", "Expense", "PAYROLL"}, {"61000", "Rent Expense", "Expense", "OPEX"},
		{"62000", "Utilities", "Expense", "OPEX"}, {"63000", "Office Supplies", "Expense", "OPEX"},
		{"64000", "Travel Expense", "Expense", "OPEX"}, {"65000", "Professional Fees", "Expense", "OPEX"},
		{"66000", "Depreciation Expense", "Expense", "OPEX"}, {"67000", "Bank Fees", "Expense", "OPEX"},
		{"68000", "Meals and Entertainment", "Expense", "OPEX"}, {"69000", "Miscellaneous Expense", "Expense", "OPEX"},
	}
	for i, a := range accounts {
		r := g.top("Account", a[0], g.stamp(1000+i))
		r.set("AccountCD", a[0]).set("AccountID", int64(1000+i)).set("Description", a[1]).set("Type", a[2]).
			set("AccountClass", a[3]).set("Active", true).set("CashAccount", a[3] == "CASH").
			set("ChartOfAccountsOrder", int64(i)).set("CurrencyID", "USD").set("PostOption", "Summary").
			set("UseDefaultSubaccount", false).set("RequireUnits", false).set("Secured", false)
		if a[2] == "Income" || a[2] == "Expense" {
			r.set("TaxCategory", "TAXABLE")
		}
		g.ds.add(r)
	}
	for i, s := range [][2]string{{"000000", "Default"}, {"010000", "Sales department"}, {"020000", "Purchasing department"},
		{"030000", "Administration"}, {"040000", "Warehouse operations"}, {"050000", "Projects"}} {
		r := g.top("Subaccount", s[0], g.stamp(990+i))
		r.set("SubaccountCD", s[0]).set("SubaccountID", int64(470+i)).set("Description", s[1]).set("Active", true).set("Secured", false)
		g.ds.add(r)
	}
	for i, l := range [][3]string{{"ACTUAL", "Actual ledger", "Actual"}, {"BUDGET", "Budget ledger", "Budget"}, {"REPORT", "Reporting ledger", "Reporting"}} {
		r := g.top("Ledger", l[0], g.stamp(980+i))
		r.set("LedgerID", l[0]).set("Description", l[1]).set("Type", l[2]).set("Currency", baseCurrency).set("ConsolidationSource", false)
		g.ds.add(r)
	}
	for y := g.now.Year() - 2; y <= g.now.Year(); y++ {
		ys := fmt.Sprint(y)
		r := g.top("FinancialPeriod", ys, time.Date(y-1, time.November, 15, 9, 30, 0, 0, time.UTC))
		r.set("FinancialYear", ys).set("NbrOfPeriods", int64(12)).set("StartDate", date(y, time.January, 1)).set("UserDefinedPeriods", false)
		for m := 1; m <= 12; m++ {
			start := date(y, time.Month(m), 1)
			end := start.AddDate(0, 1, 0)
			l := g.line(r, "Details", "FinancialPeriodDetail", m)
			status := "Open"
			if end.Before(g.now.AddDate(0, -2, 0)) {
				status = "Closed"
			} else if start.After(g.now) {
				status = "Inactive"
			}
			l.set("FinancialPeriodID", fmt.Sprintf("%02d%d", m, y)).set("PeriodNbr", fmt.Sprintf("%02d", m)).
				set("StartDate", start).set("EndDate", end).set("LengthInDays", int64(end.Sub(start).Hours()/24)).
				set("Description", start.Format("January")).set("Status", status).set("AdjustmentPeriod", false).
				set("ClosedInAR", status == "Closed").set("ClosedInAP", status == "Closed").set("ClosedInIN", status == "Closed").
				set("ClosedInCA", status == "Closed").set("ClosedInFA", status == "Closed")
		}
		g.ds.add(r)
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}
