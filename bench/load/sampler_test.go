package load

import (
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// busy starts a shell spinning on one core; extra words end up in its command line.
func busy(t *testing.T, script string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", script}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // so that cleanup kills its children too
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd
}

const spin = "while :; do :; done"

func TestSamplerPID(t *testing.T) {
	cmd := busy(t, spin)
	s := StartSampler(100*time.Millisecond, Selector{PIDs: []int{cmd.Process.Pid}})
	time.Sleep(time.Second)
	u := s.Stop()
	t.Logf("%+v", u)
	if u.Err != nil {
		t.Fatal(u.Err)
	}
	if len(u.Procs) != 1 || u.Procs[0].PID != cmd.Process.Pid || u.Procs[0].Name != "sh" {
		t.Fatalf("procs %+v, want the one sh", u.Procs)
	}
	if u.TotalCPU <= 0.02 {
		t.Errorf("TotalCPU %.2f, want some CPU for a spinning shell", u.TotalCPU)
	}
	if u.PeakRSSMiB <= 0 || u.MaxProcRSSMiB <= 0 {
		t.Errorf("RSS peak %.2f MiB, max %.2f MiB; want > 0", u.PeakRSSMiB, u.MaxProcRSSMiB)
	}
	if again := s.Stop(); again.TotalCPU != u.TotalCPU {
		t.Errorf("second Stop differs")
	}
}

func TestSamplerLateCmdline(t *testing.T) {
	marker := "pith-sampler-test-" + strconv.Itoa(int(time.Now().UnixNano()))
	s := StartSampler(100*time.Millisecond, Selector{CmdlineContains: []string{marker}})
	time.Sleep(200 * time.Millisecond)
	cmd := busy(t, spin, marker)
	time.Sleep(800 * time.Millisecond)
	cmd.Process.Kill()
	cmd.Wait()
	time.Sleep(200 * time.Millisecond) // exited processes keep what was measured
	u := s.Stop()
	t.Logf("%+v", u)
	if len(u.Procs) != 1 || u.Procs[0].PID != cmd.Process.Pid {
		t.Fatalf("procs %+v, want the late sh %d", u.Procs, cmd.Process.Pid)
	}
	if u.TotalCPU <= 0.02 {
		t.Errorf("TotalCPU %.2f, want the late child's CPU counted", u.TotalCPU)
	}
}

func TestSamplerChildren(t *testing.T) {
	// The outer shell waits; the inner one spins.
	cmd := busy(t, "sh -c '"+spin+"' & wait")
	s := StartSampler(100*time.Millisecond, Selector{PIDs: []int{cmd.Process.Pid}, Children: true})
	time.Sleep(600 * time.Millisecond)
	u := s.Stop()
	t.Logf("%+v", u)
	if len(u.Procs) < 2 {
		t.Fatalf("procs %+v, want the shell and its child", u.Procs)
	}
	if u.TotalCPU <= 0.02 {
		t.Errorf("TotalCPU %.2f, want the spinning child counted", u.TotalCPU)
	}
}

func TestMachineCPU(t *testing.T) {
	a, err := MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	busy(t, spin)
	time.Sleep(500 * time.Millisecond)
	b, err := MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	w := CPUWindow{Start: a, End: b}
	t.Logf("busy cores %.2f of %d, utilization %.2f", w.BusyCores(), b.Cores, w.Utilization())
	if w.BusyCores() <= 0.02 || w.Utilization() <= 0 || w.Utilization() > 1 {
		t.Errorf("busy cores %.2f, utilization %.2f", w.BusyCores(), w.Utilization())
	}
}

func TestParseProcStat(t *testing.T) {
	line := "42 (a (weird) name) S 7 42 42 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 1 0 12345 1000 10 0\n"
	st, err := parseProcStat(42, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st.name != "a (weird) name" || st.ppid != 7 || st.cpuTicks != 175 || st.startTime != 12345 {
		t.Errorf("parsed %+v", st)
	}
}
