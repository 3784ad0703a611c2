package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSlots bounds the worker processes of one host that share a data directory and
// still know their predecessors.
const maxSlots = 64

// slot is a worker slot this process holds: the lock file <data>/workers/<host>-<n>.lock,
// locked (flock) while the process lives, which names the worker that held it last. The
// kernel frees the lock when a process dies, so whoever takes a free slot knows its last
// holder is gone: the tasks still running under that worker were interrupted by its end,
// and are failed at once rather than when their lease runs out. A restarted process takes
// the slot its previous incarnation held (the lowest free one).
type slot struct {
	f        *os.File
	previous string // the pulp_id of the worker that held the slot last, if any
}

// held is the slot this process holds, reachable for as long as the process lives: an
// unreachable *os.File would be closed by its finalizer, freeing the lock.
var held *slot

// takeSlot takes the lowest free worker slot of this host in the data directory.
func takeSlot(data string) (*slot, error) {
	dir := filepath.Join(data, "workers")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("worker slots: %w", err)
	}
	host, _ := os.Hostname()
	host = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, host)
	for n := 1; n <= maxSlots; n++ {
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("%s-%d.lock", host, n)), os.O_RDWR|os.O_CREATE, 0o640)
		if err != nil {
			return nil, fmt.Errorf("worker slots: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				continue // a live process holds it
			}
			return nil, fmt.Errorf("worker slots: lock %d: %w", n, err)
		}
		b, err := io.ReadAll(io.LimitReader(f, 128))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("worker slots: read %d: %w", n, err)
		}
		held = &slot{f: f, previous: strings.TrimSpace(string(b))}
		return held, nil
	}
	return nil, fmt.Errorf("worker slots: all %d of this host in %s are held by live processes", maxSlots, dir)
}

// record names the worker now holding the slot; the file stays open (and locked) until
// the process ends.
func (s *slot) record(worker string) error {
	if err := s.f.Truncate(0); err != nil {
		return err
	}
	if _, err := s.f.WriteAt([]byte(worker+"\n"), 0); err != nil {
		return err
	}
	return s.f.Sync()
}
