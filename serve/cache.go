package serve

// resolutionKey names a path within what a distribution serves: a publication, or a
// repository version (repository and number). The distribution is part of the key
// because a miss consults the distribution's superseded publications.
type resolutionKey struct {
	dist, pub, repo string // pulp IDs, never reused
	number          int64
	path            string
}
