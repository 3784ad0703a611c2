package load

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// histogram is a concurrent log-linear histogram of durations in nanoseconds: exact below
// 128 ns, then 64 buckets per power of two, so quantiles are within about 1.6%. It keeps
// memory fixed (about 30 KiB) however many requests a run makes.
type histogram struct {
	counts [histBuckets]atomic.Int64
	n      atomic.Int64
	max    atomic.Int64
}

const (
	histSubBits = 6
	histLinear  = 1 << (histSubBits + 1) // values below are their own bucket
	histBuckets = histLinear + (64-histSubBits-1)*(1<<histSubBits)
)

func (h *histogram) add(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[histIndex(uint64(v))].Add(1)
	h.n.Add(1)
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			return
		}
	}
}

func histIndex(v uint64) int {
	if v < histLinear {
		return int(v)
	}
	shift := bits.Len64(v) - (histSubBits + 1)
	top := v >> shift // in [64, 128)
	return histLinear + (shift-1)<<histSubBits + int(top) - 1<<histSubBits
}

// histValue is the midpoint of bucket i.
func histValue(i int) uint64 {
	if i < histLinear {
		return uint64(i)
	}
	i -= histLinear
	shift := i>>histSubBits + 1
	top := uint64(i&(1<<histSubBits-1) + 1<<histSubBits)
	return top<<shift + (uint64(1)<<shift)/2
}

// quantile returns the q-quantile (0 < q <= 1), capped at the exact maximum.
func (h *histogram) quantile(q float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	var seen int64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			return min(time.Duration(histValue(i)), time.Duration(h.max.Load()))
		}
	}
	return time.Duration(h.max.Load())
}
