package load

import (
	"fmt"
	"syscall"
)

// raiseNoFile lifts the RLIMIT_NOFILE soft limit to the hard limit and reports an error
// if that still allows fewer than need open files. Go already raises the soft limit at
// start-up since 1.19; doing it here makes the check explicit and names the fix.
func raiseNoFile(need uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("reading RLIMIT_NOFILE: %w", err)
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			lim = raised
		}
	}
	if lim.Cur < need {
		return fmt.Errorf("open file limit (RLIMIT_NOFILE) is %d, need at least %d; raise the hard limit (ulimit -Hn, or LimitNOFILE= for a service)", lim.Cur, need)
	}
	return nil
}
