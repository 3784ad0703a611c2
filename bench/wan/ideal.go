package wan

import (
	"math/bits"
	"slices"
	"time"
)

// Ideal returns the lower bound on the time to download files of the given sizes with c
// concurrent streams through a Server shaped by cfg. It is the larger of two bounds:
//
//   - the total bound: the sum of sizes divided by cfg.TotalBps (0 when unlimited);
//   - the stream bound: the makespan of a greedy (list) schedule that takes the files in
//     the given order and gives each to the stream that becomes free first, where a file
//     costs cfg.Latency + size/cfg.PerConnBps (the size term is 0 when unlimited).
//
// The greedy schedule is what a client with c workers pulling from a queue achieves, not
// the optimal packing: sizes {1, 1, 3} on 2 streams give 4 units, not 3. Jitter is
// ignored (its mean is zero), as are the interactions between the two caps and the
// client's own overheads, so measured times should land at or above Ideal. A c below 1
// counts as 1.
func Ideal(cfg Config, sizes []int64, c int) time.Duration {
	return max(totalBound(cfg.TotalBps, sizes), streamBound(cfg, sizes, c))
}

// totalBound is the time to push all sizes through the shared cap.
func totalBound(bps int64, sizes []int64) time.Duration {
	var sum int64
	for _, n := range sizes {
		sum += max(n, 0)
	}
	return transferTime(sum, bps)
}

// streamBound is the makespan of the greedy schedule of sizes over c streams.
func streamBound(cfg Config, sizes []int64, c int) time.Duration {
	if len(sizes) == 0 {
		return 0
	}
	free := make([]time.Duration, min(max(c, 1), len(sizes)))
	for _, n := range sizes {
		i := earliest(free)
		free[i] += cfg.Latency + transferTime(n, cfg.PerConnBps)
	}
	return slices.Max(free)
}

// earliest returns the index of the smallest element of free (the first among equals).
func earliest(free []time.Duration) int {
	best := 0
	for i, t := range free {
		if t < free[best] {
			best = i
		}
	}
	return best
}

// transferTime is n bytes at bps bytes per second, exact to the nanosecond (rounded
// down); 0 when bps is unlimited or n is not positive.
func transferTime(n, bps int64) time.Duration {
	if bps <= 0 || n <= 0 {
		return 0
	}
	secs := n / bps
	hi, lo := bits.Mul64(uint64(n%bps), uint64(time.Second))
	nanos, _ := bits.Div64(hi, lo, uint64(bps))
	return time.Duration(secs)*time.Second + time.Duration(nanos)
}
