package wan

import (
	"sync"
	"time"
)

// chunkSize is the unit in which response bodies are paced. Small chunks let concurrent
// streams interleave on the shared bucket.
const chunkSize = 16 << 10

// bucket is a token bucket counted in bytes. Callers reserve bytes and then sleep for the
// returned duration. The balance may go negative, which queues later callers behind
// earlier ones in arrival order, so streams sharing a bucket take turns chunk by chunk.
// A nil bucket or one with a non-positive rate is unlimited.
type bucket struct {
	mu     sync.Mutex
	rate   float64 // bytes per second; <= 0 means unlimited
	burst  float64
	tokens float64
	last   time.Time
}

// newBucket returns a bucket refilling at bps bytes per second, holding one chunk.
func newBucket(bps int64) *bucket {
	b := &bucket{last: time.Now()}
	b.setRate(bps)
	return b
}

// burstFor is the bucket depth used for a rate: two chunks, or 20 ms worth of bytes at
// high rates, so that a sleep that overshoots by a few milliseconds (timer slack, a busy
// scheduler) is made up on the next chunk instead of lowering the rate.
func burstFor(bps int64) float64 {
	return float64(max(2*chunkSize, bps/50))
}

// refill credits the tokens earned since the last update. Callers hold b.mu.
func (b *bucket) refill(now time.Time) {
	if b.rate > 0 {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
}

// reserve takes n bytes from the bucket and returns how long the caller must wait before
// sending them.
func (b *bucket) reserve(n int) time.Duration {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rate <= 0 {
		return 0
	}
	b.refill(time.Now())
	b.tokens -= float64(n)
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// refund gives back n bytes reserved but never sent, for example because the client went
// away while waiting.
func (b *bucket) refund(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rate <= 0 {
		return
	}
	b.refill(time.Now())
	b.tokens = min(b.burst, b.tokens+float64(n))
}

// setRate changes the refill rate; bps <= 0 makes the bucket unlimited. Tokens earned at
// the old rate are kept; a bucket leaving the unlimited state starts with one chunk, so a
// stream's first chunk goes out at once.
func (b *bucket) setRate(bps int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(time.Now())
	if b.rate <= 0 || bps <= 0 {
		b.tokens = chunkSize
	}
	b.rate = float64(bps)
	b.burst = burstFor(bps)
	b.tokens = min(b.tokens, b.burst)
}
