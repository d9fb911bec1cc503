package acumaticatest

import (
	"fmt"
	"time"
)

// genCRM: business accounts (customers, vendors, prospects), their
// contacts, leads, opportunities and cases.
func (g *gen) genCRM() {
	var prospects []*Record
	accounts := func(list []*Record, idField, nameField, typ string) {
		for _, acct := range list {
			id, name := acct.String(idField), acct.String(nameField)
			ba := g.top("BusinessAccount", id, acct.Time("CreatedDateTime").Add(-time.Minute))
			status := "Active"
			if s := acct.String("Status"); s == "Inactive" {
				status = s
			}
			class := "DEFAULT"
			if c := acct.String("CustomerClass"); c != "" {
				class = c
			}
			ba.set("BusinessAccountID", id).set("Name", name).set("Type", typ).set("Status", status).set("ClassID", class).
				set("CurrencyID", "USD").set("MainAddressValidated", true).set("ShippingAddressOverride", false).
				set("Owner", g.pickRec(g.employees).String("EmployeeName"))
			mc := acct.Link("MainContact")
			if mc != nil {
				ba.link("MainAddress", mc.Link("Address"))
				ba.set("LastIncomingActivity", g.stamp(g.rng.IntN(90)))
				g.contactRecord(mc, id, name)
			}
			g.ds.add(ba)
		}
	}
	accounts(g.customers, "CustomerID", "CustomerName", "Customer")
	accounts(g.vendors, "VendorID", "VendorName", "Vendor")
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("P%06d", i)
		name := g.companyName(i*5 + 300)
		ba := g.top("BusinessAccount", id, g.stamp(400-i*7))
		ba.set("BusinessAccountID", id).set("Name", name).set("Type", "Prospect").set("Status", "Active").set("ClassID", "PROSPECT").
			set("CurrencyID", "USD").set("MainAddressValidated", false).set("Owner", g.pickRec(g.employees).String("EmployeeName"))
		g.contactLink(ba, "PrimaryContact", i+800, name)
		g.address(ba, "MainAddress", i+800)
		g.contactRecord(ba.Link("PrimaryContact"), id, name)
		prospects = append(prospects, g.ds.add(ba))
	}

	leadStatus := []string{"New", "Open", "Sales-Ready", "Sales-Accepted", "Converted", "Lost"}
	for i := 1; i <= 50; i++ {
		first, last := personName(i + 40)
		lid := g.nextContactID()
		r := g.top("Lead", fmt.Sprint(lid), g.stamp(300-i*5))
		company := g.companyName(i*7 + 500)
		r.set("LeadID", lid).set("FirstName", first).set("LastName", last).set("LeadDisplayName", first+" "+last).
			set("CompanyName", company).set("Email", fmt.Sprintf("%s@%s.example.com", lower(first), slug(company))).
			set("Phone1", fmt.Sprintf("+1 (555) 300-%04d", i)).set("Status", leadStatus[i%len(leadStatus)]).
			set("Source", []string{"Web", "Referral", "Trade Show", "Phone Inquiry"}[i%4]).set("LeadClass", "LEADNEW").
			set("Description", "Interested in "+singular(itemClasses[i%len(itemClasses)].descr)+" products").
			set("Owner", g.pickRec(g.employees).String("EmployeeName")).set("Active", i%6 != 5).
			set("ContactMethod", "Any").set("DoNotCall", false).set("DoNotEmail", false).set("DoNotFax", false).
			set("DoNotMail", false).set("NoMarketing", false).set("NoMassMail", false).set("Title", "Mr.")
		g.address(r, "Address", i+900)
		g.ds.add(r)
	}

	stages := []string{"Prospect", "Nurture", "Qualification", "Development", "Solution", "Proposal", "Negotiation", "Won"}
	for i := 1; i <= 60; i++ {
		id := fmt.Sprintf("OP%06d", i)
		r := g.top("Opportunity", id, g.stamp(360-i*5))
		var acct *Record
		if i%3 == 0 {
			acct = prospects[i%len(prospects)]
		} else {
			acct = g.customers[i%len(g.customers)]
		}
		acctID := acct.String("CustomerID")
		if acctID == "" {
			acctID = acct.String("BusinessAccountID")
		}
		amount := g.cents(500, 60000)
		stage := stages[i%len(stages)]
		status := "Open"
		switch {
		case stage == "Won":
			status = "Won"
		case i%9 == 0:
			status = "Lost"
		case i%5 == 0:
			status = "New"
		}
		r.set("OpportunityID", id).set("Subject", fmt.Sprintf("%s for %s", itemClasses[i%len(itemClasses)].descr, acctID)).
			set("BusinessAccount", acctID).set("Status", status).set("Stage", stage).set("ClassID", "PRODUCT").
			set("CurrencyID", "USD").set("Amount", amount).set("Discount", Decimal(0)).set("Total", amount).
			set("WeightTotal", amount.Mul(mustDecimal("0.5"), 2)).set("Estimation", g.day(-30-i)).
			set("Owner", g.pickRec(g.employees).String("EmployeeName")).set("Branch", branches[i%3]).
			set("Location", "MAIN").set("Source", "Web").set("ManualAmount", false).set("Override", false)
		g.ds.add(r)
	}

	caseStatus := []string{"New", "Open", "Pending Customer", "Closed"}
	for i := 1; i <= 40; i++ {
		id := fmt.Sprintf("%06d", i)
		reported := g.stamp(200 - i*4)
		r := g.top("Case", id, reported)
		c := g.customers[(i*7)%len(g.customers)]
		status := caseStatus[i%len(caseStatus)]
		r.set("CaseID", id).set("Subject", []string{"Delivery delayed", "Damaged goods", "Invoice question", "Return request", "Warranty claim"}[i%5]).
			set("Description", "Customer reported an issue.").set("Status", status).
			set("Priority", []string{"Low", "Medium", "High"}[i%3]).set("Severity", []string{"Low", "Medium", "High", "Critical"}[i%4]).
			set("ClassID", "SUPPORT").set("BusinessAccount", c.String("CustomerID")).set("BusinessAccountName", c.String("CustomerName")).
			set("ContactID", c.Int("PrimaryContactID")).set("DateReported", reported).set("Billable", i%4 == 0).
			set("TimeSpent", fmt.Sprintf("%02d:%02d", i%5, (i*15)%60)).set("Owner", g.pickRec(g.employees).String("EmployeeName")).
			set("ManualOverride", false).set("Location", "MAIN")
		if status == "Closed" {
			r.set("ClosingDate", reported.AddDate(0, 0, 3)).set("Reason", "Resolved")
		}
		g.ds.add(r)
	}
}

// contactRecord publishes a business account's linked contact as a
// top-level Contact record with the same ContactID.
func (g *gen) contactRecord(c *Record, acctID, company string) {
	id := c.Int("ContactID")
	r := g.top("Contact", fmt.Sprint(id), g.stamp(900-int(id%500)))
	for k, v := range c.Fields {
		r.Fields[k] = v
	}
	r.set("NoteID", r.ID).set("BusinessAccount", acctID).set("CompanyName", company).set("ContactClass", "DEFAULT").
		set("ContactMethod", "Any").set("DoNotCall", false).set("DoNotEmail", false).set("DoNotFax", false).
		set("DoNotMail", false).set("NoMarketing", false).set("NoMassMail", false).set("OverrideAccountAddress", false).
		set("Synchronize", true).set("Owner", g.pickRec(g.employees).String("EmployeeName"))
	r.link("Address", c.Link("Address"))
	g.ds.add(r)
}
