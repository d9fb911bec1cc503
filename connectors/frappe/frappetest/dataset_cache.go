package frappetest

import (
	"sync"
	"time"
)

// The generated data is read-only, so simulators share it: the test
// suites create many simulators and should pay for generation once per
// distinct (today, ExtraSalesInvoices) pair. The cache keeps the most
// recently used few datasets.

const datasetCacheSize = 4

type datasetKey struct {
	today string
	extra int
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
func sharedDataset(today time.Time, extra int) (*registry, *Dataset) {
	key := datasetKey{today: fmtDate(today), extra: max(extra, 0)}
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
		e.data = buildDataset(e.reg, today, genOptions{extraSalesInvoices: key.extra})
	})
	return e.reg, e.data
}
