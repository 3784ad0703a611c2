package repodata

import (
	"fmt"
	"io"
)

// Source is one decompressed metadata stream and the name its errors carry.
// A nil R means the file is absent.
type Source struct {
	Name string // e.g. "repodata/…-filelists.xml.gz"
	R    io.Reader
}

// ReadPackages reads primary, filelists and other together and calls fn once per
// package of primary, in primary's order, with the three merged: primary's fields, every
// file of filelists (plus any primary lists that filelists lacks) and other's changelogs.
// Entries are matched by pkgid; name, arch, epoch, version and release, where filelists
// or other give them, must agree. Duplicate pkgids are matched in order.
//
// createrepo_c writes the three files in the same order, and then memory stays flat
// whatever the repository's size. When the orders differ, entries read ahead are held
// until their primary package comes, so memory grows with the disorder (a filelists in
// reverse order is held whole).
//
// A nil filelists or other is skipped: files then come from primary alone, changelogs
// are nil. A package missing from one file, or present in filelists or other only, is an
// ErrMismatch error naming the pkgid and the files. fn may keep the *Package; an error
// from fn stops reading and is returned as is.
func ReadPackages(primary, filelists, other Source, fn func(*Package) error) error {
	if primary.R == nil {
		return &Error{File: primary.Name, Offset: -1, Err: invalidErr("no primary stream given")}
	}
	pr := NewReader(primary.R, primary.Name, Primary)
	sides := make([]*side, 0, 2)
	for _, s := range []struct {
		src  Source
		kind Kind
	}{{filelists, Filelists}, {other, Other}} {
		if s.src.R != nil {
			sides = append(sides, &side{name: s.src.Name, r: NewReader(s.src.R, s.src.Name, s.kind)})
		}
	}
	for {
		p, err := pr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		line := pr.line
		for _, s := range sides {
			e, err := s.take(p.PkgID)
			if err != nil {
				return err
			}
			if e.p == nil {
				return &Error{File: s.name, Offset: -1, Package: p.Name, Err: &problem{ErrMismatch,
					fmt.Sprintf("no entry for pkgid %s (%s line %d)", p.PkgID, primary.Name, line)}}
			}
			if err := s.merge(p, e, primary.Name); err != nil {
				return err
			}
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	for _, s := range sides {
		if err := s.finish(primary.Name); err != nil {
			return err
		}
	}
	return nil
}

// side is filelists or other as ReadPackages reads it.
type side struct {
	name     string
	r        *Reader
	pending  map[string][]entry // read ahead, by pkgid, in file order
	npending int
	eof      bool
}

type entry struct {
	p    *Package
	line int
}

// take returns the next entry for pkgid, reading ahead as far as needed; p is nil when
// the file has none.
func (s *side) take(pkgid string) (entry, error) {
	if s.npending > 0 {
		if q := s.pending[pkgid]; len(q) > 0 {
			if len(q) == 1 {
				delete(s.pending, pkgid)
			} else {
				s.pending[pkgid] = q[1:]
			}
			s.npending--
			return q[0], nil
		}
	}
	for !s.eof {
		p, err := s.r.Next()
		if err == io.EOF {
			s.eof = true
			break
		}
		if err != nil {
			return entry{}, err
		}
		e := entry{p, s.r.line}
		if p.PkgID == pkgid {
			return e, nil
		}
		if s.pending == nil {
			s.pending = make(map[string][]entry)
		}
		s.pending[p.PkgID] = append(s.pending[p.PkgID], e)
		s.npending++
	}
	return entry{}, nil
}

// merge checks e against primary's p and moves its files or changelogs into p.
func (s *side) merge(p *Package, e entry, primaryName string) error {
	q := e.p
	for _, f := range [...]struct{ what, got, want string }{
		{"name", q.Name, p.Name}, {"arch", q.Arch, p.Arch}, {"epoch", q.Epoch, p.Epoch},
		{"version", q.Version, p.Version}, {"release", q.Release, p.Release},
	} {
		if f.got != "" && f.got != f.want {
			return &Error{File: s.name, Line: e.line, Offset: -1, Package: label(q), Err: &problem{ErrMismatch,
				fmt.Sprintf("pkgid %s: %s %q, but %q in %s", q.PkgID, f.what, f.got, f.want, primaryName)}}
		}
	}
	if s.r.kind == Other {
		p.Changelogs = q.Changelogs
		return nil
	}
	p.Files = unionFiles(q.Files, p.Files)
	return nil
}

// unionFiles returns all, plus the files of sub (primary's subset) that all lacks.
func unionFiles(all, sub []File) []File {
	if len(sub) == 0 {
		return all
	}
	if len(all) == 0 {
		return sub
	}
	var extra []File
	if len(sub)*len(all) <= 4096 {
	outer:
		for _, f := range sub {
			for _, g := range all {
				if g.Path == f.Path {
					continue outer
				}
			}
			extra = append(extra, f)
		}
	} else {
		seen := make(map[string]struct{}, len(all))
		for _, g := range all {
			seen[g.Path] = struct{}{}
		}
		for _, f := range sub {
			if _, ok := seen[f.Path]; !ok {
				extra = append(extra, f)
				seen[f.Path] = struct{}{}
			}
		}
	}
	if len(extra) == 0 {
		return all
	}
	return append(all, extra...)
}

// finish checks that nothing is left: no entry read ahead, none unread.
func (s *side) finish(primaryName string) error {
	var first *entry
	for _, q := range s.pending {
		if first == nil || q[0].line < first.line {
			first = &q[0]
		}
	}
	if first == nil && !s.eof {
		p, err := s.r.Next()
		if err != nil && err != io.EOF {
			return err
		}
		if p != nil {
			first = &entry{p, s.r.line}
		}
	}
	if first == nil {
		return nil
	}
	return &Error{File: s.name, Line: first.line, Offset: -1, Package: label(first.p), Err: &problem{ErrMismatch,
		fmt.Sprintf("pkgid %s is not in %s", first.p.PkgID, primaryName)}}
}
