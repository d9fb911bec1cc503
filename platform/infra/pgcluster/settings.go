package pgcluster

// EphemeralSettings returns server settings for throwaway clusters (tests,
// cmd/pgrun) that trade crash safety for speed: nothing is fsynced, so a
// machine crash can corrupt the cluster, which is then simply thrown away.
// It also allows enough connections for `go test ./...` running several test
// binaries, each with its own pools, against one server.
func EphemeralSettings() map[string]string {
	return map[string]string{
		"fsync":              "off",
		"synchronous_commit": "off",
		"full_page_writes":   "off",
		"max_connections":    "300",
		// Parallel query needs dynamic shared memory in /dev/shm, which is
		// small in containers; tests gain nothing from it.
		"max_parallel_workers_per_gather": "0",
	}
}
