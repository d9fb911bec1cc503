package frappetest

import "time"

// companyInfo is what later generator stages need to know about a company.
type companyInfo struct {
	Name, Abbr, Currency, Country, Territory string
	TaxAccount                               string // "" if no sales tax
	TaxRateBP                                int64  // tax rate in basis points
	TaxLabel                                 string
	Bank                                     string
	doc                                      *Doc
}

// acct returns the full account name "<name> - <abbr>".
func (c *companyInfo) acct(name string) string { return name + " - " + c.Abbr }

var demoCompanies = []*companyInfo{
	{Name: "Demo Holdings NZ Ltd", Abbr: "DHNZ", Currency: "NZD", Country: "New Zealand", Territory: "New Zealand", TaxLabel: "GST", TaxRateBP: 1500, Bank: "ANZ Business Account"},
	{Name: "Demo Trading AU Pty Ltd", Abbr: "DTAU", Currency: "AUD", Country: "Australia", Territory: "Australia", TaxLabel: "GST", TaxRateBP: 1000, Bank: "Westpac Business Account"},
	{Name: "Demo Services US Inc", Abbr: "DSUS", Currency: "USD", Country: "United States", Territory: "United States", TaxLabel: "Sales Tax", TaxRateBP: 825, Bank: "Chase Business Checking"},
}

var setupTime = time.Date(2024, 12, 2, 9, 30, 0, 0, time.UTC)

func (g *generator) genSetup() {
	for _, c := range []struct{ code, name, symbol string }{
		{"AUD", "Australian Dollar", "A$"}, {"EUR", "Euro", "€"}, {"NZD", "New Zealand Dollar", "NZ$"}, {"USD", "US Dollar", "$"},
	} {
		d := g.newDoc("Currency", c.code, "Administrator", setupTime)
		d.Fields["currency_name"] = c.code
		d.Fields["enabled"] = int64(1)
		d.Fields["fraction"] = "Cent"
		d.Fields["fraction_units"] = int64(100)
		d.Fields["smallest_currency_fraction_value"] = Cents(1)
		d.Fields["symbol"] = c.symbol
		d.Fields["number_format"] = "#,###.##"
		g.ds.add(d)
	}
	// The yen, as ERPNext's set-up creates it from frappe/geo/
	// country_info.json (Japan): no decimals in its number format, no
	// smallest_currency_fraction_value.
	yen := g.newDoc("Currency", "JPY", "Administrator", setupTime)
	yen.Fields["currency_name"] = "JPY"
	yen.Fields["enabled"] = int64(1)
	yen.Fields["fraction"] = "Sen[G]"
	yen.Fields["fraction_units"] = int64(100)
	yen.Fields["symbol"] = "¥"
	yen.Fields["number_format"] = "#,###"
	g.ds.add(yen)
	for _, u := range []string{"Box", "Hour", "Kg", "Litre", "Nos", "Set"} {
		d := g.newDoc("UOM", u, "Administrator", setupTime)
		d.Fields["uom_name"] = u
		if u == "Nos" || u == "Box" || u == "Set" {
			d.Fields["must_be_whole_number"] = int64(1)
		}
		g.ds.add(d)
	}
	g.genTree("Customer Group", "customer_group_name", "parent_customer_group", "All Customer Groups",
		[]string{"Commercial", "Government", "Individual", "Non Profit", "Wholesale"})
	g.genTree("Territory", "territory_name", "parent_territory", "All Territories",
		[]string{"Australia", "New Zealand", "Rest Of The World", "United States"})
	g.genTree("Item Group", "item_group_name", "parent_item_group", "All Item Groups",
		[]string{"Consumable", "Products", "Raw Material", "Services", "Sub Assemblies"})

	for i, c := range demoCompanies {
		c.TaxAccount = c.acct(c.TaxLabel)
		g.genCompany(c, i)
		g.companies = append(g.companies, c)
	}
	for _, y := range []int{2025, 2026} {
		name := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).Format("2006")
		d := g.newDoc("Fiscal Year", name, "Administrator", setupTime)
		d.Fields["year"] = name
		d.Fields["year_start_date"] = name + "-01-01"
		d.Fields["year_end_date"] = name + "-12-31"
		for _, c := range g.companies {
			g.addChild(d, "companies", map[string]any{"company": c.Name})
		}
		g.ds.add(d)
	}
}

// genTree adds a two-level tree master with nested-set lft/rgt.
func (g *generator) genTree(doctype, nameField, parentField, root string, leaves []string) {
	r := g.newDoc(doctype, root, "Administrator", setupTime)
	r.Fields[nameField] = root
	r.Fields["is_group"] = int64(1)
	r.Fields["lft"] = int64(1)
	r.Fields["rgt"] = int64(2*len(leaves) + 2)
	g.ds.add(r)
	for i, l := range leaves {
		d := g.newDoc(doctype, l, "Administrator", setupTime)
		d.Fields[nameField] = l
		d.Fields[parentField] = root
		d.Fields["old_parent"] = root
		d.Fields["lft"] = int64(2*i + 2)
		d.Fields["rgt"] = int64(2*i + 3)
		g.ds.add(d)
	}
}

// accountSpec is one row of the demo chart of accounts.
type accountSpec struct {
	name, parent, rootType, accountType string
	group                               bool
	foreignUSD                          bool // a USD account in a non-USD company
}

func chartOfAccounts(c *companyInfo) []accountSpec {
	specs := []accountSpec{
		{name: "Application of Funds (Assets)", rootType: "Asset", group: true},
		{name: "Current Assets", parent: "Application of Funds (Assets)", group: true},
		{name: "Accounts Receivable", parent: "Current Assets", group: true},
		{name: "Debtors", parent: "Accounts Receivable", accountType: "Receivable"},
		{name: "Bank Accounts", parent: "Current Assets", group: true},
		{name: c.Bank, parent: "Bank Accounts", accountType: "Bank"},
		{name: "Cash In Hand", parent: "Current Assets", group: true},
		{name: "Cash", parent: "Cash In Hand", accountType: "Cash"},
		{name: "Stock Assets", parent: "Current Assets", group: true},
		{name: "Stock In Hand", parent: "Stock Assets", accountType: "Stock"},
		{name: "Fixed Assets", parent: "Application of Funds (Assets)", group: true},
		{name: "Office Equipment", parent: "Fixed Assets", accountType: "Fixed Asset"},
		{name: "Source of Funds (Liabilities)", rootType: "Liability", group: true},
		{name: "Current Liabilities", parent: "Source of Funds (Liabilities)", group: true},
		{name: "Accounts Payable", parent: "Current Liabilities", group: true},
		{name: "Creditors", parent: "Accounts Payable", accountType: "Payable"},
		{name: "Duties and Taxes", parent: "Current Liabilities", group: true},
		{name: c.TaxLabel, parent: "Duties and Taxes", accountType: "Tax"},
		{name: "Stock Liabilities", parent: "Current Liabilities", group: true},
		{name: "Stock Received But Not Billed", parent: "Stock Liabilities", accountType: "Stock Received But Not Billed"},
		{name: "Equity", rootType: "Equity", group: true},
		{name: "Capital Stock", parent: "Equity", accountType: "Equity"},
		{name: "Retained Earnings", parent: "Equity", accountType: "Equity"},
		{name: "Income", rootType: "Income", group: true},
		{name: "Direct Income", parent: "Income", group: true},
		{name: "Sales", parent: "Direct Income", accountType: "Income Account"},
		{name: "Service", parent: "Direct Income", accountType: "Income Account"},
		{name: "Indirect Income", parent: "Income", group: true},
		{name: "Expenses", rootType: "Expense", group: true},
		{name: "Direct Expenses", parent: "Expenses", group: true},
		{name: "Stock Expenses", parent: "Direct Expenses", group: true},
		{name: "Cost of Goods Sold", parent: "Stock Expenses", accountType: "Cost of Goods Sold"},
		{name: "Stock Adjustment", parent: "Stock Expenses", accountType: "Stock Adjustment"},
		{name: "Indirect Expenses", parent: "Expenses", group: true},
		{name: "Administrative Expenses", parent: "Indirect Expenses"},
		{name: "Exchange Gain/Loss", parent: "Indirect Expenses"},
		{name: "Round Off", parent: "Indirect Expenses", accountType: "Round Off"},
		{name: "Write Off", parent: "Indirect Expenses"},
	}
	if c.Currency != "USD" {
		specs = append(specs[:4], append([]accountSpec{{name: "Debtors USD", parent: "Accounts Receivable", accountType: "Receivable", foreignUSD: true}}, specs[4:]...)...)
	}
	return specs
}

func (g *generator) genCompany(c *companyInfo, i int) {
	d := g.newDoc("Company", c.Name, "Administrator", setupTime)
	f := d.Fields
	f["company_name"] = c.Name
	f["abbr"] = c.Abbr
	f["default_currency"] = c.Currency
	f["country"] = c.Country
	f["domain"] = "Distribution"
	f["create_chart_of_accounts_based_on"] = "Standard Template"
	f["chart_of_accounts"] = "Standard"
	f["tax_id"] = []string{"123-456-789", "51 824 753 556", "94-1234567"}[i]
	f["date_of_establishment"] = []string{"2012-04-01", "2015-07-01", "2018-01-15"}[i]
	f["default_bank_account"] = c.acct(c.Bank)
	f["default_cash_account"] = c.acct("Cash")
	f["default_receivable_account"] = c.acct("Debtors")
	f["default_payable_account"] = c.acct("Creditors")
	f["default_income_account"] = c.acct("Sales")
	f["default_expense_account"] = c.acct("Cost of Goods Sold")
	f["cost_center"] = c.acct("Main")
	f["round_off_account"] = c.acct("Round Off")
	f["round_off_cost_center"] = c.acct("Main")
	f["write_off_account"] = c.acct("Write Off")
	f["exchange_gain_loss_account"] = c.acct("Exchange Gain/Loss")
	f["default_inventory_account"] = c.acct("Stock In Hand")
	f["stock_adjustment_account"] = c.acct("Stock Adjustment")
	f["stock_received_but_not_billed"] = c.acct("Stock Received But Not Billed")
	f["email"] = "accounts@" + []string{"demo-nz", "demo-au", "demo-us"}[i] + ".example"
	f["phone_no"] = []string{"+64 9 555 0100", "+61 2 5550 0100", "+1 415 555 0100"}[i]
	f["website"] = "https://" + []string{"demo-nz", "demo-au", "demo-us"}[i] + ".example"
	f["lft"] = int64(2*i + 1)
	f["rgt"] = int64(2*i + 2)
	c.doc = d
	g.ds.add(d)

	// Chart of accounts with nested sets.
	specs := chartOfAccounts(c)
	children := map[string][]accountSpec{}
	for _, s := range specs {
		children[s.parent] = append(children[s.parent], s)
	}
	counter := int64(0)
	var walk func(s accountSpec, rootType string)
	walk = func(s accountSpec, rootType string) {
		if s.rootType != "" {
			rootType = s.rootType
		}
		counter++
		a := g.newDoc("Account", c.acct(s.name), "Administrator", setupTime)
		a.Fields["account_name"] = s.name
		a.Fields["company"] = c.Name
		a.Fields["root_type"] = rootType
		if rootType == "Income" || rootType == "Expense" {
			a.Fields["report_type"] = "Profit and Loss"
		} else {
			a.Fields["report_type"] = "Balance Sheet"
		}
		if s.accountType != "" {
			a.Fields["account_type"] = s.accountType
		}
		if s.group {
			a.Fields["is_group"] = int64(1)
		}
		if s.parent != "" {
			a.Fields["parent_account"] = c.acct(s.parent)
			a.Fields["old_parent"] = c.acct(s.parent)
		}
		a.Fields["account_currency"] = c.Currency
		if s.foreignUSD {
			a.Fields["account_currency"] = "USD"
		}
		a.Fields["freeze_account"] = "No"
		a.Fields["lft"] = counter
		kids := children[s.name]
		for _, k := range kids {
			walk(k, rootType)
		}
		counter++
		a.Fields["rgt"] = counter
		g.ds.add(a)
	}
	for _, root := range children[""] {
		walk(root, "")
	}

	// Cost centres.
	root := g.newDoc("Cost Center", c.acct(c.Name), "Administrator", setupTime)
	root.Fields["cost_center_name"] = c.Name
	root.Fields["company"] = c.Name
	root.Fields["is_group"] = int64(1)
	root.Fields["lft"], root.Fields["rgt"] = int64(1), int64(4)
	g.ds.add(root)
	main := g.newDoc("Cost Center", c.acct("Main"), "Administrator", setupTime)
	main.Fields["cost_center_name"] = "Main"
	main.Fields["company"] = c.Name
	main.Fields["parent_cost_center"] = root.Name
	main.Fields["old_parent"] = root.Name
	main.Fields["lft"], main.Fields["rgt"] = int64(2), int64(3)
	g.ds.add(main)

	// Warehouses.
	wroot := g.newDoc("Warehouse", c.acct("All Warehouses"), "Administrator", setupTime)
	wroot.Fields["warehouse_name"] = "All Warehouses"
	wroot.Fields["company"] = c.Name
	wroot.Fields["is_group"] = int64(1)
	wroot.Fields["lft"], wroot.Fields["rgt"] = int64(1), int64(10)
	g.ds.add(wroot)
	for j, w := range []string{"Finished Goods", "Goods In Transit", "Stores", "Work In Progress"} {
		wd := g.newDoc("Warehouse", c.acct(w), "Administrator", setupTime)
		wd.Fields["warehouse_name"] = w
		wd.Fields["company"] = c.Name
		wd.Fields["parent_warehouse"] = wroot.Name
		wd.Fields["old_parent"] = wroot.Name
		wd.Fields["account"] = c.acct("Stock In Hand")
		if w == "Goods In Transit" {
			wd.Fields["warehouse_type"] = "Transit"
		}
		wd.Fields["lft"], wd.Fields["rgt"] = int64(2*j+2), int64(2*j+3)
		g.ds.add(wd)
	}
}
