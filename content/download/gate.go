package download

import (
	"context"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// The adaptive controller's settings (see the package documentation).
const (
	adaptiveBound = 32                     // the bound when Adaptive and DownloadConcurrency is 0
	adaptiveStart = 2                      // the first limit
	probeWindow   = 500 * time.Millisecond // throughput is measured over windows this long
	probeMargin   = 0.10                   // a change must move throughput by more than this
	holdWindows   = 10                     // windows at the knee before probing upwards again
	ceilingFor    = time.Minute            // how long a limit the upstream refused is not probed again
)

// phase is what the adaptive controller is doing.
type phase int

const (
	slowStart phase = iota // doubling the limit while throughput grows
	trimming               // lowering it while throughput holds
	holding                // at the knee, waiting before the next probe
	probing                // raising it additively while throughput grows
)

// gate admits requests: at most limit at once, in arrival order, and none before a
// pause (Retry-After) ends. A fixed gate's limit is its bound; an adaptive one moves its
// limit between 1 and the bound by measuring throughput (add) and halving it when the
// upstream is overloaded.
type gate struct {
	mu         sync.Mutex
	bound      int
	limit      int
	inUse      int
	waiters    []chan struct{} // FIFO; a waiter's channel is closed when it is given a slot
	pauseUntil time.Time
	spread     time.Duration // new requests resume over this long after a pause: half of it

	adaptive bool
	window   time.Duration
	winStart time.Time // zero until the first event
	winBytes int64
	winFull  bool // a request waited for a slot during the window: the limit was binding
	phase    phase
	ref      float64 // bytes/s at refLimit, what a change is judged against
	refLimit int     // 0 while there is no reference
	holdLeft int
	lastCut  time.Time // the last halving
	ceiling  int       // the limit at the last overload; not probed again before ceilUntil
	ceilTill time.Time

	// Knobs for tests.
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func(max time.Duration) time.Duration // uniform in [0, max]
}

func newGate(bound int, adaptive bool) *gate {
	g := &gate{bound: bound, limit: bound, adaptive: adaptive, window: probeWindow, now: time.Now, sleep: sleep,
		jitter: func(m time.Duration) time.Duration { return rand.N(m + 1) }}
	if adaptive {
		g.limit = min(adaptiveStart, bound)
	}
	return g
}

// ticket is one admitted request's slot.
type ticket struct {
	g        *gate
	admitted time.Time
	once     sync.Once
}

// release gives the slot back; more calls do nothing.
func (t *ticket) release() {
	t.once.Do(func() {
		g := t.g
		g.mu.Lock()
		defer g.mu.Unlock()
		g.inUse--
		g.tick(g.now())
		g.wake()
	})
}

// acquire waits for the end of any pause and for a slot. resumed is when the caller's
// own backoff ended (zero on a first attempt): a pause ending by then was already waited
// out, so a retry goes first. The error is ctx's.
func (g *gate) acquire(ctx context.Context, resumed time.Time) (*ticket, error) {
	for {
		if err := g.waitPause(ctx, resumed); err != nil {
			return nil, err
		}
		if err := g.take(ctx); err != nil {
			return nil, err
		}
		g.mu.Lock()
		now := g.now()
		if g.pauseLeft(now, resumed) > 0 {
			// A pause began while this request queued: give the slot back and wait.
			g.inUse--
			g.wake()
			g.mu.Unlock()
			continue
		}
		g.mu.Unlock()
		return &ticket{g: g, admitted: now}, nil
	}
}

// waitPause waits for the end of a pause and a jitter of up to half the pause, so that
// the requests held back do not all hit the upstream at the same instant.
func (g *gate) waitPause(ctx context.Context, resumed time.Time) error {
	for {
		g.mu.Lock()
		d := g.pauseLeft(g.now(), resumed)
		spread := g.spread
		g.mu.Unlock()
		if d <= 0 {
			return nil
		}
		if err := g.sleep(ctx, d+g.jitter(spread)); err != nil {
			return err
		}
	}
}

// pauseLeft is how long a request must still wait for the pause to end.
func (g *gate) pauseLeft(now, resumed time.Time) time.Duration {
	if !g.pauseUntil.After(resumed) {
		return 0
	}
	return g.pauseUntil.Sub(now)
}

// take waits for a slot, queueing behind earlier waiters.
func (g *gate) take(ctx context.Context) error {
	g.mu.Lock()
	g.tick(g.now())
	if g.inUse < g.limit && len(g.waiters) == 0 {
		g.inUse++
		g.mu.Unlock()
		return nil
	}
	g.winFull = true
	ch := make(chan struct{})
	g.waiters = append(g.waiters, ch)
	g.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if i := slices.Index(g.waiters, ch); i >= 0 {
			g.waiters = slices.Delete(g.waiters, i, i+1)
		} else { // given a slot meanwhile: pass it on
			g.inUse--
			g.wake()
		}
		return context.Cause(ctx)
	}
}

// wake hands free slots to waiters in order; g.mu is held.
func (g *gate) wake() {
	for g.inUse < g.limit && len(g.waiters) > 0 {
		close(g.waiters[0])
		g.waiters = g.waiters[1:]
		g.inUse++
	}
}

// overloaded records a 429 or 503 answer to a request admitted at admitted: new requests
// wait until after has passed (when positive), and an adaptive limit is halved unless
// the request was admitted before the last halving, which already answered the overload
// it was part of.
func (g *gate) overloaded(admitted time.Time, after time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if until := now.Add(after); after > 0 && until.After(g.pauseUntil) {
		g.pauseUntil, g.spread = until, after/2
	}
	if !g.adaptive || admitted.Before(g.lastCut) {
		return
	}
	// The requests in flight now (this one included) were one too many; when that is more
	// than half the limit, cut to it instead, so that a fixed upstream cap is found in a
	// step or two rather than undershot by half.
	g.ceiling, g.ceilTill = g.limit, now.Add(ceilingFor)
	g.limit = max(1, min(g.limit-1, max(g.limit/2, g.inUse-1)))
	g.lastCut = now
	g.refLimit = 0
	g.hold()
	g.restart(now)
}

// add counts body bytes received, for the throughput probe.
func (g *gate) add(n int) {
	if !g.adaptive || n <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.winBytes += int64(n)
	g.tick(g.now())
}

// tick ends the measurement window when it is due and lets the controller judge it;
// g.mu is held. A window counts only when the limit was binding (a request waited), no
// pause overlapped it and no halving was still taking effect.
func (g *gate) tick(now time.Time) {
	if !g.adaptive {
		return
	}
	if g.winStart.IsZero() || g.inUse > g.limit {
		g.restart(now) // a lowered limit is measured once requests beyond it are done
		return
	}
	el := now.Sub(g.winStart)
	if el < g.window {
		return
	}
	rate := float64(g.winBytes) / el.Seconds()
	valid := g.winFull && !g.pauseUntil.After(g.winStart)
	g.restart(now)
	if valid {
		g.judge(rate, g.most(now))
		g.wake()
	}
}

func (g *gate) restart(now time.Time) {
	g.winStart, g.winBytes, g.winFull = now, 0, len(g.waiters) > 0
}

// most is what the limit may be raised to now: the bound, or less than a limit the
// upstream refused within the last ceilingFor.
func (g *gate) most(now time.Time) int {
	if now.Before(g.ceilTill) {
		return max(1, min(g.bound, g.ceiling-1))
	}
	return g.bound
}

// judge moves the limit after a window that measured rate bytes/s at the current limit;
// it is raised no higher than most.
func (g *gate) judge(rate float64, most int) {
	switch g.phase {
	case slowStart:
		if g.refLimit == 0 || rate > g.ref*(1+probeMargin) {
			g.ref, g.refLimit = rate, g.limit
			if g.limit >= most {
				g.hold()
				return
			}
			g.limit = min(2*g.limit, most)
			return
		}
		// Doubling did not pay: the knee is at or below refLimit. Trim down from there.
		g.ref, g.limit = max(g.ref, rate), g.refLimit
		g.trim()
	case trimming:
		if rate >= g.ref*(1-probeMargin) {
			g.refLimit = g.limit // as fast with fewer requests in flight
			g.trim()
			return
		}
		g.limit = g.refLimit
		g.hold()
	case holding:
		g.ref, g.refLimit = rate, g.limit
		if g.holdLeft--; g.holdLeft > 0 || g.limit >= most {
			return
		}
		g.phase = probing
		g.limit = min(g.limit+step(g.limit), most)
	case probing:
		if rate > g.ref*(1+probeMargin) {
			g.ref, g.refLimit = rate, g.limit
			if g.limit >= most {
				g.hold()
				return
			}
			g.limit = min(g.limit+step(g.limit), most)
			return
		}
		g.limit = g.refLimit
		g.hold()
	}
}

// trim lowers the limit by a step to see whether throughput holds with fewer requests.
func (g *gate) trim() {
	if g.limit <= 1 {
		g.hold()
		return
	}
	g.phase = trimming
	g.limit -= step(g.limit)
}

func (g *gate) hold() { g.phase, g.holdLeft = holding, holdWindows }

// step is the additive change from limit l: a quarter of it, at least 1.
func step(l int) int { return max(1, l/4) }

// current returns the limit.
func (g *gate) current() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit
}

// used returns the number of slots taken.
func (g *gate) used() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inUse
}

// counting reports the bytes read from r to the gate's throughput probe.
type counting struct {
	r io.Reader
	g *gate
}

func (c counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.g.add(n)
	return n, err
}
