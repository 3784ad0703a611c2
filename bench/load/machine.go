package load

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// CPUTimes is a reading of the machine-wide CPU counters in /proc/stat, in clock ticks
// (USER_HZ, 100 per second) summed over all CPUs.
type CPUTimes struct {
	At    time.Time
	Busy  uint64 // user + nice + system + irq + softirq + steal
	Idle  uint64 // idle + iowait
	Cores int    // online CPUs (runtime.NumCPU)
}

// MachineCPU reads the aggregate "cpu" line of /proc/stat.
func MachineCPU() (CPUTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}, fmt.Errorf("machine CPU: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return CPUTimes{}, fmt.Errorf("machine CPU: unexpected /proc/stat first line %q", line)
	}
	var v [8]uint64 // user nice system idle iowait irq softirq steal
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
			return CPUTimes{}, fmt.Errorf("machine CPU: /proc/stat field %d: %w", i+1, err)
		}
	}
	return CPUTimes{
		At:    time.Now(),
		Busy:  v[0] + v[1] + v[2] + v[5] + v[6] + v[7],
		Idle:  v[3] + v[4],
		Cores: runtime.NumCPU(),
	}, nil
}

// CPUWindow is the machine's CPU use between two MachineCPU readings. Compare its
// BusyCores with a Sampler's TotalCPU to tell the server's share from everything else
// (the load generator, in a benchmark on one box).
type CPUWindow struct {
	Start, End CPUTimes
}

// BusyCores is how many cores were busy on average over the window (e.g. 1.6).
func (w CPUWindow) BusyCores() float64 {
	wall := w.End.At.Sub(w.Start.At).Seconds()
	if wall <= 0 || w.End.Busy < w.Start.Busy {
		return 0
	}
	return float64(w.End.Busy-w.Start.Busy) / clockTicks / wall
}

// Utilization is the busy fraction of all CPU time in the window, 0 to 1.
func (w CPUWindow) Utilization() float64 {
	busy := float64(w.End.Busy) - float64(w.Start.Busy)
	total := busy + float64(w.End.Idle) - float64(w.Start.Idle)
	if total <= 0 {
		return 0
	}
	return busy / total
}
