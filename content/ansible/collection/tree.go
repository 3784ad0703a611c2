package collection

import (
	"errors"
	"path"
	"sort"
	"strings"
)

// maxHops bounds the symlinks one path resolution follows (Linux's MAXSYMLINKS).
const maxHops = 40

var (
	errEscape   = errors.New("points outside the collection")
	errLoop     = errors.New("too many levels of symbolic links")
	errNotFound = errors.New("not found")
)

// tree is the directory structure the tarball extracts to: its entries plus the
// directories their paths imply.
type tree struct {
	entries  map[string]*entry
	children map[string][]string // directory ("" is the root) → sorted names in it
}

func newTree(entries map[string]*entry) *tree {
	t := &tree{entries: entries, children: map[string][]string{}}
	seen := map[string]bool{}
	for p := range entries {
		for {
			dir, base := path.Split(p)
			dir = strings.TrimSuffix(dir, "/")
			if seen[p] {
				break
			}
			seen[p] = true
			t.children[dir] = append(t.children[dir], base)
			if dir == "" {
				break
			}
			p = dir
		}
	}
	for _, c := range t.children {
		sort.Strings(c)
	}
	return t
}

// isDir says whether p (no symlinks followed) is a directory, explicit or implied.
func (t *tree) isDir(p string) bool {
	if e, ok := t.entries[p]; ok {
		return e.kind == kindDir
	}
	_, ok := t.children[p]
	return ok
}

// exists says whether p names anything, without following symlinks.
func (t *tree) exists(p string) bool {
	_, ok := t.entries[p]
	return ok || t.isDir(p)
}

// resolve follows symlinks in every component of p, as opening it would. It returns
// the real path and its entry (nil for a directory only implied by other paths), or
// errNotFound, errEscape or errLoop.
func (t *tree) resolve(p string) (string, *entry, error) {
	hops := 0
	rest := strings.Split(p, "/")
	cur := ""
	for len(rest) > 0 {
		next := path.Join(cur, rest[0])
		rest = rest[1:]
		if escapes(next) {
			return "", nil, errEscape
		}
		if next == "." || next == "" {
			cur = ""
			continue
		}
		e, ok := t.entries[next]
		switch {
		case ok && e.kind == kindSymlink:
			if hops++; hops > maxHops {
				return "", nil, errLoop
			}
			// The link's own components are walked from its (real) directory, so a
			// ".." in them climbs from where earlier links led, as the kernel does.
			rest = append(strings.Split(e.target, "/"), rest...)
		case ok && e.kind == kindFile && len(rest) > 0:
			return "", nil, errNotFound // a file used as a directory
		case ok, t.isDir(next):
			cur = next
		default:
			return "", nil, errNotFound
		}
	}
	if cur == "" {
		return "", nil, nil
	}
	return cur, t.entries[cur], nil
}

// resolvesToDir says whether p, links followed, is a directory.
func (t *tree) resolvesToDir(p string) bool {
	real, e, err := t.resolve(p)
	return err == nil && (e == nil || e.kind == kindDir) && (real == "" || t.isDir(real))
}

// walkFiles lists, depth first and sorted, the files under dir the way os.walk without
// following links sees them: regular files and symlinks that do not lead to a
// directory; symlinked directories are not entered.
func (t *tree) walkFiles(dir string, fn func(p string)) {
	for _, name := range t.children[dir] {
		p := path.Join(dir, name)
		switch {
		case t.isDir(p):
			t.walkFiles(p, fn)
		case t.resolvesToDir(p):
		default:
			fn(p)
		}
	}
}

// subdirs lists the directories in dir, symlinks to directories included, as os.walk
// reports them.
func (t *tree) subdirs(dir string) []string {
	var out []string
	for _, name := range t.children[dir] {
		if p := path.Join(dir, name); t.isDir(p) || t.resolvesToDir(p) {
			out = append(out, name)
		}
	}
	return out
}

// all lists every path in the tree, entries and implied directories, sorted.
func (t *tree) all() []string {
	var out []string
	for dir, names := range t.children {
		for _, n := range names {
			out = append(out, path.Join(dir, n))
		}
	}
	sort.Strings(out)
	return out
}
