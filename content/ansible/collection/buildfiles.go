package collection

import (
	"fmt"
	"io/fs"
	"unicode/utf8"
)

// buildEntry is one FILES.json entry and how its tar member is made.
type buildEntry struct {
	name string // as in FILES.json and the tarball
	dir  bool   // ftype "dir" (a directory, or a link to one)
	link string // the member is a symlink with this text; "" for a directory or file
	real string // the path whose bytes or attributes the member takes
	sum  [32]byte
	size int64
	info fs.FileInfo // of real (mode, mtime)
}

// ignoredDirs are the directory names ansible-galaxy never enters, at any depth.
var ignoredDirs = map[string]bool{"CVS": true, ".bzr": true, ".hg": true, ".git": true, ".svn": true, "__pycache__": true, ".tox": true}

// walkFiles lists the files to build as ansible-galaxy's _build_files_manifest_walk
// does: depth first, every directory's entries in name order, build_ignore's fnmatch
// patterns and the default ones matched against each path.
func (t *srcTree) walkFiles(m *buildMeta) ([]buildEntry, []string, error) {
	patterns := append([]string{ManifestName, FilesJSONName, GalaxyYML, "galaxy.yaml", ".git", "*.pyc", "*.retry",
		"tests/output", m.namespace + "-" + m.name + "-*.tar.gz"}, m.ignore...)
	var matchers []fnmatcher
	for _, p := range patterns {
		f, err := newFnmatcher(p)
		if err != nil {
			return nil, nil, galaxyError(ErrInvalid, "build_ignore: %q is not a valid pattern", p)
		}
		matchers = append(matchers, f)
	}
	ignored := func(rel string) bool {
		for _, f := range matchers {
			if f.match(rel, &t.steps) {
				return true
			}
		}
		return false
	}
	var out []buildEntry
	var warnings []string
	var walk func(dir string) error
	walk = func(dir string) error {
		return t.each(dir, func(e fs.DirEntry, rel string) error {
			ig := ignored(rel)
			if err := t.spent(); err != nil {
				return err
			}
			if !utf8.ValidString(rel) {
				// An fs.FS cannot even stat it; what ansible-galaxy would ignore is.
				if ig || e.IsDir() && ignoredDirs[e.Name()] {
					return nil
				}
				return errorf(ErrFormat, fmt.Sprintf("%q", rel), "the name is not valid UTF-8")
			}
			s, err := t.stat(rel)
			if err != nil {
				return err
			}
			// A link leading out of the tree is never read. ansible-galaxy skips one
			// to a directory with a warning, and ships the content of a file outside.
			if s.outside {
				if !ig && !ignoredDirs[e.Name()] {
					warnings = append(warnings, fmt.Sprintf("skipping '%s' as it is a symbolic link leading outside the collection", rel))
				}
				return nil
			}
			if s.isDir() {
				if ignoredDirs[e.Name()] || ig {
					return nil
				}
				if err := t.checkName(rel); err != nil {
					return err
				}
				be := buildEntry{name: rel, dir: true, real: rel, info: s.info}
				if s.link {
					be.link, be.real, be.info = relLink(rel, s.real), s.real, s.target
				}
				out = append(out, be)
				if s.link {
					return nil
				}
				return walk(rel)
			}
			if ig {
				return nil
			}
			if err := t.checkName(rel); err != nil {
				return err
			}
			be := buildEntry{name: rel, real: rel, info: s.info}
			switch {
			case s.missing != nil:
				return errorf(ErrMissing, rel, "failed to find the target of the symbolic link: %v", s.missing)
			case s.link:
				be.link, be.real, be.info = relLink(rel, s.real), s.real, s.target
			}
			if !be.info.Mode().IsRegular() {
				return errorf(ErrUnsafe, rel, "not a regular file, directory or symbolic link")
			}
			out = append(out, be)
			return nil
		})
	}
	if err := walk(""); err != nil {
		return nil, nil, err
	}
	return out, warnings, nil
}
