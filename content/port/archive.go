package port

import (
	"archive/tar"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"pith/content"
	"pith/internal/spill"
)

// Bounds of an export read for an import.
const (
	// maxMembers bounds the files of one export.
	maxMembers = 10_000_000
	// maxJSONMember bounds one resource file.
	maxJSONMember = 16 << 30
	// maxRow bounds one row of a resource file (a package with a long changelog and
	// many files is a few MiB).
	maxRow = 256 << 20
)

// member is a file of the tar: where its bytes are in the whole.
type member struct {
	off, size int64
}

// Archive is an export opened for import: its tar (or its chunks, read as one file)
// indexed by member name. The artifacts (Pulp names them "artifact/xx/<the rest of the
// sha256>"), nearly every member of a large export, are indexed by their digest's 32
// bytes in a temporary file (spill), so that the memory an import takes does not grow
// with its export; the few other members in memory.
type Archive struct {
	f       *files
	members map[string]member // every other member
	arts    *spill.Table      // digest: offset and size, 8 bytes each
	nArts   int
	names   []string // of the other members, in tar order
}

// artifactKey is the digest an artifact member's name spells, when it is one (lower-case
// hex, as Pulp writes it; any other name is kept by name).
func artifactKey(name string) ([32]byte, bool) {
	var k [32]byte
	if len(name) != len("artifact/xx/")+62 || !strings.HasPrefix(name, "artifact/") || name[11] != '/' {
		return k, false
	}
	for i := range 64 {
		j := 9 + i
		if i >= 2 {
			j++ // past the slash
		}
		c := name[j]
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		default:
			return k, false
		}
		k[i/2] |= v << (4 * (1 - i%2))
	}
	return k, true
}

// Open opens the tar (or the chunks) at paths and indexes its members. A member whose
// name is not a clean relative path (Pulp: "Attempted Path Traversal in Tar File"), a
// link or device, or a truncated tar is an error.
func Open(paths []string) (*Archive, error) {
	f, err := openFiles(paths)
	if err != nil {
		return nil, err
	}
	a := &Archive{f: f, members: map[string]member{}, arts: spill.New("", 32)}
	if err := a.index(); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *Archive) index() error {
	f := a.f
	sr := io.NewSectionReader(f, 0, f.size)
	var loc [16]byte
	tr := tar.NewReader(sr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			// A tar ends with two zero blocks; without them it was cut at a member's end.
			end, _ := sr.Seek(0, io.SeekCurrent)
			if !zeroBlocks(f, end) {
				return errors.New("the export's tar is truncated (it has no end-of-archive blocks)")
			}
			break
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return errors.New("the export's tar is truncated")
			}
			return fmt.Errorf("the export's tar: %w", err)
		}
		name := h.Name
		if name == "" || path.IsAbs(name) || path.Clean(name) != strings.TrimSuffix(name, "/") || strings.HasPrefix(path.Clean(name), "..") {
			return fmt.Errorf("Attempted Path Traversal in Tar File: %q", name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return fmt.Errorf("the export's tar member %q is not a regular file", name)
		}
		off, _ := sr.Seek(0, io.SeekCurrent)
		if off+h.Size > f.size {
			return errors.New("the export's tar is truncated")
		}
		if k, ok := artifactKey(name); ok {
			binary.BigEndian.PutUint64(loc[:8], uint64(off))
			binary.BigEndian.PutUint64(loc[8:], uint64(h.Size))
			if err := a.arts.Add(k[:], loc[:]); err != nil {
				return err
			}
			a.nArts++
		} else {
			if _, ok := a.members[name]; !ok {
				a.names = append(a.names, name)
			}
			a.members[name] = member{off: off, size: h.Size}
		}
		if len(a.members)+a.nArts > maxMembers {
			return fmt.Errorf("the export has over %d files", maxMembers)
		}
	}
	return a.arts.Sort()
}

// zeroBlocks reports whether the two 512-byte blocks before end are zeros.
func zeroBlocks(f *files, end int64) bool {
	if end < 1024 {
		return false
	}
	b := make([]byte, 1024)
	if _, err := f.ReadAt(b, end-1024); err != nil {
		return false
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Close closes the files.
func (a *Archive) Close() error {
	a.arts.Close()
	return a.f.Close()
}

// Names are the names of the members other than the artifacts ("artifact/xx/…"), in
// tar order.
func (a *Archive) Names() []string { return a.names }

// Has reports whether the export has a member. An error is a failed read of the
// artifacts' index (a temporary file), never a missing member.
func (a *Archive) Has(name string) (bool, error) {
	_, ok, err := a.lookup(name)
	return ok, err
}

// Member reads a member; ok is false when there is none (err: as Has).
func (a *Archive) Member(name string) (r *io.SectionReader, ok bool, err error) {
	m, ok, err := a.lookup(name)
	if !ok || err != nil {
		return nil, false, err
	}
	return io.NewSectionReader(a.f, m.off, m.size), true, nil
}

func (a *Archive) lookup(name string) (member, bool, error) {
	if k, ok := artifactKey(name); ok {
		var m member
		found := false
		// The last of members of one name counts, as it would be extracted last.
		err := a.arts.Each(k[:], func(_, v []byte) error {
			m = member{off: int64(binary.BigEndian.Uint64(v[:8])), size: int64(binary.BigEndian.Uint64(v[8:]))}
			found = true
			return nil
		})
		if err != nil {
			return member{}, false, fmt.Errorf("the export's index of artifacts: %w", err)
		}
		return m, found, nil
	}
	m, ok := a.members[name]
	return m, ok, nil
}

// DecodeJSON decodes a small JSON member into v; ok is false when there is none.
func (a *Archive) DecodeJSON(name string, v any, limit int64) (bool, error) {
	r, ok, err := a.Member(name)
	if !ok || err != nil {
		return false, err
	}
	if r.Size() > limit {
		return true, fmt.Errorf("%s is over %d bytes", name, limit)
	}
	if err := json.NewDecoder(r).Decode(v); err != nil {
		return true, fmt.Errorf("%s: %w", name, err)
	}
	return true, nil
}

// Rows calls fn with each row of a resource file, streaming; a missing file has no rows.
// Errors name the file and the row (from 1).
func (a *Archive) Rows(name string, fn func(content.Row) error) error {
	r, ok, err := a.Member(name)
	if !ok || err != nil {
		return err
	}
	if r.Size() > maxJSONMember {
		return fmt.Errorf("%s is over %d GiB", name, maxJSONMember>>30)
	}
	cr := &countReader{r: r}
	dec := json.NewDecoder(cr)
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return fmt.Errorf("%s: not a JSON list of rows", name)
	}
	for n := 1; dec.More(); n++ {
		cr.mark()
		var row content.Row
		if err := dec.Decode(&row); err != nil {
			if errors.Is(err, errRowTooLong) {
				return fmt.Errorf("%s row %d: over %d MiB", name, n, maxRow>>20)
			}
			return fmt.Errorf("%s row %d: not a JSON object: %w", name, n, err)
		}
		if err := fn(row); err != nil {
			return fmt.Errorf("%s row %d: %w", name, n, err)
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim(']') {
		return fmt.Errorf("%s: the list of rows does not end", name)
	}
	return nil
}

var errRowTooLong = errors.New("row too long")

// countReader fails a read that would take one row past maxRow bytes.
type countReader struct {
	r       io.Reader
	n, from int64
}

func (c *countReader) mark() { c.from = c.n }

func (c *countReader) Read(p []byte) (int, error) {
	if c.n-c.from > maxRow {
		return 0, errRowTooLong
	}
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}
