package frappetest

import (
	"cmp"
	"time"
)

// customerInfo is what later stages need to know about a customer.
type customerInfo struct {
	Name, Region, Currency, Group, Territory string
	Individual, Disabled                     bool
	doc                                      *Doc
}

// demoCustomers are named like real businesses. Some share tokens
// ("Harbour Freight ...", "Acme Widgets ...", "Southern Cross Plumbing ..."),
// many carry legal suffixes, and a few contain characters that need care in
// URLs and LIKE patterns (é, ü, ā, ', &, /, %, _).
var demoCustomers = []struct {
	name, region, group string
	individual          bool
}{
	// New Zealand (NZD)
	{"Harbour Freight Ltd", "NZ", "Commercial", false},
	{"Harbour Freight Logistics", "NZ", "Wholesale", false},
	{"Kauri Timber Supplies Ltd", "NZ", "Wholesale", false},
	{"Aroha Café Limited", "NZ", "Commercial", false},
	{"Southern Cross Plumbing Ltd", "NZ", "Commercial", false},
	{"Tui Brewing Company Limited", "NZ", "Wholesale", false},
	{"Pohutukawa Health Ltd", "NZ", "Non Profit", false},
	{"Wellington Print House", "NZ", "Commercial", false},
	{"Canterbury Agricultural Co-op", "NZ", "Wholesale", false},
	{"Taranaki Engineering Ltd", "NZ", "Commercial", false},
	{"Kiwi Fresh Produce Ltd", "NZ", "Wholesale", false},
	{"Otago Outdoor Gear Limited", "NZ", "Commercial", false},
	{"Bay of Plenty Orchards Ltd", "NZ", "Wholesale", false},
	{"Waikato Dairy Services", "NZ", "Commercial", false},
	{"O'Brien & Sons Ltd", "NZ", "Commercial", false},
	{"Ngā Tāonga Design Ltd", "NZ", "Commercial", false},
	{"Aotearoa Solar Ltd", "NZ", "Commercial", false},
	{"Queenstown Adventure Tours", "NZ", "Commercial", false},
	{"Tama Ngata", "NZ", "Individual", true},
	{"Nelson Marine Supplies Ltd", "NZ", "Wholesale", false},
	{"Hawke's Bay Wines Ltd", "NZ", "Wholesale", false},
	{"Auckland City Council", "NZ", "Government", false},
	// Australia (AUD)
	{"Sydney Harbour Traders Pty Ltd", "AU", "Wholesale", false},
	{"Harbour Bridge Consulting Pty Ltd", "AU", "Commercial", false},
	{"Melbourne Coffee Roasters Pty Ltd", "AU", "Wholesale", false},
	{"Brisbane Build Co Pty Ltd", "AU", "Commercial", false},
	{"Perth Mining Supplies Pty Ltd", "AU", "Wholesale", false},
	{"Outback Logistics Pty Ltd", "AU", "Commercial", false},
	{"Great Barrier Tours Pty Ltd", "AU", "Commercial", false},
	{"Adelaide Hills Vineyards Pty Ltd", "AU", "Wholesale", false},
	{"Jane Citizen", "AU", "Individual", true},
	{"Tasman Freight Pty Ltd", "AU", "Commercial", false},
	{"Gold Coast Surf Co", "AU", "Commercial", false},
	{"Canberra Data Services Pty Ltd", "AU", "Government", false},
	{"Darwin Marine Pty Ltd", "AU", "Commercial", false},
	{"Hobart Seafoods Pty Ltd", "AU", "Wholesale", false},
	{"Southern Cross Plumbing Pty Ltd", "AU", "Commercial", false},
	{"Bondi Fitness Pty Ltd", "AU", "Commercial", false},
	{"100% Pure Juice Co Pty Ltd", "AU", "Wholesale", false},
	{"Yarra Valley Dairy Pty Ltd", "AU", "Wholesale", false},
	// United States and rest of world (USD)
	{"Acme Widgets Inc", "US", "Commercial", false},
	{"Acme Widgets LLC", "US", "Wholesale", false},
	{"Pioneer Software LLC", "US", "Commercial", false},
	{"Golden Gate Imports Inc", "US", "Wholesale", false},
	{"Lone Star Energy LLC", "US", "Commercial", false},
	{"Empire State Publishing Inc", "US", "Commercial", false},
	{"Cascade Outdoor Supply Inc", "US", "Wholesale", false},
	{"Great Lakes Shipping LLC", "US", "Commercial", false},
	{"Silicon Valley Robotics Inc", "US", "Commercial", false},
	{"Rocky Mountain Coffee LLC", "US", "Wholesale", false},
	{"Smith/Jones Partners LLC", "US", "Commercial", false},
	{"Under_Score Labs LLC", "US", "Commercial", false},
	{"Liberty Health Systems Inc", "US", "Non Profit", false},
	{"Bayou Seafood Company", "US", "Wholesale", false},
	{"Harbour Freight Inc", "US", "Wholesale", false},
	{"Pacific Rim Trading Inc", "US", "Wholesale", false},
	{"John Q. Public", "US", "Individual", true},
	{"Müller Maschinenbau GmbH", "ROW", "Commercial", false},
	{"Berliner Logistik GmbH", "ROW", "Wholesale", false},
	{"Alpine Precision GmbH", "ROW", "Commercial", false},
}

// disabledCustomers stopped trading mid-2025 and are disabled.
var disabledCustomers = map[string]bool{"Waikato Dairy Services": true, "Bondi Fitness Pty Ltd": true}

func (g *generator) genCustomers() {
	for i, c := range demoCustomers {
		info := &customerInfo{Name: c.name, Region: c.region, Group: c.group, Individual: c.individual, Disabled: disabledCustomers[c.name]}
		switch c.region {
		case "NZ":
			info.Currency, info.Territory = "NZD", "New Zealand"
		case "AU":
			info.Currency, info.Territory = "AUD", "Australia"
		case "US":
			info.Currency, info.Territory = "USD", "United States"
		default:
			info.Currency, info.Territory = "USD", "Rest Of The World"
		}
		created := setupTime.Add(time.Duration(i+1) * 26 * time.Hour)
		d := g.newDoc("Customer", c.name, "Administrator", created)
		f := d.Fields
		f["naming_series"] = "CUST-.YYYY.-"
		f["customer_name"] = c.name
		if c.individual {
			f["customer_type"] = "Individual"
		}
		f["customer_group"] = c.group
		f["territory"] = info.Territory
		f["default_currency"] = info.Currency
		f["language"] = "en"
		if info.Disabled {
			f["disabled"] = int64(1)
			setModified(d, time.Date(2025, 7, 1, 10, 0, 0, 0, time.UTC))
		}
		if !c.individual && g.rng.chance(60) {
			f["tax_id"] = g.taxID(c.region)
		}
		if g.rng.chance(70) {
			f["email_id"] = "accounts@" + slug(c.name) + ".example"
		}
		if i%7 == 3 {
			f["payment_terms"] = "50-50 Net 30/60"
		}
		info.doc = d
		g.ds.add(d)
		g.customers = append(g.customers, info)
	}
}

func (g *generator) taxID(region string) string {
	switch region {
	case "NZ":
		return itoaPad(g.rng.between(100, 999), 3) + "-" + itoaPad(g.rng.between(100, 999), 3) + "-" + itoaPad(g.rng.between(100, 999), 3)
	case "AU":
		return itoaPad(g.rng.between(10, 99), 2) + " " + itoaPad(g.rng.between(100, 999), 3) + " " + itoaPad(g.rng.between(100, 999), 3) + " " + itoaPad(g.rng.between(100, 999), 3)
	case "US":
		return itoaPad(g.rng.between(10, 99), 2) + "-" + itoaPad(g.rng.between(1000000, 9999999), 7)
	}
	return "DE" + itoaPad(g.rng.between(100000000, 999999999), 9)
}

// slug turns a business name into a lowercase ASCII host label.
func slug(s string) string {
	var b []byte
	for _, r := range collationKey(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b = append(b, byte(r))
		case len(b) > 0 && b[len(b)-1] != '-':
			b = append(b, '-')
		}
	}
	for len(b) > 0 && b[len(b)-1] == '-' {
		b = b[:len(b)-1]
	}
	return string(b)
}

func itoaPad(n, width int) string {
	s := ""
	for n > 0 || len(s) == 0 {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return leftPad(s, width)
}

// extraCustomersTime is when the extra customers were created: after every
// seeded document, so they are the most recently modified customers.
var extraCustomersTime = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

// genExtraCustomers adds Options.ExtraCustomers: plain company
// customers with no documents, in NZD unless Options.ExtraCustomerCurrency
// says otherwise, each a minute newer than the last. They push
// the seeded customers (among them "100% Pure Juice Co Pty Ltd") out of
// the most recently modified ones.
func (g *generator) genExtraCustomers() {
	for i, name := range g.opts.extraCustomers {
		d := g.newDoc("Customer", name, "Administrator", extraCustomersTime.Add(time.Duration(i)*time.Minute))
		f := d.Fields
		f["naming_series"] = "CUST-.YYYY.-"
		f["customer_name"] = name
		f["customer_group"] = "Commercial"
		f["territory"] = "New Zealand"
		f["default_currency"] = cmp.Or(g.opts.extraCustomerCurrency, "NZD")
		f["language"] = "en"
		g.ds.add(d)
	}
}
