package frappetest

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// The generated data is read-only, so simulators share it: the test
// suites create many simulators and should pay for generation once per
// distinct (today, ExtraSalesInvoices, ExtraCustomers). The cache keeps the most
// recently used few datasets.

const datasetCacheSize = 4

type datasetKey struct {
	today string
	extra int
	// customers is Options.ExtraCustomers joined by newlines.
	customers string
	// currency is Options.ExtraCustomerCurrency.
	currency string
}

type datasetEntry struct {
	key  datasetKey
	once sync.Once
	reg  *registry
	data *Dataset
}

var datasetCache struct {
	mu      sync.Mutex
	entries []*datasetEntry // most recently used last
}

// sharedDataset returns the registry and dataset for today and extra,
// generating them at most once while they stay cached.
func sharedDataset(today time.Time, extra int, customers []string, currency string) (*registry, *Dataset) {
	key := datasetKey{today: fmtDate(today), extra: max(extra, 0), customers: strings.Join(customers, "\n"), currency: currency}
	datasetCache.mu.Lock()
	var e *datasetEntry
	for i, c := range datasetCache.entries {
		if c.key == key {
			e = c
			datasetCache.entries = append(datasetCache.entries[:i], datasetCache.entries[i+1:]...)
			break
		}
	}
	if e == nil {
		e = &datasetEntry{key: key}
		if len(datasetCache.entries) >= datasetCacheSize {
			datasetCache.entries = datasetCache.entries[1:]
		}
	}
	datasetCache.entries = append(datasetCache.entries, e)
	datasetCache.mu.Unlock()
	e.once.Do(func() {
		e.reg = newRegistry()
		e.data = buildDataset(e.reg, today, genOptions{extraSalesInvoices: key.extra, extraCustomers: slices.Clone(customers), extraCustomerCurrency: currency})
	})
	return e.reg, e.data
}
