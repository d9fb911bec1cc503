package acumaticatest

import "fmt"

// genProjects: account groups, projects and project tasks.
func (g *gen) genProjects() {
	for i, ag := range [][3]string{{"ASSETS", "Assets", "Asset"}, {"LIABILITY", "Liabilities", "Liability"},
		{"INCOME", "Revenue", "Income"}, {"LABOR", "Labor costs", "Expense"}, {"MATERIAL", "Materials", "Expense"},
		{"SUBCON", "Subcontracts", "Expense"}, {"TRAVEL", "Travel", "Expense"}, {"OTHER", "Other expenses", "Expense"}} {
		r := g.top("AccountGroup", ag[0], g.stamp(920+i))
		r.set("AccountGroupID", ag[0]).set("Description", ag[1]).set("Type", ag[2]).set("Active", true).
			set("Expense", ag[2] == "Expense").set("SortOrder", int64(i+1))
		g.ds.add(r)
	}
	statuses := []string{"Active", "Active", "Active", "In Planning", "Completed", "On Hold", "Suspended"}
	taskNames := []string{"Planning", "Design", "Procurement", "Installation", "Acceptance"}
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("PRJ%04d", i)
		r := g.top("Project", id, g.stamp(500-i*15))
		c := g.customers[(i*3)%len(g.customers)]
		status := statuses[i%len(statuses)]
		income := g.cents(5000, 120000)
		r.set("ProjectID", id).set("Description", fmt.Sprintf("%s rollout for %s", itemClasses[i%len(itemClasses)].descr, c.String("CustomerName"))).
			set("Customer", c.String("CustomerID")).set("Status", status).set("Hold", status == "On Hold").
			set("ProjectTemplateID", "STANDARD").set("ExternalRefNbr", fmt.Sprintf("EXT-PRJ-%03d", i)).
			set("Income", income).set("Expenses", income.Mul(mustDecimal("0.7"), 2)).set("Assets", Decimal(0)).set("Liabilities", Decimal(0))
		g.projects = append(g.projects, g.ds.add(r))
		for t := 1; t <= 3+i%3; t++ {
			tid := fmt.Sprintf("%02d", t)
			pt := g.top("ProjectTask", id+"/"+tid, g.stamp(500-i*15))
			tstatus := "Active"
			switch {
			case status == "Completed" || t < 2 && status == "Active":
				tstatus = "Completed"
			case status == "In Planning":
				tstatus = "In Planning"
			}
			pt.set("ProjectID", id).set("ProjectTaskID", tid).set("Description", taskNames[(t-1)%len(taskNames)]).
				set("Status", tstatus).set("Default", t == 1).set("ExternalRefNbr", fmt.Sprintf("T-%03d-%02d", i, t))
			props := g.linked(pt, "Properties", "ProjectTaskProperties")
			start := g.day(480 - i*15 + t*10)
			props.set("PlannedStartDate", start).set("PlannedEndDate", start.AddDate(0, 1, 0)).set("StartDate", start).
				set("CompletionMethod", "Percent").set("Completed", DecimalFromInt(int64(map[string]int{"Completed": 100, "Active": 40}[tstatus])))
			g.ds.add(pt)
		}
	}
}
