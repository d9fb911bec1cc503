package frappetest

import "sort"

// ledgerIndex holds the lookups the reports need, built once per Dataset
// on first use (the data never changes afterwards).
type ledgerIndex struct {
	accounts     map[string]*Doc
	companyAccts map[string][]*Doc // by lft
	gl           map[string][]*Doc // company -> GL Entries in creation order
	ple          map[string][]*Doc // company -> Payment Ledger Entries in creation order
	sle          []*Doc            // by posting_datetime, creation
	billNo       map[string]string // submitted Purchase Invoice -> bill_no
}

func (ds *Dataset) ledger() *ledgerIndex {
	if ds.base != nil {
		return ds.base.ledger() // writes never touch the ledgers
	}
	ds.ledgerOnce.Do(func() { ds.ledgerIx = buildLedgerIndex(ds) })
	return ds.ledgerIx
}

func buildLedgerIndex(ds *Dataset) *ledgerIndex {
	ix := &ledgerIndex{accounts: map[string]*Doc{}, companyAccts: map[string][]*Doc{}, gl: map[string][]*Doc{},
		ple: map[string][]*Doc{}, billNo: map[string]string{}}
	for _, a := range ds.List("Account") {
		ix.accounts[a.Name] = a
		ix.companyAccts[a.Str("company")] = append(ix.companyAccts[a.Str("company")], a)
	}
	for _, list := range ix.companyAccts {
		sort.SliceStable(list, func(i, j int) bool { return list[i].Int("lft") < list[j].Int("lft") })
	}
	byCreation := func(docs []*Doc) []*Doc {
		out := append([]*Doc(nil), docs...)
		sort.SliceStable(out, func(i, j int) bool { return out[i].Str("creation") < out[j].Str("creation") })
		return out
	}
	for _, e := range byCreation(ds.List("GL Entry")) {
		ix.gl[e.Str("company")] = append(ix.gl[e.Str("company")], e)
	}
	for _, e := range byCreation(ds.List("Payment Ledger Entry")) {
		ix.ple[e.Str("company")] = append(ix.ple[e.Str("company")], e)
	}
	ix.sle = append([]*Doc(nil), ds.List("Stock Ledger Entry")...)
	sort.SliceStable(ix.sle, func(i, j int) bool {
		a, b := ix.sle[i], ix.sle[j]
		if a.Str("posting_datetime") != b.Str("posting_datetime") {
			return a.Str("posting_datetime") < b.Str("posting_datetime")
		}
		return a.Str("creation") < b.Str("creation")
	})
	for _, pi := range ds.List("Purchase Invoice") {
		if pi.Int("docstatus") == 1 && pi.Str("bill_no") != "" {
			ix.billNo[pi.Name] = pi.Str("bill_no")
		}
	}
	return ix
}

// descendants returns name and every node below it in a nested-set tree
// doctype (lft/rgt), or nil when name does not exist.
func (ds *Dataset) descendants(doctype, name string) []string {
	n := ds.Get(doctype, name)
	if n == nil {
		return nil
	}
	// Company trees (Account, Cost Center, Warehouse) are numbered per
	// company here, so stay within the node's company.
	lft, rgt, company := n.Int("lft"), n.Int("rgt"), n.Str("company")
	var out []string
	for _, d := range ds.List(doctype) {
		if d.Int("lft") >= lft && d.Int("rgt") <= rgt && d.Str("company") == company {
			out = append(out, d.Name)
		}
	}
	return out
}
