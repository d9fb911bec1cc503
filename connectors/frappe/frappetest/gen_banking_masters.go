package frappetest

// Banks, the companies' Bank Accounts (linked to their GL bank accounts)
// and Modes of Payment.

var demoBanks = []struct{ abbr, bank, swift, accountName, number string }{
	{"DHNZ", "ANZ Bank New Zealand", "ANZBNZ22", "Business Account", "01-0102-0123456-00"},
	{"DTAU", "Westpac", "WPACAU2S", "Business One", "032-000 123456"},
	{"DSUS", "JPMorgan Chase", "CHASUS33", "Business Checking", "000123456789"},
}

func (g *generator) genBankingMasters() {
	g.bankAccounts = map[string]*Doc{}
	for _, b := range demoBanks {
		bank := g.newDoc("Bank", b.bank, "Administrator", setupTime)
		bank.Fields["bank_name"] = b.bank
		bank.Fields["swift_number"] = b.swift
		g.ds.add(bank)
	}
	for _, b := range demoBanks {
		var c *companyInfo
		for _, cc := range g.companies {
			if cc.Abbr == b.abbr {
				c = cc
			}
		}
		ba := g.newDoc("Bank Account", b.accountName+" - "+b.bank, "Administrator", setupTime)
		f := ba.Fields
		f["account_name"] = b.accountName
		f["account"] = c.acct(c.Bank)
		f["bank"] = b.bank
		f["is_default"] = int64(1)
		f["is_company_account"] = int64(1)
		f["company"] = c.Name
		f["bank_account_no"] = b.number
		g.ds.add(ba)
		g.bankAccounts[c.Name] = ba
	}
	for _, m := range []struct{ name, typ string }{
		{"Bank Draft", "Bank"}, {"Cash", "Cash"}, {"Cheque", "Bank"}, {"Credit Card", "Bank"}, {"Wire Transfer", "Bank"},
	} {
		d := g.newDoc("Mode of Payment", m.name, "Administrator", setupTime)
		d.Fields["mode_of_payment"] = m.name
		d.Fields["type"] = m.typ
		for _, c := range g.companies {
			acct := c.acct(c.Bank)
			if m.typ == "Cash" {
				acct = c.acct("Cash")
			}
			g.addChild(d, "accounts", map[string]any{"company": c.Name, "default_account": acct})
		}
		g.ds.add(d)
	}
}
