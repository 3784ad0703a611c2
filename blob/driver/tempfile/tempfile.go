package tempfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// StaleAfter is how long a file nobody writes to is left alone when its lock cannot
// tell whether its writer lives.
const StaleAfter = time.Hour

// File is a temporary file its writer holds locked. Rename or remove it before Close, so
// that it is never unlocked under its temporary name while it matters.
type File struct {
	*os.File
	name string
}

var (
	mu   sync.Mutex
	mine = map[string]bool{} // paths of the files this process holds
	host = hostTag()
)

// hostTag is a short stable tag of this host's name.
func hostTag() string {
	h, _ := os.Hostname()
	s := sha256.Sum256([]byte(h))
	return hex.EncodeToString(s[:4])
}

// Pattern is how the names of this host's files with prefix begin.
func Pattern(prefix string) string { return prefix + host + "-" }

// Create makes a new file in dir, locked, named Pattern(prefix) and a random suffix.
func Create(dir, prefix string) (*File, error) {
	f, err := os.CreateTemp(dir, prefix+"*")
	if err != nil {
		return nil, err
	}
	name := f.Name()
	// Named as this host's only once locked. Where the filesystem takes no locks (or no
	// links), the file keeps its first name, which sweeps leave alone until it is stale.
	// A link, not a rename: a rename would replace a live writer's file of that name.
	if lock(f) == nil {
		ours := filepath.Join(dir, Pattern(prefix)+strings.TrimPrefix(filepath.Base(name), prefix))
		if os.Link(name, ours) == nil {
			os.Remove(name)
			name = ours
		}
	}
	mu.Lock()
	mine[name] = true
	mu.Unlock()
	return &File{File: f, name: name}, nil
}

// Name is the file's path now (os.File's Name is the one it was created under).
func (f *File) Name() string { return f.name }

// lock takes the file's lock, waiting for a sweep that holds it for a moment.
func lock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// Close closes the file, which drops its lock; rename or remove it first.
func (f *File) Close() error {
	mu.Lock()
	delete(mine, f.name)
	mu.Unlock()
	return f.File.Close()
}

// Sweep removes the files of dir whose names start with prefix and whose writer is gone
// (see the package comment) and returns how many it removed. A missing dir holds none.
func Sweep(dir, prefix string) (int, error) {
	es, err := os.ReadDir(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, e := range es {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		mu.Lock()
		live := mine[p]
		mu.Unlock()
		if live {
			continue
		}
		removed, err := sweepOne(p, strings.HasPrefix(e.Name(), Pattern(prefix)))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Name(), err))
		}
		if removed {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// sweepOne removes the file at p if its writer is gone, holding its lock meanwhile so
// that no writer can be in the middle of it.
func sweepOne(p string, ours bool) (bool, error) {
	f, err := os.Open(p)
	if errors.Is(err, iofs.ErrNotExist) {
		return false, nil // committed or removed since the directory was read
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false, nil // a live writer holds it, or the filesystem cannot say: keep it
	}
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !ours && time.Since(fi.ModTime()) <= StaleAfter {
		return false, nil
	}
	// The name must still be this file: a writer that finished renamed it away.
	if now, err := os.Stat(p); err != nil || !os.SameFile(fi, now) {
		return false, nil
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return false, err
	}
	return true, nil
}
