package frappetest

import (
	"fmt"
	"time"
)

// demoProjects are customer projects per company. Sales invoices of the
// project's customer posted while it ran are partly booked to it, and so
// are some purchase invoices (see genPurchasing); the project totals are
// computed from those documents.
var demoProjects = []struct {
	abbr, name, customer, status string
	start, end                   string
}{
	{"DHNZ", "Auckland Solar Rollout", "Aotearoa Solar Ltd", "Open", "2025-02-01", "2026-09-30"},
	{"DHNZ", "Kauri Warehouse Fit-out", "Kauri Timber Supplies Ltd", "Completed", "2025-03-01", "2025-08-31"},
	{"DHNZ", "Wellington Office Refresh", "Wellington Print House", "Open", "2025-09-01", "2026-07-31"},
	{"DHNZ", "Harbour Freight IT Upgrade", "Harbour Freight Ltd", "Cancelled", "2025-05-01", "2025-12-31"},
	{"DTAU", "Sydney Depot Expansion", "Sydney Harbour Traders Pty Ltd", "Open", "2025-01-15", "2026-12-31"},
	{"DTAU", "Melbourne Roastery Solar", "Melbourne Coffee Roasters Pty Ltd", "Completed", "2025-04-01", "2025-10-31"},
	{"DTAU", "Brisbane Site Power", "Brisbane Build Co Pty Ltd", "Open", "2025-10-01", "2026-08-31"},
	{"DTAU", "Perth Mine Lighting", "Perth Mining Supplies Pty Ltd", "Open", "2026-01-05", "2026-10-31"},
	{"DSUS", "Acme Factory Automation", "Acme Widgets Inc", "Open", "2025-02-15", "2026-12-31"},
	{"DSUS", "Golden Gate Warehouse", "Golden Gate Imports Inc", "Completed", "2025-03-01", "2025-11-30"},
	{"DSUS", "Lone Star Solar Pilot", "Lone Star Energy LLC", "Open", "2025-11-01", "2026-09-30"},
	{"DSUS", "Great Lakes Logistics Hub", "Great Lakes Shipping LLC", "Open", "2026-02-01", "2026-12-31"},
}

func (g *generator) genProjects() {
	for i, p := range demoProjects {
		var c *companyInfo
		for _, cc := range g.companies {
			if cc.Abbr == p.abbr {
				c = cc
			}
		}
		start := mustDate(p.start)
		d := g.newDoc("Project", fmt.Sprintf("PROJ-%04d", i+1), "accounts@demo.example", start.Add(-72*time.Hour+9*time.Hour))
		f := d.Fields
		f["naming_series"] = "PROJ-.####"
		f["project_name"] = p.name
		f["status"] = p.status
		f["is_active"] = "Yes"
		if p.status != "Open" {
			f["is_active"] = "No"
		}
		f["percent_complete_method"] = "Manual"
		switch p.status {
		case "Completed":
			f["percent_complete"] = Units(100)
		case "Open":
			f["percent_complete"] = Units(int64(g.rng.between(5, 90)))
		}
		f["expected_start_date"] = p.start
		f["expected_end_date"] = p.end
		f["priority"] = []string{"Medium", "Low", "High"}[g.rng.intn(3)]
		f["customer"] = p.customer
		f["company"] = c.Name
		f["cost_center"] = c.acct("Main")
		f["estimated_costing"] = Units(int64(g.rng.between(20, 400)) * 500)
		g.ds.add(d)
		g.projects = append(g.projects, d)
		if p.status == "Cancelled" {
			continue
		}
		end := mustDate(p.end)
		for _, si := range g.docs("Sales Invoice") {
			pd := si.Str("posting_date")
			if si.Str("company") != c.Name || si.Str("customer") != p.customer || pd < p.start || pd > fmtDate(end) {
				continue
			}
			if g.rng.chance(60) {
				si.Fields["project"] = d.Name
				for _, it := range si.Children["items"] {
					it.Fields["project"] = d.Name
				}
			}
		}
	}
}

// projectTotals sets the billed/sales/purchase totals of every project from
// the submitted invoices booked to it (run after purchasing).
func (g *generator) projectTotals() {
	for _, p := range g.projects {
		var sales, purchase int64
		for _, si := range g.docs("Sales Invoice") {
			if si.Str("project") == p.Name && si.Int("docstatus") == 1 {
				sales += si.Dec("base_net_total").Cents()
			}
		}
		for _, pi := range g.docs("Purchase Invoice") {
			if pi.Str("project") == p.Name && pi.Int("docstatus") == 1 {
				purchase += pi.Dec("base_net_total").Cents()
			}
		}
		p.Fields["total_sales_amount"] = Cents(sales)
		p.Fields["total_billed_amount"] = Cents(sales)
		p.Fields["total_purchase_cost"] = Cents(purchase)
		p.Fields["gross_margin"] = Cents(sales - purchase)
		if sales != 0 {
			p.Fields["per_gross_margin"] = ratioDecimal((sales-purchase)*100, sales)
		}
	}
}
