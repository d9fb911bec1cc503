package acumaticatest

import (
	"fmt"
	"strings"
)

var customerClasses = [][2]string{{"DEFAULT", "Default customer class"}, {"WHOLESALE", "Wholesale customers"},
	{"RETAIL", "Retail customers"}, {"INTL", "International customers"}}

var vendorClasses = [][2]string{{"DEFAULT", "Default vendor class"}, {"SERVICES", "Service providers"},
	{"MATERIALS", "Material suppliers"}, {"FREIGHT", "Freight carriers"}}

var termsIDs = []string{"NET30", "NET15", "NET45", "30D", "COD"}

// nextContactID numbers CRM contacts (Contact.ContactID is an int).
func (g *gen) nextContactID() int64 {
	g.contactSeq++
	return 100000 + g.contactSeq
}

// contactLink fills a linked Contact (with its Address) for a business
// account and returns its ContactID.
func (g *gen) contactLink(parent *Record, name string, seq int, company string) int64 {
	first, last := personName(seq)
	c := g.linked(parent, name, "Contact")
	id := g.nextContactID()
	email := fmt.Sprintf("%s.%s@%s.example.com", lower(first), lower(last), slug(company))
	c.set("ContactID", id).set("FirstName", first).set("LastName", last).set("DisplayName", first+" "+last).
		set("FullName", company).set("CompanyName", company).set("Email", email).set("Active", true).
		set("Phone1", fmt.Sprintf("+1 (555) %03d-%04d", 200+seq%700, 1000+seq*37%9000)).set("Phone1Type", "Business 1").
		set("Type", "Contact").set("Status", "Active").set("JobTitle", []string{"Owner", "Purchasing Manager", "Accountant", "CFO"}[seq%4])
	g.address(c, "Address", seq)
	return id
}

func slug(s string) string {
	var b strings.Builder
	for _, c := range lower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// genCustomers: customer classes, customers and their locations.
func (g *gen) genCustomers() {
	for i, c := range customerClasses {
		r := g.top("CustomerClass", c[0], g.stamp(940+i))
		r.set("ClassID", c[0]).set("Description", c[1]).set("CurrencyID", "USD").set("Terms", termsIDs[i%3]).
			set("ARAccount", "11000").set("ARSubaccount", "000000").set("SalesAccount", "40000").set("SalesSubaccount", "010000").
			set("CreditLimit", DecimalFromInt(int64(10000*(i+1)))).set("CreditVerification", "Limit and Days Past Due").
			set("CreditDaysPastDue", int64(30)).set("StatementCycleID", "EOM").set("StatementType", "Open Item").
			set("ShipVia", "TRUCK").set("ShippingRule", "Cancel Remainder").set("Country", "US").set("PaymentMethod", "CHECK").
			set("TaxZoneID", "NY").set("WriteOffLimit", DecimalFromInt(10)).set("PrintStatements", true)
		g.ds.add(r)
	}
	statuses := []string{"Active", "Active", "Active", "Active", "Active", "Active", "On Hold", "Credit Hold", "Inactive"}
	for i := 1; i <= 60; i++ {
		id := fmt.Sprintf("C%06d", i)
		name := g.companyName(i)
		r := g.top("Customer", id, g.stamp(1100-i*12))
		class := customerClasses[i%len(customerClasses)][0]
		cur := "USD"
		if class == "INTL" {
			cur = []string{"EUR", "GBP", "CAD"}[i%3]
		}
		r.set("CustomerID", id).set("CustomerName", name).set("CustomerClass", class).set("Status", statuses[i%len(statuses)]).
			set("CurrencyID", cur).set("Terms", termsIDs[i%len(termsIDs)]).set("BAccountID", int64(7000+i)).
			set("Email", "ap@"+slug(name)+".example.com").set("ShipVia", []string{"TRUCK", "FEDEX", "UPS"}[i%3]).
			set("StatementCycleID", "EOM").set("StatementType", "Open Item").set("ShippingRule", "Cancel Remainder").
			set("LocationName", "Primary Location").set("TaxZone", []string{"NY", "CA", "TX", "EXEMPT"}[i%4]).
			set("WriteOffLimit", DecimalFromInt(int64(10*(i%4)))).set("CreditLimit", DecimalFromInt(int64(5000+1000*(i%20)))).
			set("PrintDunningLetters", true).set("PrintInvoices", i%3 == 0).set("SendInvoicesbyEmail", i%3 != 0).
			set("ApplyOverdueCharges", false).set("AutoApplyPayments", i%2 == 0).set("EnableWriteOffs", i%4 != 0).
			set("OrderPriority", int64(0)).set("CustomerCategory", "Individual").set("IsGuestCustomer", false)
		// Booleans the recorded customer (customer-list-top1-200.json) has
		// false; its ShippingAddressOverride and ShippingContactOverride
		// are empty, {}, and stay unset here.
		for _, f := range []string{"BillingAddressOverride", "BillingContactOverride", "EnableCurrencyOverride", "EnableRateOverride",
			"MultiCurrencyStatements", "PrintStatements", "ResidentialDelivery", "SaturdayDelivery", "SendDunningLettersbyEmail", "SendStatementsbyEmail"} {
			r.set(f, false)
		}
		if i%7 == 0 {
			r.set("ParentRecord", fmt.Sprintf("C%06d", i-6))
			r.set("AccountRef", fmt.Sprintf("EXT-%05d", i*13))
		}
		if i%10 == 1 {
			r.Note = "Key account: call before shipping large orders."
		}
		rules := g.linked(r, "CreditVerificationRules", "CreditVerificationRules")
		rules.set("CreditLimit", r.Decimal("CreditLimit")).set("CreditVerification", "Limit and Days Past Due").
			set("CreditDaysPastDue", int64(30)).set("OpenOrdersBalance", Decimal(0)).set("UnreleasedBalance", Decimal(0)).
			set("RemainingCreditLimit", r.Decimal("CreditLimit"))
		primary := g.contactLink(r, "MainContact", i, name)
		r.set("PrimaryContactID", primary)
		g.customers = append(g.customers, g.ds.add(r))

		loc := g.top("CustomerLocation", id+"/MAIN", g.stamp(1100-i*12))
		loc.set("Customer", id).set("LocationID", "MAIN").set("LocationName", "Primary Location").set("Active", true).
			set("Default", true).set("Status", "Active").set("ShipVia", r.String("ShipVia")).set("TaxZone", r.String("TaxZone")).
			set("Warehouse", "MAIN").set("ShippingBranch", "HEADOFFICE").set("ShippingRule", "Cancel Remainder").
			set("OrderPriority", int64(0)).set("LeadTimeDays", int64(2))
		g.ds.add(loc)
		if i%5 == 0 {
			loc2 := g.top("CustomerLocation", id+"/WAREHOUSE", g.stamp(900-i*10))
			loc2.set("Customer", id).set("LocationID", "WAREHOUSE").set("LocationName", "Receiving dock").set("Active", true).
				set("Default", false).set("Status", "Active").set("ShipVia", "TRUCK").set("TaxZone", r.String("TaxZone")).
				set("Warehouse", "EAST").set("ShippingBranch", "EAST").set("ShippingRule", "Ship Complete").set("LeadTimeDays", int64(4))
			g.ds.add(loc2)
		}
	}
}

// genVendors: vendor classes and vendors.
func (g *gen) genVendors() {
	for i, c := range vendorClasses {
		r := g.top("VendorClass", c[0], g.stamp(930+i))
		r.set("ClassID", c[0]).set("Description", c[1])
		g.ds.add(r)
	}
	for i := 1; i <= 35; i++ {
		id := fmt.Sprintf("V%06d", i)
		name := g.companyName(i*3 + 100)
		r := g.top("Vendor", id, g.stamp(1150-i*15))
		status := "Active"
		if i%11 == 0 {
			status = "On Hold"
		}
		r.set("VendorID", id).set("VendorName", name).set("LegalName", name).set("VendorClass", vendorClasses[i%len(vendorClasses)][0]).
			set("Status", status).set("CurrencyID", "USD").set("Terms", termsIDs[i%3]).set("PaymentMethod", []string{"CHECK", "WIRE", "ACH"}[i%3]).
			set("CashAccount", "10200").set("APAccount", "20000").set("APSubaccount", "000000").set("LocationName", "Primary Location").
			set("PaymentBy", "Due Date").set("ReceiptAction", "Accept but Warn").set("TaxZone", "NY").set("ShipVia", "TRUCK").
			set("Warehouse", "MAIN").set("ReceivingBranch", "HEADOFFICE").set("TaxCalculationMode", "Tax Settings").
			set("F1099Vendor", i%6 == 0).set("LandedCostVendor", i%9 == 0).set("VendorIsTaxAgency", i == 1).
			set("VendorIsLaborUnion", false).set("ForeignEntity", false).set("FATCA", false).set("PaySeparately", false).
			set("PrintOrders", false).set("SendOrdersbyEmail", true).set("ThresholdReceipt", DecimalFromInt(100)).
			set("MinReceipt", DecimalFromInt(0)).set("MaxReceipt", DecimalFromInt(100)).set("LeadTimedays", int64(3+i%10)).
			set("PaymentLeadTimedays", int64(0))
		if i%6 == 0 {
			r.set("TaxRegistrationID", fmt.Sprintf("%02d-%07d", 10+i, 1234567+i*111))
		}
		if i%3 == 2 {
			// ACH vendors keep their bank details as name/value rows.
			for n, d := range [][2]string{
				{"ACCOUNT", "Account Number"}, {"ROUTING", "Routing Number"}, {"BENEFNAME", "Beneficiary Name"},
			} {
				value := map[string]string{"ACCOUNT": fmt.Sprintf("%012d", 4000123+i*7919), "ROUTING": fmt.Sprintf("0210%05d", 100+i), "BENEFNAME": name}[d[0]]
				g.line(r, "PaymentInstructions", "BusinessAccountPaymentInstructionDetail", n+1).
					set("PaymentInstructionsID", d[0]).set("Description", d[1]).set("PaymentMethod", "ACH").set("LocationID", int64(1)).set("Value", value)
			}
		}
		g.contactLink(r, "MainContact", i+500, name)
		g.vendors = append(g.vendors, g.ds.add(r))
	}
}
