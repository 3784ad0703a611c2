package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Arm is one client setup a Loop measures: where its requests go, how its connections
// shake hands (a client certificate, say) and the headers it sends. wrk cannot present
// client certificates, so studies that need one use a Loop.
type Arm struct {
	Name   string
	URLs   []string    // each request takes one at random
	TLS    *tls.Config // of every connection (nil: Go's defaults)
	Header http.Header // sent with every request
}

// LoopConfig is a closed-loop load over several arms: Connections clients, each over one
// keep-alive HTTP/1.1 connection of its own, each sending its next request as soon as
// the previous one is answered (as wrk does). The arms take turns, Rounds times, each
// round starting one arm later, so that a change in the machine's other load falls on
// every arm alike.
type LoopConfig struct {
	Arms        []Arm
	Connections int           // default 16
	Duration    time.Duration // measured per arm and round (default 5s)
	// Warmup runs before each arm's measured time in each round, on the same
	// connections, and is not counted: connections are made (and TLS handshakes done)
	// in it, not in the measured time (default 500 ms).
	Warmup  time.Duration
	Rounds  int           // default 3
	Timeout time.Duration // per request (default 10s)
	// PIDs are the server's processes: their CPU time in each arm's measured time is
	// reported.
	PIDs []int
}

// ArmResult is what a Loop measured for one arm, over all its rounds. Requests are
// those answered 200 in the measured time; latencies are theirs.
type ArmResult struct {
	Name          string
	Requests      int64
	Errors        int64    // transport errors and answers other than 200
	FirstErrors   []string // up to 5 distinct ones
	Time          time.Duration
	RPS           float64   // Requests / Time
	RoundRPS      []float64 // each round's rate, to show the spread
	P50, P90, P99 time.Duration
	// ServerCPU is the CPU time PIDs used in the measured time, ClientCPU this process's
	// (the load generator's), MachineCores the busy cores of the whole machine then.
	ServerCPU, ClientCPU time.Duration
	MachineCores         float64
	machineBusy          time.Duration // busy core time of the machine in the measured time
	hist                 histogram
	errs                 map[string]bool
}

// PerRequest is d (a CPU time) per answered request.
func (r *ArmResult) PerRequest(d time.Duration) time.Duration {
	if r.Requests == 0 {
		return 0
	}
	return d / time.Duration(r.Requests)
}

// Loop runs the load and returns one result per arm, in the arms' order. It stops at the
// first round in which an arm had errors, returning what was measured and an error
// naming the arm: a refused request is answered faster than a served one and would
// flatter the arm.
func Loop(ctx context.Context, cfg LoopConfig) ([]*ArmResult, error) {
	cfg = cfg.withDefaults()
	res := make([]*ArmResult, len(cfg.Arms))
	for i, a := range cfg.Arms {
		if len(a.URLs) == 0 {
			return nil, fmt.Errorf("loop: arm %q has no URL", a.Name)
		}
		res[i] = &ArmResult{Name: a.Name, errs: map[string]bool{}}
	}
	for round := range cfg.Rounds {
		// Each round starts one arm later, so that no arm always follows the same one.
		for k := range cfg.Arms {
			i := (round + k) % len(cfg.Arms)
			a, r := cfg.Arms[i], res[i]
			before, t0 := r.Requests, r.Time
			if err := cfg.runArm(ctx, a, r); err != nil {
				return res, err
			}
			r.RoundRPS = append(r.RoundRPS, float64(r.Requests-before)/(r.Time-t0).Seconds())
			if r.Errors > 0 {
				return res, fmt.Errorf("loop: %s: %d failed requests, first: %v", a.Name, r.Errors, r.FirstErrors)
			}
		}
	}
	for _, r := range res {
		r.P50, r.P90, r.P99 = r.hist.quantile(0.5), r.hist.quantile(0.9), r.hist.quantile(0.99)
		if s := r.Time.Seconds(); s > 0 {
			r.RPS = float64(r.Requests) / s
			r.MachineCores = r.machineBusy.Seconds() / s
		}
	}
	return res, nil
}

func (cfg LoopConfig) withDefaults() LoopConfig {
	if cfg.Connections <= 0 {
		cfg.Connections = 16
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 5 * time.Second
	}
	if cfg.Warmup <= 0 {
		cfg.Warmup = 500 * time.Millisecond
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 3
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	return cfg
}

// Phases of an arm's turn.
const (
	phaseWarm int32 = iota
	phaseMeasure
	phaseStop
)

// runArm is one arm's turn: fresh connections, the warm-up, the measured time.
func (cfg LoopConfig) runArm(ctx context.Context, a Arm, r *ArmResult) error {
	var phase atomic.Int32
	var ok, failed atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for c := range cfg.Connections {
		client := &http.Client{Timeout: cfg.Timeout, Transport: &http.Transport{
			TLSClientConfig: a.TLS.Clone(), MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true}}
		rng := rand.New(rand.NewPCG(uint64(c), uint64(time.Now().UnixNano())))
		wg.Go(func() {
			defer client.CloseIdleConnections()
			for ctx.Err() == nil {
				p := phase.Load()
				if p == phaseStop {
					return
				}
				start := time.Now()
				err := get(ctx, client, a.URLs[rng.IntN(len(a.URLs))], a.Header)
				if phase.Load() != phaseMeasure || p != phaseMeasure {
					continue // begun or ended outside the measured time
				}
				if err != nil {
					failed.Add(1)
					mu.Lock()
					if len(r.FirstErrors) < 5 && !r.errs[err.Error()] {
						r.errs[err.Error()] = true
						r.FirstErrors = append(r.FirstErrors, err.Error())
					}
					mu.Unlock()
					continue
				}
				r.hist.add(time.Since(start))
				ok.Add(1)
			}
		})
	}
	sleep(ctx, cfg.Warmup)
	self := []int{os.Getpid()}
	cpu0, own0, m0 := cpuOf(cfg.PIDs), cpuOf(self), machineOrZero()
	t0 := time.Now()
	phase.Store(phaseMeasure)
	sleep(ctx, cfg.Duration)
	phase.Store(phaseStop)
	elapsed := time.Since(t0)
	cpu1, own1, m1 := cpuOf(cfg.PIDs), cpuOf(self), machineOrZero()
	wg.Wait()
	r.Time += elapsed
	r.Requests += ok.Load()
	r.Errors += failed.Load()
	r.ServerCPU += cpu1 - cpu0
	r.ClientCPU += own1 - own0
	if m1.Busy >= m0.Busy {
		r.machineBusy += time.Duration(m1.Busy-m0.Busy) * time.Second / clockTicks
	}
	return ctx.Err()
}

// get requests u and reads the answer to its end; anything but a 200 is an error.
func get(ctx context.Context, c *http.Client, u string, h http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		return errors.New(transportMessage(ctx, err)) // without the URL, which varies
	}
	_, err = discard(resp.Body, func() {})
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	return err
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// cpuOf is the CPU time the processes have used so far (those that cannot be read
// count nothing).
func cpuOf(pids []int) time.Duration {
	var ticks uint64
	for _, pid := range pids {
		if st, err := readProcStat(pid); err == nil {
			ticks += st.cpuTicks
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

func machineOrZero() CPUTimes {
	t, _ := MachineCPU()
	return t
}
