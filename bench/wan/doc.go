// Package wan serves files over HTTP the way a repository server across a wide-area
// network would: every response is delayed by a fixed latency (plus optional jitter)
// before its headers, each response stream is capped to a per-connection byte rate, all
// responses together share a total byte rate, and an optional concurrency limit answers
// 429 Too Many Requests with a Retry-After header.
//
// It exists so that a sync's wall time can be measured against its download concurrency
// on one machine. Ideal gives the matching lower bound to compare measurements with.
//
// Shaping is done by pacing writes in 16 KiB chunks against token buckets and sleeping
// until each chunk's tokens are due, so many concurrent slow streams cost little CPU.
package wan
