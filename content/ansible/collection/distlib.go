package collection

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// defaultDirectives are what ansible-galaxy (2.19) puts before a galaxy.yml's own
// "manifest" directives, and after them, unless omit_default_directives is set.
func defaultDirectives(m *buildMeta) (before, after []string) {
	before = []string{
		"include meta/*.yml",
		"include *.txt *.md *.rst *.license COPYING LICENSE",
		"recursive-include .reuse **",
		"recursive-include LICENSES **",
		"recursive-include tests **",
		"recursive-include docs **.rst **.yml **.yaml **.json **.j2 **.txt **.license",
		"recursive-include roles **.yml **.yaml **.json **.j2 **.license",
		"recursive-include playbooks **.yml **.yaml **.json **.license",
		"recursive-include changelogs **.yml **.yaml **.license",
		"recursive-include plugins */**.py */**.license",
	}
	if m.licenseFile != "" {
		before = append(before, "include "+m.licenseFile)
	}
	// The plugin loaders' directories that ansible-doc documents, sorted, less modules
	// and module_utils (which come next).
	for _, p := range []string{"become", "cache", "callback", "cliconf", "connection", "filter", "httpapi",
		"inventory", "lookup", "netconf", "shell", "strategy", "test", "vars"} {
		before = append(before, "recursive-include plugins/"+p+" **.yml **.yaml")
	}
	before = append(before,
		"recursive-include plugins/modules **.ps1 **.yml **.yaml **.license",
		"recursive-include plugins/module_utils **.ps1 **.psm1 **.cs **.license")
	after = []string{
		fmt.Sprintf("exclude galaxy.yml galaxy.yaml MANIFEST.json FILES.json %s-%s-*.tar.gz", m.namespace, m.name),
		"recursive-exclude tests/output **",
		"global-exclude /.* /__pycache__ *.pyc *.pyo *.bak *~ *.swp",
	}
	return before, after
}

// manifestFiles lists the files to build as ansible-galaxy's
// _build_files_manifest_distlib does with distlib's Manifest: every regular file of
// the tree (links are never listed), selected by the directives, then sorted with
// their directories as Manifest.sorted(wantdirs=True) sorts them, the root among them
// as "." (which FILES.json then lists twice).
func (t *srcTree) manifestFiles(m *buildMeta) ([]buildEntry, error) {
	directives := m.manifest.directives
	if !m.manifest.omitDefaults {
		before, after := defaultDirectives(m)
		directives = append(append(append([]string{}, before...), directives...), after...)
	}
	all, err := t.findAll()
	if err != nil {
		return nil, err
	}
	selected := map[string]bool{}
	for _, d := range directives {
		if err := processDirective(d, all, selected, t.root, &t.steps); err != nil {
			return nil, err
		}
		if err := t.spent(); err != nil {
			return nil, err
		}
	}
	dirs := map[string]bool{"": true}
	for f := range selected {
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	type key struct{ dir, base string }
	var keys []key
	for f := range selected {
		keys = append(keys, key{dirOf(f), path.Base(f)})
	}
	for d := range dirs {
		if d != "" {
			keys = append(keys, key{dirOf(d), path.Base(d)})
		}
	}
	// os.path.split of absolute paths, compared as tuples: the root sorts first, and a
	// directory's own entries before those of its subdirectories.
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].dir != keys[j].dir {
			return keys[i].dir < keys[j].dir
		}
		return keys[i].base < keys[j].base
	})
	var out []buildEntry
	if len(selected) > 0 {
		out = append(out, buildEntry{name: ".", dir: true}) // the root, among the directories
	}
	for _, k := range keys {
		rel := path.Join(k.dir, k.base)
		if err := t.checkName(rel); err != nil {
			return nil, err
		}
		fi, err := fs.Stat(t.fsys, rel)
		if err != nil {
			return nil, readErr(rel, err)
		}
		out = append(out, buildEntry{name: rel, dir: dirs[rel], real: rel, info: fi})
	}
	return out, nil
}

func dirOf(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// findAll is distlib's Manifest.findall: every regular file under the root (lstat),
// directories entered unless they are links.
func (t *srcTree) findAll() ([]string, error) {
	var all []string
	var walk func(dir string) error
	walk = func(dir string) error {
		return t.each(dir, func(e fs.DirEntry, rel string) error {
			if !utf8.ValidString(rel) {
				return errorf(ErrFormat, fmt.Sprintf("%q", rel), "the name is not valid UTF-8")
			}
			fi, err := fs.Lstat(t.fsys, rel)
			if err != nil {
				return readErr(rel, err)
			}
			switch {
			case fi.Mode().IsRegular():
				all = append(all, rel)
			case fi.IsDir():
				if strings.Count(rel, "/")+1 > t.lim.Depth {
					return errorf(ErrLimit, rel, "nested deeper than %d directories", t.lim.Depth)
				}
				return walk(rel)
			}
			return nil
		})
	}
	return all, walk("")
}

var directiveActions = map[string]bool{"include": true, "exclude": true, "global-include": true,
	"global-exclude": true, "recursive-include": true, "recursive-exclude": true, "graft": true, "prune": true}

// pyFields splits as Python's str.split() does: on Unicode whitespace and the ASCII
// separators \x1c-\x1f, which Python counts as whitespace too.
func pyFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f })
}

// processDirective is distlib's Manifest.process_directive: include patterns add files
// from all to selected, exclude patterns take them out.
func processDirective(d string, all []string, selected map[string]bool, root string, steps *budget) error {
	bad := func(format string, args ...any) error {
		return galaxyError(ErrInvalid, "invalid manifest directive %q: "+format, append([]any{d}, args...)...)
	}
	words := pyFields(d)
	if len(words) == 0 {
		return bad("it is empty")
	}
	if len(words) == 1 && !directiveActions[words[0]] {
		words = append([]string{"include"}, words...)
	}
	action := words[0]
	type sel struct {
		pattern string
		anchor  bool
		prefix  *string
	}
	var sels []sel
	switch action {
	case "include", "exclude", "global-include", "global-exclude":
		if len(words) < 2 {
			return bad("'%s' expects <pattern1> <pattern2> ...", action)
		}
		for _, p := range words[1:] {
			sels = append(sels, sel{pattern: p, anchor: !strings.HasPrefix(action, "global-")})
		}
	case "recursive-include", "recursive-exclude":
		if len(words) < 3 {
			return bad("'%s' expects <dir> <pattern1> <pattern2> ...", action)
		}
		for _, p := range words[2:] {
			sels = append(sels, sel{pattern: p, prefix: &words[1]})
		}
	case "graft", "prune":
		if len(words) != 2 {
			return bad("'%s' expects a single <dir_pattern>", action)
		}
		sels = append(sels, sel{prefix: &words[1]})
	default:
		return bad("unknown action '%s'", action)
	}
	include := action == "include" || action == "global-include" || action == "recursive-include" || action == "graft"
	for _, s := range sels {
		m, err := newDistlibMatcher(s.pattern, s.anchor, s.prefix, root)
		if err != nil {
			return bad("%v", err)
		}
		if include {
			for _, f := range all {
				if m.match(f, steps) {
					selected[f] = true
				}
			}
			continue
		}
		for f := range selected {
			if m.match(f, steps) {
				delete(selected, f)
			}
		}
	}
	return nil
}
