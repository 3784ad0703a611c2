package load

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is sysconf(_SC_CLK_TCK), the unit of the CPU times in /proc/<pid>/stat and
// /proc/stat. The kernel reports USER_HZ to user space, which is 100 on every Linux
// architecture Go supports, so it is a constant rather than a cgo call.
const clockTicks = 100

// procStat is what the sampler needs from one /proc/<pid>/stat.
type procStat struct {
	pid       int
	name      string // comm, as the kernel truncates it (15 bytes)
	ppid      int
	cpuTicks  uint64 // utime + stime
	startTime uint64 // clock ticks after boot
}

// readProcStat parses /proc/<pid>/stat. The comm field may hold spaces and parentheses,
// so fields are counted from the last ')'.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(pid, b)
}

func parseProcStat(pid int, b []byte) (procStat, error) {
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no (comm)", pid)
	}
	// After ')': state(3) ppid(4) ... utime(14) stime(15) ... starttime(22); f[0] is field 3.
	f := strings.Fields(string(b[close+1:]))
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: only %d fields after comm", pid, len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	utime, err2 := strconv.ParseUint(f[11], 10, 64)
	stime, err3 := strconv.ParseUint(f[12], 10, 64)
	start, err4 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return procStat{pid: pid, name: string(b[open+1 : close]), ppid: ppid, cpuTicks: utime + stime, startTime: start}, nil
}

// readRSS returns the resident set size of pid in bytes, from /proc/<pid>/statm.
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/statm: %q", pid, b)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/statm: %w", pid, err)
	}
	return pages * int64(os.Getpagesize()), nil
}

// readCmdline returns /proc/<pid>/cmdline with its NUL separators turned into spaces.
func readCmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '}))
}

// listPIDs returns the numeric entries of /proc.
func listPIDs() ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("listing /proc: %w", err)
	}
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// uptimeTicks returns the time since boot in clock ticks, comparable to starttime.
func uptimeTicks() (uint64, error) {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("/proc/uptime: %q", b)
	}
	s, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/uptime: %w", err)
	}
	return uint64(s * clockTicks), nil
}
