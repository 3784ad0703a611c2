package collection

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// srcTree is the collection's source as Build reads it: an fs.FS whose symbolic links
// (when it can read them, fs.ReadLinkFS) are followed only inside it.
type srcTree struct {
	fsys    fs.FS
	root    string // the absolute path fsys stands for (BuildOptions.Root)
	lim     Limits
	visited int    // entries looked at, bounded by lim.Entries
	steps   budget // of pattern matching
}

// matchSteps bounds the steps of one build's pattern matching: community.general
// 5.7.0 with the default manifest directives takes under 3% of it.
const matchSteps = 200_000_000

var errSteps = errorf(ErrLimit, GalaxyYML, "matching the build_ignore or manifest patterns takes more than %d steps", matchSteps)

// spent reports the budget's end as an error.
func (t *srcTree) spent() error {
	if t.steps.left < 0 {
		e := *errSteps
		return &e
	}
	return nil
}

// srcInfo is what the tree says about one path.
type srcInfo struct {
	info fs.FileInfo // of the path itself (Lstat)
	link bool
	// For a link: where it leads inside the tree ("" for the root), and what is there;
	// outside when it leads out of the tree (or to an absolute path), missing when
	// nothing is there or it loops.
	real    string
	target  fs.FileInfo
	outside bool
	missing error
}

// isDir says whether the path is a directory, links followed (os.path.isdir).
func (s *srcInfo) isDir() bool {
	if s.link {
		return s.target != nil && s.target.IsDir()
	}
	return s.info.IsDir()
}

// count bounds the entries looked at, built or not.
func (t *srcTree) count() error {
	if t.visited++; t.visited > t.lim.Entries {
		return errorf(ErrLimit, "", "the source tree has more than %d entries", t.lim.Entries)
	}
	return nil
}

// checkName bounds and checks the path of an entry that is built.
func (t *srcTree) checkName(rel string) error {
	switch {
	case len(rel) > t.lim.PathLen:
		return errorf(ErrLimit, rel[:min(len(rel), 64)]+"…", "path longer than %d bytes", t.lim.PathLen)
	case strings.Count(rel, "/")+1 > t.lim.Depth:
		return errorf(ErrLimit, rel, "nested deeper than %d directories", t.lim.Depth)
	}
	return nil
}

// each calls fn for every entry of dir (its path relative to the root), in name order,
// counting it against Limits.Entries. ansible-galaxy takes os.listdir's order, which is
// the file system's; name order is the one every file system can give.
func (t *srcTree) each(dir string, fn func(e fs.DirEntry, rel string) error) error {
	ents, err := fs.ReadDir(t.fsys, fsName(dir))
	if err != nil {
		return readErr(dir, err)
	}
	for _, e := range ents {
		if err := t.count(); err != nil {
			return err
		}
		if err := fn(e, path.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func fsName(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

func readErr(rel string, err error) error {
	return &Error{Kind: ErrRead, Path: rel, Msg: "reading the source tree: " + err.Error(), Err: err}
}

// stat describes rel, following it if it is a link.
func (t *srcTree) stat(rel string) (*srcInfo, error) {
	fi, err := fs.Lstat(t.fsys, rel)
	if err != nil {
		return nil, readErr(rel, err)
	}
	s := &srcInfo{info: fi, link: fi.Mode()&fs.ModeSymlink != 0}
	if !s.link {
		return s, nil
	}
	s.real, s.target, err = t.resolve(rel)
	switch {
	case errors.Is(err, errEscape):
		s.outside = true
	case errors.Is(err, errLoop), errors.Is(err, errNotFound):
		s.missing = err
	case err != nil:
		return nil, err
	}
	return s, nil
}

// resolve follows every link in rel as os.path.realpath does, but never leaves the
// tree: a link to an absolute path, or one whose ".." climbs above the root, is
// errEscape. It returns the real path and what is there.
func (t *srcTree) resolve(rel string) (string, fs.FileInfo, error) {
	rest := strings.Split(rel, "/")
	var cur []string
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "", nil, errEscape
			}
			cur = cur[:len(cur)-1]
			continue
		}
		next := path.Join(append(cur, c)...)
		fi, err := fs.Lstat(t.fsys, next)
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, errNotFound
		}
		if err != nil {
			return "", nil, readErr(next, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.IsDir() && len(rest) > 0 {
				return "", nil, errNotFound
			}
			cur = append(cur, c)
			continue
		}
		if hops++; hops > maxHops {
			return "", nil, errLoop
		}
		target, err := fs.ReadLink(t.fsys, next)
		if err != nil {
			return "", nil, readErr(next, err)
		}
		if target == "" || strings.HasPrefix(target, "/") {
			return "", nil, errEscape
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	real := path.Join(cur...)
	fi, err := fs.Stat(t.fsys, fsName(real))
	if err != nil {
		return "", nil, readErr(real, err)
	}
	return real, fi, nil
}

// relLink is the text of a link at from to the real path to, both relative to the
// root: os.path.relpath(to, dirname(from)).
func relLink(from, to string) string {
	split := func(p string) []string {
		if p == "" || p == "." {
			return nil
		}
		return strings.Split(p, "/")
	}
	start, dest := split(path.Dir(from)), split(to)
	i := 0
	for i < len(start) && i < len(dest) && start[i] == dest[i] {
		i++
	}
	var parts []string
	for range start[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, dest[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}
