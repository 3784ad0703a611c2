package load

import (
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Selector chooses the processes a Sampler measures. A process is selected if its PID is
// listed or its /proc/<pid>/cmdline (arguments joined by spaces) contains one of the
// substrings; with Children, every descendant of a selected process is selected too.
// Selection is sticky: once seen, a process stays measured even if its command line
// changes (a fork that then execs). The sampling process itself never matches by
// command line (only if its PID is listed).
type Selector struct {
	PIDs            []int
	CmdlineContains []string
	Children        bool
}

// Usage is what a Sampler measured over its window.
type Usage struct {
	Procs []ProcUsage // one per distinct selected process seen, by PID
	// TotalCPU is the CPU seconds the selected processes used in the window divided by
	// the wall seconds of the window: 1.6 means 1.6 cores busy on average.
	TotalCPU float64
	// PeakRSSMiB is the largest sum of the selected processes' RSS at one sample.
	PeakRSSMiB float64
	// MaxProcRSSMiB is the largest RSS of a single process at any sample.
	MaxProcRSSMiB float64
	Wall          time.Duration // the window, StartSampler to Stop
	Samples       int
	// Err is the first failure to scan /proc (nil normally); the numbers are then partial.
	Err error
}

// ProcUsage is one process's share of a Usage.
type ProcUsage struct {
	PID        int
	Name       string  // comm from /proc/<pid>/stat
	CPU        float64 // CPU seconds used in the window / wall seconds of the window
	PeakRSSMiB float64
}

// Sampler samples selected processes from /proc every interval until Stop. CPU time is
// utime+stime from /proc/<pid>/stat in clock ticks of 1/100 s (USER_HZ, see
// clockTicks); RSS is /proc/<pid>/statm's resident pages times os.Getpagesize().
//
// A process already running at StartSampler is counted from the first sample. One
// that starts during the window (a forked task worker) is counted from its birth, since
// all its CPU time falls in the window. One that exits keeps what was measured up to
// its last sample, so up to one interval of its CPU time can be lost; choose the
// interval accordingly.
type Sampler struct {
	interval   time.Duration
	sel        Selector
	self       int
	start      time.Time
	startTicks uint64 // uptime at start, comparable with a process's starttime
	stop       chan struct{}
	done       chan struct{}
	once       sync.Once
	usage      Usage

	// Owned by the sampling goroutine until done is closed.
	procs   map[procKey]*procTrack
	samples int
	peakSum int64
	maxProc int64
	err     error
}

type procKey struct {
	pid   int
	start uint64 // starttime, to tell a reused PID from the original
}

type procTrack struct {
	name       string
	base, last uint64 // CPU ticks
	peakRSS    int64
}

// StartSampler takes a first sample now and then one every interval (250ms if zero or
// less) in the background until Stop.
func StartSampler(interval time.Duration, sel Selector) *Sampler {
	if interval <= 0 {
		interval = 250 * time.Millisecond
	}
	s := &Sampler{
		interval: interval,
		sel:      sel,
		self:     os.Getpid(),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		procs:    map[procKey]*procTrack{},
	}
	ticks, err := uptimeTicks()
	s.startTicks, s.err = ticks, err
	s.start = time.Now()
	s.sample()
	go s.run()
	return s
}

// Stop takes a last sample, ends sampling and returns the usage over the window. It
// may be called more than once; later calls return the same Usage.
func (s *Sampler) Stop() Usage {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
		s.usage = s.summarize(time.Since(s.start))
	})
	return s.usage
}

func (s *Sampler) run() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			s.sample()
			return
		case <-t.C:
			s.sample()
		}
	}
}

// sample reads the selected processes once.
func (s *Sampler) sample() {
	s.samples++
	stats, err := s.scan()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	var sum int64
	for _, st := range s.selected(stats) {
		rss, err := readRSS(st.pid)
		if err != nil {
			continue // exited between the two reads
		}
		s.record(st, rss)
		sum += rss
	}
	s.peakSum = max(s.peakSum, sum)
}

// scan reads /proc/<pid>/stat of the processes that may be selected: all of them when
// selecting by command line or children, else just the listed PIDs.
func (s *Sampler) scan() (map[int]procStat, error) {
	pids := s.sel.PIDs
	if len(s.sel.CmdlineContains) > 0 || s.sel.Children {
		var err error
		if pids, err = listPIDs(); err != nil {
			return nil, err
		}
	}
	stats := make(map[int]procStat, len(pids))
	for _, pid := range pids {
		if st, err := readProcStat(pid); err == nil {
			stats[pid] = st
		}
	}
	return stats, nil
}

// selected applies the Selector (and stickiness) to one scan.
func (s *Sampler) selected(stats map[int]procStat) []procStat {
	chosen := map[int]bool{}
	for pid, st := range stats {
		if s.matches(st) {
			chosen[pid] = true
		}
	}
	if s.sel.Children {
		kids := map[int][]int{}
		for pid, st := range stats {
			kids[st.ppid] = append(kids[st.ppid], pid)
		}
		queue := make([]int, 0, len(chosen))
		for pid := range chosen {
			queue = append(queue, pid)
		}
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			for _, k := range kids[pid] {
				if !chosen[k] {
					chosen[k] = true
					queue = append(queue, k)
				}
			}
		}
	}
	out := make([]procStat, 0, len(chosen))
	for pid := range chosen {
		out = append(out, stats[pid])
	}
	return out
}

func (s *Sampler) matches(st procStat) bool {
	if _, ok := s.procs[procKey{st.pid, st.startTime}]; ok {
		return true
	}
	if slices.Contains(s.sel.PIDs, st.pid) {
		return true
	}
	if len(s.sel.CmdlineContains) == 0 || st.pid == s.self {
		return false
	}
	cmd := readCmdline(st.pid)
	for _, sub := range s.sel.CmdlineContains {
		if sub != "" && strings.Contains(cmd, sub) {
			return true
		}
	}
	return false
}

// record updates one process's track with a sample.
func (s *Sampler) record(st procStat, rss int64) {
	key := procKey{st.pid, st.startTime}
	p := s.procs[key]
	if p == nil {
		p = &procTrack{base: st.cpuTicks}
		if s.samples > 1 && s.err == nil && st.startTime >= s.startTicks {
			p.base = 0 // born in the window: all its CPU time is the window's
		}
		s.procs[key] = p
	}
	p.name = st.name
	p.last = max(p.last, st.cpuTicks)
	p.peakRSS = max(p.peakRSS, rss)
	s.maxProc = max(s.maxProc, rss)
}

func (s *Sampler) summarize(wall time.Duration) Usage {
	u := Usage{
		PeakRSSMiB:    mib(s.peakSum),
		MaxProcRSSMiB: mib(s.maxProc),
		Wall:          wall,
		Samples:       s.samples,
		Err:           s.err,
	}
	secs := wall.Seconds()
	for key, p := range s.procs {
		cpu := 0.0
		if secs > 0 && p.last > p.base {
			cpu = float64(p.last-p.base) / clockTicks / secs
		}
		u.Procs = append(u.Procs, ProcUsage{PID: key.pid, Name: p.name, CPU: cpu, PeakRSSMiB: mib(p.peakRSS)})
		u.TotalCPU += cpu
	}
	slices.SortFunc(u.Procs, func(a, b ProcUsage) int { return a.PID - b.PID })
	return u
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
