package wan

import (
	"testing"
	"time"
)

func TestIdeal(t *testing.T) {
	const kB = 1000
	perConn := Config{Latency: 100 * time.Millisecond, PerConnBps: kB}
	tests := []struct {
		name  string
		cfg   Config
		sizes []int64
		c     int
		want  time.Duration
	}{
		{"no files", perConn, nil, 4, 0},
		{"unshaped", Config{}, []int64{5, 6}, 1, 0},
		{"one stream", perConn, []int64{kB, kB, kB}, 1, 3300 * time.Millisecond},
		{"c below 1 is 1", perConn, []int64{kB, kB, kB}, 0, 3300 * time.Millisecond},
		{"two streams", perConn, []int64{kB, kB, kB}, 2, 2200 * time.Millisecond},
		{"more streams than files", perConn, []int64{kB, kB, kB}, 20, 1100 * time.Millisecond},
		{"total cap dominates", Config{Latency: 100 * time.Millisecond, PerConnBps: kB, TotalBps: kB},
			[]int64{kB, kB, kB}, 2, 3 * time.Second},
		{"stream bound dominates", Config{Latency: 100 * time.Millisecond, PerConnBps: kB, TotalBps: 10 * kB},
			[]int64{kB, kB, kB}, 2, 2200 * time.Millisecond},
		{"latency only", Config{Latency: 50 * time.Millisecond}, make([]int64, 10), 3, 200 * time.Millisecond},
		{"total cap only", Config{TotalBps: 4 * kB}, []int64{kB, 2 * kB, 3 * kB}, 3, 1500 * time.Millisecond},
		{"greedy in order, big first", Config{PerConnBps: kB}, []int64{3 * kB, kB, kB, kB}, 2, 3 * time.Second},
		{"greedy in order, big last", Config{PerConnBps: kB}, []int64{kB, kB, 3 * kB}, 2, 4 * time.Second},
		{"fractional rate", Config{PerConnBps: 3}, []int64{1}, 1, 333333333},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Ideal(tt.cfg, tt.sizes, tt.c); got != tt.want {
				t.Errorf("Ideal = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTransferTimeLarge(t *testing.T) {
	// The remainder times 1e9 overflows int64 at 100 GB/s; the result must not.
	got := transferTime(150_000_000_000, 100_000_000_000)
	want := 1500 * time.Millisecond
	if got != want {
		t.Errorf("transferTime = %v, want %v", got, want)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want int
	}{{0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {1500 * time.Millisecond, 2}, {2 * time.Second, 2}} {
		if got := retryAfterSeconds(tt.d); got != tt.want {
			t.Errorf("retryAfterSeconds(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}
