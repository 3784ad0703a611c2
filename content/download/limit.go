package download

import (
	"context"
	"sync"
	"time"
)

// limiter is a token bucket allowing rate requests per second with bursts of up to rate.
// A waiter reserves its token first, so waiters are served in order.
type limiter struct {
	mu     sync.Mutex
	rate   float64
	tokens float64
	last   time.Time
}

func newLimiter(rate int) *limiter {
	return &limiter{rate: float64(rate), tokens: float64(rate), last: time.Now()}
}

// reserve takes a token at now and returns how long to wait before using it.
func (l *limiter) reserve(now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el := now.Sub(l.last); el > 0 {
		l.tokens = min(l.rate, l.tokens+el.Seconds()*l.rate)
		l.last = now
	}
	l.tokens--
	if l.tokens >= 0 {
		return 0
	}
	return time.Duration(-l.tokens / l.rate * float64(time.Second))
}

// unreserve gives back a token that a cancelled waiter did not use.
func (l *limiter) unreserve() {
	l.mu.Lock()
	l.tokens = min(l.rate, l.tokens+1)
	l.mu.Unlock()
}

// wait blocks until a request may be sent, or ctx ends.
func (l *limiter) wait(ctx context.Context) error {
	d := l.reserve(time.Now())
	if d == 0 {
		return nil
	}
	if err := sleep(ctx, d); err != nil {
		l.unreserve()
		return err
	}
	return nil
}
