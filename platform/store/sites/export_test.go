package sites

// SetRotateBatchSize changes RotateKeys' batch size and returns a function
// that restores it. Tests using it must not run in parallel.
func SetRotateBatchSize(n int) (restore func()) {
	old := rotateBatchSize
	rotateBatchSize = n
	return func() { rotateBatchSize = old }
}

// RecentEndedTokens is the query ListRecentServiceTokens reads the ended
// tokens with ($1 the site, $2 since, $3 how many), for EXPLAIN.
const RecentEndedTokens = recentEndedTokens

// CountEndedTokens is the query ListRecentServiceTokens counts the ended
// tokens with ($1 the site, $2 since, $3 how many at most), for EXPLAIN.
const CountEndedTokens = countEndedTokens

// PruneTokensLock is the advisory lock PruneServiceTokens takes.
const PruneTokensLock = pruneTokensLock

// PruneEndedTokens is PruneServiceTokens' statement ($1 the cutoff, $2 the
// batch), for EXPLAIN.
const PruneEndedTokens = pruneEndedTokens
