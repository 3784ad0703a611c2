// Package spill is a sorted multimap of fixed-length byte keys to byte values kept in a
// temporary file instead of memory: the per-unit state of a task that would otherwise
// grow with the size of its input (an import's index of its artifacts, its units' files
// and local ids).
//
// Records are added in any order; Sort then orders them by key, stably (the values of
// one key keep the order they were added in), and lookups read them back from the file.
// Memory holds one run of records while adding (runBytes) and, once sorted, the first
// key of every block of the sorted file (about a hundredth of it). The file is unlinked
// as soon as it is made: nothing is left behind when the process dies.
package spill

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

const (
	// defaultRunBytes is how much of the records a Table holds in memory while adding:
	// each full run is sorted and written out, and Sort merges the runs.
	defaultRunBytes = 1 << 20
	// blockSize is the distance between the keys of the sparse index.
	blockSize = 4 << 10
	// mergeBuffer is the read buffer of each run while they are merged.
	mergeBuffer = 16 << 10
	// maxValue bounds one value.
	maxValue = 1 << 20
)

// ErrSorted is an Add after Sort.
var ErrSorted = errors.New("spill: add after sort")

// Table is the multimap. Its methods are safe for concurrent use, but a callback of Each
// must not call its own table; the key and value it is handed are valid only during the
// call.
type Table struct {
	mu       sync.Mutex
	keyLen   int
	dir      string
	runBytes int

	run  []byte   // the records of the run being added, encoded
	recs []uint32 // where each of them starts in run
	tmp  *os.File // the runs written so far, one after another
	runs []span

	f      *os.File // the sorted records (tmp itself when there was one run)
	size   int64
	keys   []byte  // the sparse index: the first key of each block
	offs   []int64 // and where that record starts
	sorted bool
	win    []byte // for lookups: the file's bytes from winOff on
	winOff int64
	buf    []byte // for merging
}

type span struct{ off, n int64 }

// New makes a table of keys keyLen bytes long whose file goes in dir ("" for the
// system's temporary directory).
func New(dir string, keyLen int) *Table {
	return &Table{keyLen: keyLen, dir: dir, runBytes: defaultRunBytes}
}

// Add records value under key (len(key) must be the table's key length).
func (t *Table) Add(key, value []byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sorted {
		return ErrSorted
	}
	if len(key) != t.keyLen {
		return fmt.Errorf("spill: a key of %d bytes in a table of %d-byte keys", len(key), t.keyLen)
	}
	if len(value) > maxValue {
		return fmt.Errorf("spill: a value of %d bytes (at most %d)", len(value), maxValue)
	}
	t.recs = append(t.recs, uint32(len(t.run)))
	t.run = append(t.run, key...)
	t.run = binary.AppendUvarint(t.run, uint64(len(value)))
	t.run = append(t.run, value...)
	if len(t.run) >= t.runBytes {
		return t.flush()
	}
	return nil
}

// recordLen is the length of the record at off of b: its key, value length and value.
func (t *Table) recordLen(b []byte, off uint32) int {
	n, k := binary.Uvarint(b[int(off)+t.keyLen:])
	return t.keyLen + k + int(n)
}

// flush sorts the run in memory and appends it to the temporary file.
func (t *Table) flush() error {
	if len(t.recs) == 0 {
		return nil
	}
	if t.tmp == nil {
		f, err := t.create()
		if err != nil {
			return err
		}
		t.tmp = f
	}
	slices.SortStableFunc(t.recs, func(a, b uint32) int {
		return bytes.Compare(t.run[a:int(a)+t.keyLen], t.run[b:int(b)+t.keyLen])
	})
	end, err := t.tmp.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	w := bufio.NewWriterSize(t.tmp, 64<<10)
	var n int64
	for _, off := range t.recs {
		l := t.recordLen(t.run, off)
		if _, err := w.Write(t.run[off : int(off)+l]); err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		n += int64(l)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	t.runs = append(t.runs, span{off: end, n: n})
	t.run, t.recs = t.run[:0], t.recs[:0]
	return nil
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

func (t *Table) create() (*os.File, error) {
	f, err := os.CreateTemp(t.dir, "pith-spill-*")
	if err != nil {
		return nil, fmt.Errorf("spill: temporary file: %w", err)
	}
	os.Remove(f.Name()) // open, it stays readable; closed or crashed, it is gone
	return f, nil
}

// Sort orders the records added; lookups may follow. It is done once: a later call does
// nothing.
func (t *Table) Sort() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sorted {
		return nil
	}
	if err := t.flush(); err != nil {
		return err
	}
	t.run, t.recs = nil, nil
	t.sorted = true
	if len(t.runs) == 0 {
		return nil
	}
	// One run is merged too (copied): the sparse index is built in one place, as the
	// sorted file is written.
	return t.merge()
}

// next reads one record from r into t.buf.
func (t *Table) next(r *bufio.Reader) (key, value []byte, err error) {
	t.buf = slices.Grow(t.buf[:0], t.keyLen)[:t.keyLen]
	if _, err := io.ReadFull(r, t.buf); err != nil {
		return nil, nil, err
	}
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, nil, fmt.Errorf("spill: a record's length: %w", err)
	}
	if n > maxValue {
		return nil, nil, fmt.Errorf("spill: a record's length %d is over %d", n, maxValue)
	}
	t.buf = slices.Grow(t.buf, int(n))[:t.keyLen+int(n)]
	if _, err := io.ReadFull(r, t.buf[t.keyLen:]); err != nil {
		return nil, nil, fmt.Errorf("spill: a record's value: %w", err)
	}
	return t.buf[:t.keyLen], t.buf[t.keyLen:], nil
}

// cursor is one run being merged.
type cursor struct {
	run        int
	r          *bufio.Reader
	left       int64
	key, value []byte
}

type cursors []*cursor

func (c cursors) Len() int { return len(c) }
func (c cursors) Less(i, j int) bool {
	if k := bytes.Compare(c[i].key, c[j].key); k != 0 {
		return k < 0
	}
	return c[i].run < c[j].run // stable: the earlier run's records were added first
}
func (c cursors) Swap(i, j int) { c[i], c[j] = c[j], c[i] }
func (c *cursors) Push(x any)   { *c = append(*c, x.(*cursor)) }
func (c *cursors) Pop() any {
	old := *c
	x := old[len(old)-1]
	*c = old[:len(old)-1]
	return x
}

// advance reads the cursor's next record; false at the end of its run.
func (t *Table) advance(c *cursor) (bool, error) {
	if c.left == 0 {
		return false, nil
	}
	key, value, err := t.next(c.r)
	if err != nil {
		return false, err
	}
	c.key = append(c.key[:0], key...)
	c.value = append(c.value[:0], value...)
	c.left -= int64(t.keyLen + uvarintLen(len(value)) + len(value))
	return true, nil
}

// merge merges the runs into one sorted file and indexes it.
func (t *Table) merge() error {
	f, err := t.create()
	if err != nil {
		return err
	}
	t.f = f
	var h cursors
	for i, s := range t.runs {
		c := &cursor{run: i, r: bufio.NewReaderSize(io.NewSectionReader(t.tmp, s.off, s.n), mergeBuffer), left: s.n}
		ok, err := t.advance(c)
		if err != nil {
			return err
		}
		if ok {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	w := bufio.NewWriterSize(f, 64<<10)
	var off, next int64
	var lenBuf [binary.MaxVarintLen64]byte
	for len(h) > 0 {
		c := h[0]
		if off >= next {
			t.keys = append(t.keys, c.key...)
			t.offs = append(t.offs, off)
			next = off + blockSize
		}
		w.Write(c.key)
		k := binary.PutUvarint(lenBuf[:], uint64(len(c.value)))
		w.Write(lenBuf[:k])
		if _, err := w.Write(c.value); err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		off += int64(len(c.key) + k + len(c.value))
		ok, err := t.advance(c)
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	t.size = off
	t.tmp.Close()
	t.tmp = nil
	return nil
}

// Each calls fn with every record whose key starts with prefix, in key order (a key's
// values in the order they were added); an empty prefix is every record. The table must
// be sorted.
func (t *Table) Each(prefix []byte, fn func(key, value []byte) error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.sorted {
		return errors.New("spill: lookup before sort")
	}
	if t.f == nil || len(prefix) > t.keyLen {
		return nil
	}
	p := len(prefix)
	// The first block whose first key is not below prefix; records with the prefix
	// may start in the block before it.
	lo, hi := 0, len(t.offs)
	for lo < hi {
		m := (lo + hi) / 2
		if bytes.Compare(t.keys[m*t.keyLen:m*t.keyLen+p], prefix) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	i := lo
	if i > 0 {
		i--
	}
	for off := t.offs[i]; off < t.size; {
		b, err := t.at(off, t.keyLen+binary.MaxVarintLen64)
		if err != nil {
			return err
		}
		if len(b) <= t.keyLen {
			return fmt.Errorf("spill: a record cut at %d", off)
		}
		n, k := binary.Uvarint(b[t.keyLen:])
		if k <= 0 || n > maxValue {
			return fmt.Errorf("spill: a record's length at %d", off)
		}
		l := t.keyLen + k + int(n)
		if b, err = t.at(off, l); err != nil {
			return err
		}
		if len(b) < l {
			return fmt.Errorf("spill: a record cut at %d", off)
		}
		off += int64(l)
		switch c := bytes.Compare(b[:p], prefix); {
		case c < 0:
			continue
		case c > 0:
			return nil
		}
		if err := fn(b[:t.keyLen], b[t.keyLen+k:l]); err != nil {
			return err
		}
	}
	return nil
}

// at are the bytes of the file from off on: at least n of them, or all up to its end.
// They are read into the window a block or more at a time.
func (t *Table) at(off int64, n int) ([]byte, error) {
	if off >= t.winOff && off+int64(n) <= t.winOff+int64(len(t.win)) || t.winOff+int64(len(t.win)) == t.size && off >= t.winOff {
		return t.win[off-t.winOff:], nil
	}
	want := int64(max(n, blockSize))
	want = min(want, t.size-off)
	t.win = slices.Grow(t.win[:0], int(want))[:want]
	if _, err := t.f.ReadAt(t.win, off); err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	t.winOff = off
	return t.win, nil
}

// Close removes the table's file.
func (t *Table) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range []*os.File{t.tmp, t.f} {
		if f != nil {
			f.Close()
		}
	}
	t.tmp, t.f = nil, nil
	return nil
}
