package connectortest

import "runtime"

// Allocated returns the bytes the process allocated while run ran (after
// a collection, so garbage from before does not count): what a cost test
// bounds for one call of a tool, whose input is far smaller.
func Allocated(run func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	run()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
