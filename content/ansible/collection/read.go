package collection

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// Options tune Read.
type Options struct {
	// Limits bound the input; a zero field takes DefaultLimits' value.
	Limits Limits
	// Expect holds what the upload said the artifact is (pulp_ansible's expected_*
	// fields, or ParseFilename of the uploaded file's name); its non-empty parts must
	// match the manifest.
	Expect Filename
}

// Version is a collection version's metadata as pulp_ansible stores it for a
// CollectionVersion after galaxy-importer's import.
type Version struct {
	Namespace, Name, Version string
	SemVer                   SemVer // Version parsed: version_major, _minor, _patch, _prerelease
	Authors                  []string
	Description              string
	Documentation            string
	Homepage                 string
	Issues                   string
	Repository               string
	License                  []string
	Tags                     []string
	Dependencies             map[string]string
	RequiresAnsible          string
	Contents                 []Content
	DocsBlob                 DocsBlob
	Manifest                 json.RawMessage // MANIFEST.json as in the tarball
	Files                    json.RawMessage // FILES.json as in the tarball
	SHA256                   string          // of the .tar.gz, hex
	Size                     int64           // of the .tar.gz
}

// RelativePath is where pulp_ansible serves the artifact: namespace-name-version.tar.gz.
func (v *Version) RelativePath() string {
	return Filename{v.Namespace, v.Name, v.Version}.String()
}

// DocsBlob is galaxy-importer's docs_blob.
type DocsBlob struct {
	CollectionReadme   DocFile       `json:"collection_readme"`
	DocumentationFiles []DocFile     `json:"documentation_files"`
	Contents           []DocsContent `json:"contents"`
}

// DocFile is a rendered documentation file.
type DocFile struct {
	Name string `json:"name"`
	HTML string `json:"html"`
}

// DocsContent is the documentation of one content.
type DocsContent struct {
	ContentName string          `json:"content_name"`
	ContentType string          `json:"content_type"`
	DocStrings  json.RawMessage `json:"doc_strings"` // ansible-doc's shape, {} or null
	ReadmeFile  *string         `json:"readme_file"`
	ReadmeHTML  *string         `json:"readme_html"`
}

// collection is the state of one Read after the pass over the tarball.
type collection struct {
	*archive
	tree *tree
	info collectionInfo
}

// Read reads a collection artifact (.tar.gz) from r in one pass, checks it as
// galaxy-importer's import does and returns the metadata pulp_ansible stores. It reads r
// to its end (the digest and size cover every byte) unless it fails first. Every error
// is an *Error.
func Read(r io.Reader, opt Options) (*Version, error) {
	lim := opt.Limits.withDefaults()
	a, err := readArchive(r, lim)
	if err != nil {
		return nil, err
	}
	c := &collection{archive: a, tree: newTree(a.entries)}
	// Extraction comes first in galaxy-importer: a link leading outside fails there.
	if err := c.checkLinks(); err != nil {
		return nil, c.tag(err)
	}
	v, err := c.check(opt.Expect)
	if err != nil {
		return nil, c.tag(err)
	}
	return v, nil
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	for _, f := range []struct{ v, def *int64 }{
		{&l.Compressed, &d.Compressed}, {&l.Uncompressed, &d.Uncompressed}, {&l.Ratio, &d.Ratio},
		{&l.RatioFloor, &d.RatioFloor}, {&l.Manifest, &d.Manifest}, {&l.FilesJSON, &d.FilesJSON},
		{&l.DocFile, &d.DocFile}, {&l.Source, &d.Source}, {&l.Kept, &d.Kept},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	for _, f := range []struct{ v, def *int }{{&l.Entries, &d.Entries}, {&l.PathLen, &d.PathLen}, {&l.Depth, &d.Depth}} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return l
}

// check runs galaxy-importer's checks in its order, then builds the metadata.
func (c *collection) check(expect Filename) (*Version, error) {
	manifestBytes, err := c.keptFile(ManifestName, c.lim.Manifest, func(int64) error {
		return errorf(ErrLimit, ManifestName, "larger than %d bytes", c.lim.Manifest)
	})
	if err != nil {
		if e, ok := err.(*Error); ok && e.Kind == ErrMissing {
			return nil, errorf(ErrMissing, "", "no manifest found in collection")
		}
		return nil, err
	}
	m, err := parseManifest(manifestBytes)
	if err != nil {
		return nil, err
	}
	c.info = m.info
	c.label = m.info.Namespace + "." + m.info.Name + " " + m.info.Version
	files, filesBytes, err := c.checkFilesJSON(m.filesFile)
	if err != nil {
		return nil, err
	}
	if err := c.checkFiles(files, m.filesFile.Name); err != nil {
		return nil, err
	}
	if err := expect.check(m.info.Namespace, m.info.Name, m.info.Version); err != nil {
		return nil, err
	}
	for _, p := range []string{m.info.Readme, m.info.LicenseFile} {
		if p == "" {
			continue
		}
		if _, _, err := c.tree.resolve(cleanRel(p)); err != nil || unsafeRel(p) {
			return nil, errorf(ErrMissing, "", "could not find file %s", path.Base(p))
		}
	}
	found, err := c.findContents()
	if err != nil {
		return nil, err
	}
	v := &Version{
		Namespace: m.info.Namespace, Name: m.info.Name, Version: m.info.Version,
		Authors: m.info.Authors, Description: m.info.Description, Documentation: m.info.Documentation,
		Homepage: m.info.Homepage, Issues: m.info.Issues, Repository: m.info.Repository,
		License: m.info.License, Tags: m.info.Tags, Dependencies: m.info.Dependencies,
		Contents: []Content{}, Manifest: manifestBytes, Files: filesBytes,
		SHA256: c.sha256, Size: c.size,
	}
	v.SemVer, _ = ParseVersion(v.Version) // checked with the manifest
	v.DocsBlob.DocumentationFiles = []DocFile{}
	v.DocsBlob.Contents = []DocsContent{}
	for _, f := range found {
		l, err := c.load(f)
		if err != nil {
			return nil, err
		}
		v.Contents = append(v.Contents, l.Content)
		v.DocsBlob.Contents = append(v.DocsBlob.Contents, DocsContent{
			ContentName: l.Name, ContentType: l.ContentType, DocStrings: rawOrNull(l.docStrings),
			ReadmeFile: l.readmeFile, ReadmeHTML: l.readmeHTML,
		})
	}
	if err := c.docsFiles(&v.DocsBlob); err != nil {
		return nil, err
	}
	if v.RequiresAnsible, err = c.requiresAnsible(); err != nil {
		return nil, err
	}
	return v, nil
}

func rawOrNull(b []byte) json.RawMessage {
	if b == nil {
		return json.RawMessage("null")
	}
	return b
}

// cleanRel and unsafeRel judge a path the manifest names (readme, license_file, a
// FILES.json entry): it must stay inside the collection.
func cleanRel(p string) string { return path.Clean(p) }

func unsafeRel(p string) bool {
	c := path.Clean(p)
	return p == "" || strings.HasPrefix(p, "/") || escapes(c) || c == "."
}

// checkFilesJSON finds the file manifest MANIFEST.json names, checks its digest and
// parses it.
func (c *collection) checkFilesJSON(ff listedFile) (*filesJSON, []byte, error) {
	name := ff.Name
	if unsafeRel(name) {
		return nil, nil, errorf(ErrUnsafe, ManifestName, "file_manifest_file names an invalid path: %q", name)
	}
	real, e, err := c.tree.resolve(cleanRel(name))
	if err != nil || e == nil || e.kind != kindFile {
		return nil, nil, errorf(ErrMissing, name, "the file (%s) was not found", name)
	}
	if got := hex.EncodeToString(e.sum[:]); got != ff.SHA256 {
		return nil, nil, errorf(ErrChecksum, name, "file %s sha256sum should be %s but the actual sha256sum was %s", name, ff.SHA256, got)
	}
	if e.size > c.lim.FilesJSON {
		return nil, nil, errorf(ErrLimit, name, "larger than %d bytes", c.lim.FilesJSON)
	}
	b, ok := c.kept[real]
	if !ok {
		return nil, nil, errorf(ErrFormat, name, "the file manifest must be a .json file at the collection's root")
	}
	f, err := parseFilesJSON(name, b)
	if err != nil {
		return nil, nil, err
	}
	return f, b, nil
}

// checkFiles checks every file FILES.json lists (present, same sha256) and that the
// tarball holds nothing it does not list, as galaxy-importer's _check_file_manifest.
func (c *collection) checkFiles(f *filesJSON, filesName string) error {
	listed := map[string]bool{ManifestName: true, filesName: true}
	for _, fe := range f.Files {
		listed[fe.Name] = true
		if fe.Ftype != "file" {
			continue
		}
		if unsafeRel(fe.Name) {
			return errorf(ErrUnsafe, filesName, "lists an invalid path: %q", fe.Name)
		}
		_, e, err := c.tree.resolve(cleanRel(fe.Name))
		if err != nil || e == nil {
			return errorf(ErrMissing, fe.Name, "the file (%s) was not found", fe.Name)
		}
		if e.kind != kindFile {
			return errorf(ErrMissing, fe.Name, "listed as a file in %s but it is a directory", filesName)
		}
		if got := hex.EncodeToString(e.sum[:]); got != fe.SHA256 {
			return errorf(ErrChecksum, fe.Name, "file %s sha256sum should be %s but the actual sha256sum was %s", fe.Name, fe.SHA256, got)
		}
	}
	var extra []string
	for _, p := range c.tree.all() {
		if !listed[p] {
			extra = append(extra, p)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		shown := extra
		if len(shown) > 20 {
			shown = shown[:20]
		}
		more := ""
		if len(extra) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(extra)-len(shown))
		}
		return errorf(ErrUnlisted, "", "files in the artifact but not the file manifest: %s%s", strings.Join(shown, ", "), more)
	}
	return nil
}

// checkLinks refuses a symlink that, followed through other links, leads outside the
// collection (Python's extraction filter resolves links as it extracts them).
// An entry below a symlink would be written through it; ansible-galaxy never builds
// that, so it is refused rather than followed.
func (c *collection) checkLinks() error {
	for _, p := range c.tree.all() {
		e := c.entries[p]
		if e == nil || e.kind != kindSymlink {
			continue
		}
		if _, _, err := c.tree.resolve(p); err == errEscape {
			return errorf(ErrUnsafe, p, "invalid link target detected: %q", e.target)
		}
		if len(c.tree.children[p]) > 0 {
			return errorf(ErrUnsafe, p+"/"+c.tree.children[p][0], "the path passes through a symbolic link")
		}
	}
	return nil
}

// docsFiles renders the collection's README.md (required) and the Markdown files in
// docs/ into the docs blob.
func (c *collection) docsFiles(b *DocsBlob) error {
	if _, e, err := c.tree.resolve("README.md"); err != nil || e == nil {
		return errorf(ErrMissing, "", "no collection readme found")
	}
	html, err := c.docFile("README.md")
	if err != nil {
		return err
	}
	b.CollectionReadme = DocFile{Name: "README.md", HTML: html}
	if !c.tree.resolvesToDir("docs") {
		return nil
	}
	real, _, _ := c.tree.resolve("docs")
	for _, name := range c.tree.children[real] {
		p := real + "/" + name
		if strings.ToLower(splitExt(name)) != ".md" || c.tree.resolvesToDir(p) {
			continue
		}
		if _, e, err := c.tree.resolve(p); err != nil || e == nil {
			continue
		}
		html, err := c.docFile(p)
		if err != nil {
			return err
		}
		b.DocumentationFiles = append(b.DocumentationFiles, DocFile{Name: name, HTML: html})
	}
	return nil
}

// requiresAnsible reads meta/runtime.yml's requires_ansible, which galaxy-importer
// requires.
func (c *collection) requiresAnsible() (string, error) {
	v, ok, err := c.yamlFile(runtimeFile, "runtime.yml")
	if err != nil {
		return "", err
	}
	if !ok || v == nil || v == false || v == "" {
		return "", errorf(ErrInvalid, "", "'requires_ansible' in meta/runtime.yml is mandatory, but no meta/runtime.yml found")
	}
	m, isMap := asOmap(v)
	if !isMap {
		return "", errorf(ErrFormat, runtimeFile, "error during parsing of runtime.yml: not a mapping")
	}
	if len(m.keys) == 0 {
		return "", errorf(ErrInvalid, "", "'requires_ansible' in meta/runtime.yml is mandatory, but no meta/runtime.yml found")
	}
	raw, _ := m.get("requires_ansible")
	if raw == nil || raw == false || raw == "" {
		return "", errorf(ErrInvalid, runtimeFile, "'requires_ansible' in meta/runtime.yml is mandatory, but 'requires_ansible' not found")
	}
	s, ok := raw.(string)
	if !ok {
		return "", errorf(ErrInvalid, runtimeFile, "'requires_ansible' must be a string")
	}
	if err := ValidRequiresAnsible(s); err != nil {
		return "", errorf(ErrInvalid, runtimeFile, "'requires_ansible' is not a valid requirement specification: %v", err)
	}
	return s, nil
}
