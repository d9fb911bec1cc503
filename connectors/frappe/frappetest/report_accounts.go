package frappetest

import "sort"

// The chart-of-accounts tree as financial_statements.filter_accounts
// orders it: roots Asset, Liability, Equity, Income, Expense (Balance
// Sheet before Profit and Loss), children by name, depth as indent.

type acctNode struct {
	doc    *Doc
	indent int64
	kids   []*acctNode
	parent *acctNode
}

// accountTree returns the accounts of company (restricted to rootType when
// not "") in report order.
func accountTree(ix *ledgerIndex, company, rootType string) []*acctNode {
	var accts []*Doc
	for _, a := range ix.companyAccts[company] {
		if rootType == "" || a.Str("root_type") == rootType {
			accts = append(accts, a)
		}
	}
	nodes := map[string]*acctNode{}
	for _, a := range accts {
		nodes[a.Name] = &acctNode{doc: a}
	}
	var roots []*acctNode
	for _, a := range accts {
		n := nodes[a.Name]
		if p := nodes[a.Str("parent_account")]; p != nil {
			n.parent = p
			p.kids = append(p.kids, n)
		} else if a.Str("parent_account") == "" {
			roots = append(roots, n)
		}
	}
	rootRank := func(a *Doc) int {
		r := map[string]int{"Asset": 0, "Liability": 1, "Equity": 2, "Income": 3, "Expense": 4}[a.Str("root_type")]
		if a.Str("report_type") != "Balance Sheet" {
			r += 10
		}
		return r
	}
	sort.SliceStable(roots, func(i, j int) bool { return rootRank(roots[i].doc) < rootRank(roots[j].doc) })
	var out []*acctNode
	var walk func(list []*acctNode, level int64)
	walk = func(list []*acctNode, level int64) {
		if level >= 20 {
			return
		}
		for _, n := range list {
			n.indent = level
			out = append(out, n)
			sort.SliceStable(n.kids, func(i, j int) bool { return n.kids[i].doc.Name < n.kids[j].doc.Name })
			walk(n.kids, level+1)
		}
	}
	walk(roots, 0)
	return out
}

// accountName is "<number> - <name>" for numbered accounts.
func accountName(a *Doc) string {
	if n := a.Str("account_number"); n != "" {
		return n + " - " + a.Str("account_name")
	}
	return a.Str("account_name")
}

// nilIfEmpty is Python None for an empty string.
func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
