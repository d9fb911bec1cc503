package frappetest

import "time"

// supplierInfo is what later stages need to know about a supplier.
type supplierInfo struct {
	Name, Region, Currency, Group string
	Disabled                      bool
	doc                           *Doc
}

// demoSuppliers are named like real businesses. Several share tokens
// ("Southern Cross Metals ...", "Kiwi Electrical ...", "Acme Industrial
// Supply ...") and some differ only by their legal suffix, so name
// normalisation meets real ambiguity; a few need care in URLs and LIKE
// patterns (ā, ü, ', &, %, _). "Müller Maschinenbau GmbH" is also a
// customer.
var demoSuppliers = []struct{ name, region, group string }{
	// New Zealand (NZD)
	{"Harbour Hardware Wholesale Ltd", "NZ", "Hardware"},
	{"Kiwi Electrical Supplies Ltd", "NZ", "Electrical"},
	{"Kiwi Electrical Wholesale Limited", "NZ", "Electrical"},
	{"Southern Cross Metals Ltd", "NZ", "Raw Material"},
	{"Southern Cross Metals Limited", "NZ", "Raw Material"},
	{"Tasman Timber Co", "NZ", "Raw Material"},
	{"Waitematā Power Ltd", "NZ", "Electrical"},
	{"Fletcher & Sons Builders Supplies", "NZ", "Hardware"},
	{"Auckland Office Supplies Ltd", "NZ", "Local"},
	{"Christchurch Couriers Ltd", "NZ", "Services"},
	{"Rotorua IT Services", "NZ", "Services"},
	// Australia (AUD)
	{"Sydney Steel Pty Ltd", "AU", "Raw Material"},
	{"Southern Cross Metals Pty Ltd", "AU", "Raw Material"},
	{"Melbourne Electrical Wholesalers Pty Ltd", "AU", "Electrical"},
	{"Queensland Packaging Pty Ltd", "AU", "Distributor"},
	{"Perth Industrial Supplies Pty Ltd", "AU", "Hardware"},
	{"Outback Transport Pty Ltd", "AU", "Services"},
	{"Coastal Office Supplies Pty Ltd", "AU", "Local"},
	{"Brisbane Tech Services Pty Ltd", "AU", "Services"},
	{"O'Connor Engineering Pty Ltd", "AU", "Hardware"},
	// United States (USD)
	{"Acme Industrial Supply Inc", "US", "Distributor"},
	{"Acme Industrial Supply LLC", "US", "Distributor"},
	{"Great Lakes Components LLC", "US", "Electrical"},
	{"Silicon Valley Electronics Inc", "US", "Electrical"},
	{"Lone Star Metals LLC", "US", "Raw Material"},
	{"Bay Area Office Depot Inc", "US", "Local"},
	{"Atlantic Freight Services LLC", "US", "Services"},
	{"Pioneer Packaging Co", "US", "Distributor"},
	{"Summit Cloud Services Inc", "US", "Services"},
	{"100% Recycled Paper Co LLC", "US", "Local"},
	{"Widgets_R_Us Inc", "US", "Hardware"},
	// Rest of world (USD)
	{"Müller Maschinenbau GmbH", "ROW", "Hardware"},
	{"Shenzhen Bright Electronics Co Ltd", "ROW", "Electrical"},
	{"Bavaria Werkzeug GmbH", "ROW", "Hardware"},
	{"Nordic Solar AB", "ROW", "Electrical"},
	{"Osaka Precision KK", "ROW", "Raw Material"},
}

var supplierGroups = []string{"Distributor", "Electrical", "Hardware", "Local", "Raw Material", "Services"}

func (g *generator) genBuyingMasters() {
	g.genTree("Supplier Group", "supplier_group_name", "parent_supplier_group", "All Supplier Groups", supplierGroups)
	for i, s := range demoSuppliers {
		info := &supplierInfo{Name: s.name, Region: s.region, Group: s.group}
		var country string
		switch s.region {
		case "NZ":
			info.Currency, country = "NZD", "New Zealand"
		case "AU":
			info.Currency, country = "AUD", "Australia"
		case "US":
			info.Currency, country = "USD", "United States"
		default:
			info.Currency = "USD"
			country = map[string]string{"Müller Maschinenbau GmbH": "Germany", "Bavaria Werkzeug GmbH": "Germany",
				"Shenzhen Bright Electronics Co Ltd": "China", "Nordic Solar AB": "Sweden", "Osaka Precision KK": "Japan"}[s.name]
		}
		info.Disabled = s.name == "Tasman Timber Co"
		created := setupTime.Add(time.Duration(i+1) * 29 * time.Hour)
		d := g.newDoc("Supplier", s.name, "Administrator", created)
		f := d.Fields
		f["naming_series"] = "SUP-.YYYY.-"
		f["supplier_name"] = s.name
		f["supplier_group"] = s.group
		f["country"] = country
		f["default_currency"] = info.Currency
		f["language"] = "en"
		if g.rng.chance(55) {
			f["tax_id"] = g.taxID(s.region)
		}
		if g.rng.chance(40) {
			f["website"] = "https://" + slug(s.name) + ".example"
		}
		if s.group == "Services" || s.group == "Local" {
			f["payment_terms"] = "Net 14"
		}
		if info.Disabled {
			f["disabled"] = int64(1)
			setModified(d, time.Date(2025, 9, 1, 10, 0, 0, 0, time.UTC))
		}
		if s.name == "Bavaria Werkzeug GmbH" {
			f["on_hold"] = int64(1)
			f["hold_type"] = "Payments"
		}
		info.doc = d
		g.ds.add(d)
		g.suppliers = append(g.suppliers, info)
	}
}

// companySuppliers returns the suppliers a company buys from: home
// suppliers in its currency and foreign ones it is invoiced by in USD.
func (g *generator) companySuppliers(c *companyInfo) (home, foreign []*supplierInfo) {
	for _, s := range g.suppliers {
		switch {
		case c.Abbr == "DHNZ" && s.Region == "NZ", c.Abbr == "DTAU" && s.Region == "AU",
			c.Abbr == "DSUS" && (s.Region == "US" || s.Region == "ROW"):
			home = append(home, s)
		case c.Abbr != "DSUS" && (s.Region == "ROW" || s.Name == "Silicon Valley Electronics Inc" || s.Name == "Acme Industrial Supply Inc"):
			foreign = append(foreign, s)
		}
	}
	return home, foreign
}
