package serve

// resolutionKey names a path within what a distribution serves: a publication, or a
// repository version (repository and number). The distribution is part of the key
// because a miss consults the distribution's superseded publications; reclaimed (the
// repository's last reclaim_space) because a reclaim turns stored files into on-demand
// ones under the same publication or version.
type resolutionKey struct {
	dist, pub, repo   string // pulp IDs, never reused
	number, reclaimed int64
	path              string
}
