package frappetest

import (
	"fmt"
	"testing"
)

func TestTmpStats(t *testing.T) {
	ds := buildDataset(newRegistry(), defaultToday)
	for _, dt := range ds.DocTypes() {
		if n := len(ds.List(dt)); n > 0 {
			fmt.Println(dt, n)
		}
	}
	st := map[string]int{}
	cur := map[string]int{}
	for _, d := range ds.List("Sales Invoice") {
		st[d.Str("status")]++
		cur[d.Str("company")+"/"+d.Str("currency")+"/"+d.Str("party_account_currency")]++
	}
	fmt.Println(st)
	fmt.Println(cur)
	so := map[string]int{}
	for _, d := range ds.List("Sales Order") {
		so[d.Str("status")]++
	}
	fmt.Println(so)
	d := ds.List("Sales Invoice")[5]
	fmt.Println(d.Name, d.Fields["grand_total"], d.Fields["rounded_total"], d.Fields["outstanding_amount"], d.Fields["in_words"], d.Fields["base_in_words"], d.Fields["conversion_rate"])
	fmt.Println(ds.List("Sales Invoice")[len(ds.List("Sales Invoice"))-1].Name)
}
