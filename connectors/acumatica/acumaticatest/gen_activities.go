package acumaticatest

import (
	"fmt"
	"time"
)

// genActivities: CRM activities (notes and phone calls), e-mails, events
// and tasks about customers, each keyed by its NoteID.
func (g *gen) genActivities() {
	kinds := []string{"Note", "Phone Call", "Note", "Work Item"}
	for i := 1; i <= 24; i++ {
		c := g.customers[(i*5)%len(g.customers)]
		emp := g.employees[i%len(g.employees)]
		when := g.stamp(200 - i*7)
		r := g.top("Activity", fmt.Sprintf("A%03d", i), when)
		r.set("Type", kinds[i%len(kinds)]).set("Summary", fmt.Sprintf("%s with %s about order status", kinds[i%len(kinds)], c.String("CustomerName"))).
			set("Body", fmt.Sprintf("Discussed open orders and delivery dates with %s.", c.String("CustomerName"))).
			set("Date", when).set("Owner", emp.String("EmployeeID")).set("Status", "Completed").set("Internal", i%6 == 0)
		g.relate(r, c)
		g.ds.add(r)
	}
	for i := 1; i <= 24; i++ {
		c := g.customers[(i*7)%len(g.customers)]
		emp := g.employees[(i+3)%len(g.employees)]
		when := g.stamp(180 - i*6)
		incoming := i%3 == 0
		r := g.top("Email", fmt.Sprintf("E%03d", i), when)
		ours := fmt.Sprintf("%s@demo-company.com", slug(emp.String("EmployeeName")))
		theirs := c.String("Email")
		if theirs == "" {
			theirs = "accounts@" + slug(c.String("CustomerName")) + ".example.com"
		}
		from, to := ours, theirs
		if incoming {
			from, to = theirs, ours
		}
		r.set("Subject", fmt.Sprintf("Quote %d for %s", 1000+i, c.String("CustomerName"))).set("From", from).set("To", to).
			set("Body", "Please find the updated quote attached.").set("StartDate", when).set("Incoming", incoming).
			set("MailStatus", map[bool]string{true: "Processed", false: "Sent"}[incoming]).set("Owner", emp.String("EmployeeID")).set("Internal", false)
		g.relate(r, c)
		g.ds.add(r)
	}
	for i := 1; i <= 16; i++ {
		c := g.customers[(i*3+1)%len(g.customers)]
		emp := g.employees[(i+1)%len(g.employees)]
		start := g.day(60 - i*6).Add(time.Duration(9+i%6) * time.Hour)
		status := "Completed"
		if start.After(g.now) {
			status = "Open"
		}
		r := g.top("Event", fmt.Sprintf("V%03d", i), g.stamp(70-i*3))
		r.set("Summary", fmt.Sprintf("Account review with %s", c.String("CustomerName"))).set("StartDate", start).set("EndDate", start.Add(time.Hour)).
			set("Location", cities[i%len(cities)][0]).set("Priority", []string{"Low", "Normal", "High"}[i%3]).set("Category", "Meeting").
			set("ShowAs", "Busy").set("Status", status).set("AllDay", false).set("Internal", false).
			set("Body", "Review open invoices and next quarter's forecast.")
		g.relate(r, c)
		_ = emp
		g.ds.add(r)
	}
	for i := 1; i <= 20; i++ {
		c := g.customers[(i*11)%len(g.customers)]
		emp := g.employees[(i+2)%len(g.employees)]
		start := g.day(90 - i*5)
		status := []string{"Open", "In Process", "Completed"}[i%3]
		pct := map[string]int{"Open": 0, "In Process": 50, "Completed": 100}[status]
		r := g.top("Task", fmt.Sprintf("T%03d", i), g.stamp(95-i*5))
		r.set("Summary", fmt.Sprintf("Follow up on credit terms for %s", c.String("CustomerName"))).set("StartDate", start).
			set("DueDate", start.AddDate(0, 0, 14)).set("Priority", []string{"Low", "Normal", "High"}[i%3]).set("Status", status).
			set("CompletionPercentage", pct).set("Owner", emp.String("EmployeeID")).set("Internal", false).
			set("Body", "Confirm the new credit limit with the customer's accounts team.")
		if status == "Completed" {
			r.set("CompletedAt", start.AddDate(0, 0, 10).Add(15*time.Hour))
		}
		g.relate(r, c)
		g.ds.add(r)
	}
}

// relate links an activity to the customer it is about.
func (g *gen) relate(r, customer *Record) {
	r.set("RelatedEntityType", "PX.Objects.AR.Customer").set("RelatedEntityNoteID", customer.String("NoteID")).
		set("RelatedEntityDescription", customer.String("CustomerName"))
}

// genFieldServices: service orders of type MRO and their appointments.
func (g *gen) genFieldServices() {
	statuses := []string{"Open", "Open", "Completed", "On Hold", "Closed"}
	for i := 1; i <= 12; i++ {
		nbr := fmt.Sprintf("SO%06d", i)
		c := g.customers[(i*4)%len(g.customers)]
		status := statuses[i%len(statuses)]
		total := g.cents(150, 4000)
		r := g.top("ServiceOrder", "MRO/"+nbr, g.stamp(150-i*10))
		r.set("ServiceOrderType", "MRO").set("ServiceOrderNbr", nbr).set("Customer", c.String("CustomerID")).
			set("Date", g.day(150-i*10)).set("Description", fmt.Sprintf("Maintenance visit for %s", c.String("CustomerName"))).
			set("Status", status).set("Hold", status == "On Hold").set("Priority", []string{"Low", "Medium", "High"}[i%3]).
			set("Severity", "Medium").set("Currency", "USD").set("BranchLocation", "MAIN").set("Location", "MAIN").
			set("ServiceOrderTotal", total).set("BillableTotal", total).set("TaxTotal", Decimal(0)).set("WorkflowStage", status)
		g.ds.add(r)
		for n := 1; n <= 1+i%2; n++ {
			start := g.day(145 - i*10 - n*2).Add(time.Duration(8+n) * time.Hour)
			done := status == "Completed" || status == "Closed"
			a := g.top("Appointment", fmt.Sprintf("MRO/%s-%d", nbr, n), g.stamp(148-i*10))
			cost := total.Mul(mustDecimal("0.6"), 2)
			a.set("ServiceOrderType", "MRO").set("AppointmentNbr", fmt.Sprintf("%s-%d", nbr, n)).set("ServiceOrderNbr", nbr).
				set("Customer", c.String("CustomerID")).set("Description", r.String("Description")).
				set("Status", map[bool]string{true: "Completed", false: "Not Started"}[done]).
				set("ScheduledStartDate", start).set("ScheduledEndDate", start.Add(2*time.Hour)).
				set("Confirmed", true).set("Finished", done).set("Hold", false).set("BranchLocation", "MAIN").
				set("AppointmentTotal", total).set("CostTotal", cost).set("Profit", total-cost).set("TaxTotal", Decimal(0))
			if done {
				a.set("ActualStartDate", start).set("ActualEndDate", start.Add(2*time.Hour))
			}
			g.ds.add(a)
		}
	}
}

// genProjectTransactions: released PM transactions of labour and
// materials on the projects' tasks.
func (g *gen) genProjectTransactions() {
	for i := 1; i <= 15; i++ {
		nbr := fmt.Sprintf("PM%06d", i)
		p := g.projects[i%len(g.projects)]
		when := g.day(120 - i*7)
		r := g.top("ProjectTransaction", "PM/"+nbr, g.stamp(120-i*7))
		var amount, qty Decimal
		for n := 1; n <= 2+i%2; n++ {
			l := g.line(r, "Details", "ProjectTransactionDetail", n)
			hours := DecimalFromInt(int64(2 + (i+n)%6))
			rate := DecimalFromInt(int64(45 + n*10))
			amt := hours.Mul(rate, 2)
			l.set("Project", p.String("ProjectID")).set("ProjectTask", "01").set("AccountGroup", []string{"LABOR", "MATERIAL"}[n%2]).
				set("Description", fmt.Sprintf("Work on %s", p.String("ProjectID"))).set("Date", when).set("Qty", hours).
				set("BillableQty", hours).set("UnitRate", rate).set("Amount", amt).set("Billable", true).set("Released", true).
				set("TransactionID", int64(i*10+n)).set("Employee", g.employees[(i+n)%len(g.employees)].String("EmployeeID"))
			amount += amt
			qty += hours
		}
		r.set("Module", "PM").set("ReferenceNbr", nbr).set("Description", fmt.Sprintf("Timesheet costs for %s", p.String("ProjectID"))).
			set("Status", "Released").set("TotalAmount", amount).set("TotalQty", qty).set("TotalBillableQty", qty)
		g.ds.add(r)
	}
}
