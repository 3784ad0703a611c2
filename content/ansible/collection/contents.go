package collection

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Content is one entry of a collection version's contents, as galaxy-importer lists it.
type Content struct {
	Name        string  `json:"name"`
	ContentType string  `json:"content_type"`
	Description *string `json:"description"`
}

// contentDir is where galaxy-importer's ContentFinder looks for one content type, in
// the order of its ContentType enum.
type contentDir struct {
	ctype string
	dir   string
	kind  loaderKind
}

type loaderKind uint8

const (
	loadPlugin loaderKind = iota
	loadPlaybook
	loadRole
	loadExtension
	loadPattern
)

var contentDirs = func() []contentDir {
	ds := []contentDir{
		{"playbook", "playbooks", loadPlaybook},
		{"role", "roles", loadRole},
		{"module", "plugins/modules", loadPlugin},
	}
	for _, t := range []string{"module_utils", "action", "become", "cache", "callback", "cliconf",
		"connection", "doc_fragments", "filter", "httpapi", "inventory", "lookup", "netconf",
		"shell", "strategy", "terminal", "test", "vars", "eda/plugins/event_source", "eda/plugins/event_filter"} {
		ds = append(ds, contentDir{t, "plugins/" + t, loadPlugin})
	}
	return append(ds, contentDir{"patterns", "plugins/patterns", loadPattern})
}()

// documented are the types ansible-doc documents (galaxy-importer's
// ANSIBLE_DOC_SUPPORTED_TYPES); extensions are documented too.
var documented = map[string]bool{
	"become": true, "cache": true, "callback": true, "cliconf": true, "connection": true,
	"filter": true, "httpapi": true, "inventory": true, "lookup": true, "shell": true,
	"module": true, "strategy": true, "test": true, "vars": true,
}

// allowedExtensions are the extension directories meta/extensions.yml may name that
// galaxy-importer lists as contents.
var allowedExtensions = map[string]bool{"eda/plugins/event_source": true, "eda/plugins/event_filter": true}

// roleSubdirs mark a directory under roles/ as a role.
var roleSubdirs = map[string]bool{"tasks": true, "vars": true, "handlers": true, "meta": true}

// roleMetaFiles are where a role's galaxy_info is looked for, in order.
var roleMetaFiles = []string{"meta/main.yml", "meta/main.yaml", "meta.yml", "meta.yaml"}

// contentNameRE is CONTENT_NAME_REGEXP without its look-ahead (no "__", checked apart).
var contentNameRE = regexp.MustCompile(`^[a-z_][0-9a-z_]*$`)

const (
	runtimeFile    = "meta/runtime.yml"
	extensionsFile = "meta/extensions.yml"
)

// found is one piece of content: its type, its path, how it is loaded.
type found struct {
	ctype string
	path  string
	kind  loaderKind
}

// findContents lists the collection's contents as galaxy-importer's ContentFinder does,
// sorted as it sorts them (type, then path).
func (c *collection) findContents() ([]found, error) {
	dirs := contentDirs
	exts, err := c.extensionDirs()
	if err != nil {
		return nil, err
	}
	for _, e := range exts {
		dirs = append(dirs, contentDir{e, "extensions/" + e, loadExtension})
	}
	var out []found
	for _, d := range dirs {
		if !c.tree.isDir(d.dir) {
			continue
		}
		switch d.kind {
		case loadPlaybook:
			for _, name := range c.tree.children[d.dir] {
				p := d.dir + "/" + name
				if ext := strings.ToLower(splitExt(name)); (ext == ".yml" || ext == ".yaml") && !c.tree.isDir(p) && !c.tree.resolvesToDir(p) {
					out = append(out, found{d.ctype, p, d.kind})
				}
			}
		case loadRole:
			c.findRoles(d.dir, func(p string) { out = append(out, found{d.ctype, p, d.kind}) })
		default:
			c.tree.walkFiles(d.dir, func(p string) {
				base := path.Base(p)
				if (strings.HasSuffix(base, ".py") || strings.HasSuffix(base, ".ps1")) && base != "__init__.py" {
					out = append(out, found{d.ctype, p, d.kind})
				}
			})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].ctype != out[j].ctype {
			return out[i].ctype < out[j].ctype
		}
		return out[i].path < out[j].path
	})
	return out, nil
}

// findRoles yields dir if it is a role, else looks for roles in its subdirectories.
// Symlinked directories count as subdirectories but are not entered.
func (c *collection) findRoles(dir string, yield func(string)) {
	subs := c.tree.subdirs(dir)
	for _, s := range subs {
		if roleSubdirs[s] {
			yield(dir)
			return
		}
	}
	for _, s := range subs {
		if p := dir + "/" + s; c.tree.isDir(p) {
			c.findRoles(p, yield)
		}
	}
}

// extensionDirs reads meta/extensions.yml: the allowed extension directories it names.
func (c *collection) extensionDirs() ([]string, error) {
	v, ok, err := c.yamlFile(extensionsFile, "extensions.yml")
	if err != nil || !ok || v == nil {
		return nil, err
	}
	bad := errorf(ErrFormat, extensionsFile, "meta/extensions.yml is not in the expected format")
	m, ok := asOmap(v)
	if !ok {
		return nil, bad
	}
	list, ok := mustGet(m, "extensions").([]any)
	if !ok {
		return nil, bad
	}
	var dirs []string
	for _, x := range list {
		e, ok := asOmap(x)
		if !ok {
			return nil, bad
		}
		args, ok := asOmap(mustGet(e, "args"))
		if !ok {
			return nil, bad
		}
		dir, ok := mustGet(args, "ext_dir").(string)
		if !ok {
			return nil, bad
		}
		if allowedExtensions[dir] {
			dirs = append(dirs, dir)
		}
	}
	return dirs, nil
}

// splitExt is Python's os.path.splitext on a base name: leading dots belong to the name.
func splitExt(base string) string {
	trimmed := strings.TrimLeft(base, ".")
	if i := strings.LastIndexByte(trimmed, '.'); i >= 0 {
		return trimmed[i:]
	}
	return ""
}

func stem(base string) string {
	return base[:len(base)-len(splitExt(base))]
}

// loaded is a found content with what its loader read.
type loaded struct {
	Content
	docStrings []byte // JSON; nil is null
	readmeFile *string
	readmeHTML *string
}

// load names a found content and reads its description and documentation, as
// galaxy-importer's loaders do.
func (c *collection) load(f found) (*loaded, error) {
	base := path.Base(f.path)
	parts := strings.Split(path.Dir(f.path), "/")
	var name, pathName string
	switch f.kind {
	case loadPlugin:
		name = stem(base)
		pathName = strings.Join(append(tail(parts, 2), name), ".")
	case loadExtension:
		name = stem(base)
		pathName = name
	default:
		name = base
		if path.Dir(f.path) == "." {
			parts = nil
		}
		pathName = strings.Join(append(tail(parts, 1), name), ".")
	}
	if f.kind == loadPlugin || f.kind == loadExtension || f.kind == loadRole {
		if !contentNameRE.MatchString(name) || strings.Contains(name, "__") {
			return nil, errorf(ErrInvalid, f.path, "%s name invalid format: %s", f.ctype, name)
		}
	}
	l := &loaded{Content: Content{Name: pathName, ContentType: f.ctype}}
	switch f.kind {
	case loadPlaybook, loadPattern:
		l.docStrings = []byte("{}")
		if f.kind == loadPattern {
			l.docStrings = nil
		}
	case loadRole:
		l.docStrings = []byte("{}")
		if err := c.loadRole(f.path, l); err != nil {
			return nil, err
		}
	default:
		if documented[f.ctype] || f.kind == loadExtension {
			if err := c.pluginDocs(f, name, pathName, l); err != nil {
				return nil, err
			}
		}
	}
	return l, nil
}

func tail(parts []string, n int) []string {
	if len(parts) <= n {
		return nil
	}
	return append([]string(nil), parts[n:]...)
}

// pluginDocs finds the plugin's documentation: in its Python source, or in a YAML file
// of the same name beside it, as ansible-doc looks.
func (c *collection) pluginDocs(f found, name, pathName string, l *loaded) error {
	dir := path.Dir(f.path)
	var d *fileDocs
	for _, cand := range []string{name + ".py", name + ".yml", name + ".yaml"} {
		if real, e, err := c.tree.resolve(dir + "/" + cand); err == nil && e != nil && e.kind == kindFile {
			if d = c.docs[real]; d != nil {
				break
			}
		}
	}
	if d == nil {
		return nil
	}
	fq := c.info.Namespace + "." + c.info.Name
	plugin := fq + "." + pathName
	if f.kind == loadExtension {
		plugin = name
	}
	hasAction := false
	if f.ctype == "module" {
		_, e, err := c.tree.resolve("plugins/action/" + strings.ReplaceAll(pathName, ".", "/") + ".py")
		hasAction = err == nil && e != nil
	}
	ds, err := d.docStrings(fq, plugin, f.ctype == "module", hasAction)
	if err != nil {
		return nil // unreadable documentation: ansible-doc would skip the plugin
	}
	l.docStrings = ds
	if d.hasShort {
		s := d.short
		l.Description = &s
	}
	return nil
}

// loadRole reads a role's description from its metadata and renders its README.md,
// which galaxy-importer requires.
func (c *collection) loadRole(dir string, l *loaded) error {
	for _, mf := range roleMetaFiles {
		p := dir + "/" + mf
		if _, _, err := c.tree.resolve(p); err != nil {
			continue
		}
		v, _, err := c.yamlFile(p, "role metadata")
		if err != nil {
			return err
		}
		if m, ok := asOmap(v); ok {
			if gi, ok := asOmap(mustGet(m, "galaxy_info")); ok {
				if s, ok := mustGet(gi, "description").(string); ok {
					l.Description = &s
				}
			}
		}
		break
	}
	readme := dir + "/README.md"
	if _, _, err := c.tree.resolve(readme); err != nil {
		return errorf(ErrMissing, dir, "no role readme found")
	}
	html, err := c.docFile(readme)
	if err != nil {
		return err
	}
	name := "README.md"
	l.readmeFile, l.readmeHTML = &name, &html
	return nil
}

// docFile renders a Markdown file the docs blob holds.
func (c *collection) docFile(p string) (string, error) {
	b, err := c.keptFile(p, c.lim.DocFile, func(size int64) error {
		return errorf(ErrLimit, p, "documentation file %q is bigger than %d KiB", path.Base(p), c.lim.DocFile>>10)
	})
	if err != nil {
		return "", err
	}
	return renderMarkdown(p, b)
}

// keptFile returns the contents of p (links followed), which the pass over the tarball
// kept; tooBig explains a file that was not kept for its size.
func (c *collection) keptFile(p string, max int64, tooBig func(int64) error) ([]byte, error) {
	real, e, err := c.tree.resolve(p)
	if err != nil || e == nil || e.kind != kindFile {
		return nil, errorf(ErrMissing, p, "the file was not found")
	}
	if e.size > max {
		return nil, tooBig(e.size)
	}
	b, ok := c.kept[real]
	if !ok {
		return nil, errorf(ErrFormat, p, "links to %s, which is not read for metadata", real)
	}
	return b, nil
}

// yamlFile parses a kept YAML file; ok is false when it does not exist. what names the
// file in galaxy-importer's parse error ("Error during parsing of runtime.yml").
func (c *collection) yamlFile(p, what string) (v any, ok bool, err error) {
	if _, _, err := c.tree.resolve(p); err != nil {
		return nil, false, nil
	}
	b, err := c.keptFile(p, c.lim.Manifest, func(size int64) error {
		return errorf(ErrLimit, p, "larger than %d bytes", c.lim.Manifest)
	})
	if err != nil {
		return nil, true, err
	}
	v, err = parseYAML(b, yamlBudget(len(b)))
	if err != nil {
		return nil, true, &Error{Kind: ErrFormat, Path: p, Msg: fmt.Sprintf("error during parsing of %s: %v", what, err), Err: err}
	}
	return v, true, nil
}

// isRoleMeta says whether p (under roles/) may be a role's metadata file.
func isRoleMeta(p string) bool {
	for _, mf := range roleMetaFiles {
		if strings.HasSuffix(p, "/"+mf) {
			return true
		}
	}
	return false
}
