package collection

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRealCollections reads published collections and checks what pulp_ansible would
// store. The contents counts were checked against a listing of each tarball made
// independently (every .py/.ps1 under plugins/<type>/, every playbooks/*.yml).
func TestRealCollections(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file            string
		contents        int
		documented      int // contents with doc_strings from DOCUMENTATION
		deps            map[string]string
		requiresAnsible string
		license         []string
		firstContent    Content
	}{
		{"foo-bar-1.0.0.tar.gz", 0, 0, map[string]string{}, ">=2.9.10,<2.11.5", []string{"GPL-2.0-or-later"}, Content{}},
		{"pulp-testing_asset-1.0.0.tar.gz", 0, 0, map[string]string{}, ">=2.9.10,<2.11", []string{"GPL-2.0-or-later"}, Content{}},
		{"pulp-testing_asset-1.0.1.tar.gz", 0, 0, map[string]string{}, ">=2.9.10,<2.11", []string{"GPL-2.0-or-later"}, Content{}},
		{"ansible-utils-2.7.0.tar.gz", 70, 62, map[string]string{}, ">=2.9.10", []string{}, Content{Name: "cli_parse", ContentType: "action"}},
		{"community-general-5.7.0.tar.gz", 758, 656, map[string]string{}, ">=2.11.0", []string{}, Content{Name: "system.iptables_state", ContentType: "action"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			if testing.Short() && strings.HasPrefix(tc.file, "community") {
				t.Skip("large")
			}
			data := readFile(t, tc.file)
			v, err := Read(bytes.NewReader(data), Options{})
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.Sum256(data)
			if v.SHA256 != hex.EncodeToString(h[:]) || v.Size != int64(len(data)) {
				t.Errorf("sha256/size %s %d, want %x %d", v.SHA256, v.Size, h, len(data))
			}
			if want := v.Namespace + "-" + v.Name + "-" + v.Version + ".tar.gz"; want != tc.file || v.RelativePath() != tc.file {
				t.Errorf("identity %s, relative path %s", want, v.RelativePath())
			}
			if len(v.Contents) != tc.contents || len(v.DocsBlob.Contents) != tc.contents {
				t.Errorf("%d contents (%d in docs_blob), want %d", len(v.Contents), len(v.DocsBlob.Contents), tc.contents)
			}
			documented := 0
			for _, c := range v.DocsBlob.Contents {
				if string(c.DocStrings) != "null" {
					documented++
					var ds struct{ Doc map[string]any }
					if err := json.Unmarshal(c.DocStrings, &ds); err != nil || ds.Doc["plugin_name"] == nil {
						t.Errorf("%s: doc_strings %.200s: %v", c.ContentName, c.DocStrings, err)
					}
				}
			}
			if documented != tc.documented {
				t.Errorf("%d documented, want %d", documented, tc.documented)
			}
			if tc.contents > 0 && v.Contents[len(v.Contents)-1].ContentType == "" || tc.contents > 0 && !cmp.Equal(Content{Name: v.Contents[0].Name, ContentType: v.Contents[0].ContentType}, tc.firstContent) {
				t.Errorf("first content %+v, want %+v", v.Contents[0], tc.firstContent)
			}
			if !cmp.Equal(v.Dependencies, tc.deps) || v.RequiresAnsible != tc.requiresAnsible || !cmp.Equal(v.License, tc.license) {
				t.Errorf("deps %v, requires_ansible %q, license %v", v.Dependencies, v.RequiresAnsible, v.License)
			}
			if v.DocsBlob.CollectionReadme.Name != "README.md" || !strings.Contains(v.DocsBlob.CollectionReadme.HTML, "<h1>") {
				t.Errorf("readme %+v", v.DocsBlob.CollectionReadme)
			}
			var files struct{ Files []map[string]any }
			if err := json.Unmarshal(v.Files, &files); err != nil || len(files.Files) == 0 || !json.Valid(v.Manifest) {
				t.Errorf("files/manifest documents: %v", err)
			}
		})
	}
}

// TestSynthetic checks every kind of content against what galaxy-importer makes of it.
func TestSynthetic(t *testing.T) {
	t.Parallel()
	v, err := Read(bytes.NewReader(build{}.bytes(t)), Options{Expect: Filename{"acme", "demo", "1.2.3"}})
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	want := []Content{
		{"ping", "action", nil},
		{"eda/plugins/event_source", "eda/plugins/event_source", nil}, // replaced below
		{"core", "filter", str("Core filters")},
		{"sub.deep", "lookup", str("A deep lookup")},
		{"ping", "module", str("Try to connect to host")},
		{"win_ping", "module", str("Windows ping")},
		{"win_ping", "module", str("Windows ping")},
		{"helpers", "module_utils", nil},
		{"site.yml", "playbook", nil},
		{"group.db", "role", nil},
		{"web", "role", str("Web server role")},
	}
	want[1] = Content{"watch", "eda/plugins/event_source", str("Watch events")}
	if diff := cmp.Diff(want, v.Contents); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
	if v.RequiresAnsible != ">=2.14.0" || v.SemVer.Major != 1 || v.SemVer.Patch != 3 || v.Dependencies["acme.base"] != ">=1.0.0,<2.0.0" {
		t.Errorf("requires_ansible %q, semver %+v, deps %v", v.RequiresAnsible, v.SemVer, v.Dependencies)
	}
	blob, _ := json.Marshal(v.DocsBlob)
	var db struct {
		CollectionReadme   DocFile   `json:"collection_readme"`
		DocumentationFiles []DocFile `json:"documentation_files"`
		Contents           []struct {
			ContentName string          `json:"content_name"`
			ContentType string          `json:"content_type"`
			DocStrings  json.RawMessage `json:"doc_strings"`
			ReadmeFile  *string         `json:"readme_file"`
			ReadmeHTML  *string         `json:"readme_html"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(blob, &db); err != nil {
		t.Fatal(err)
	}
	if db.CollectionReadme.HTML != "<h1>Acme demo</h1>\n<p>A <strong>demo</strong> collection.</p>" {
		t.Errorf("readme html %q", db.CollectionReadme.HTML)
	}
	if len(db.DocumentationFiles) != 2 || db.DocumentationFiles[0].Name != "guide.md" || db.DocumentationFiles[1].Name != "link.md" ||
		db.DocumentationFiles[0].HTML != db.DocumentationFiles[1].HTML {
		t.Errorf("documentation files %+v", db.DocumentationFiles)
	}
	if h := db.DocumentationFiles[0].HTML; strings.Contains(h, "<script") || strings.Contains(h, "javascript:") || strings.Contains(h, "<!--") {
		t.Errorf("unsanitized html %q", h)
	}
	byName := map[string]string{}
	for _, c := range db.Contents {
		byName[c.ContentType+" "+c.ContentName] = string(c.DocStrings)
		if c.ContentType == "role" && (c.ReadmeFile == nil || *c.ReadmeFile != "README.md" || c.ReadmeHTML == nil || !strings.HasPrefix(*c.ReadmeHTML, "<h1>")) {
			t.Errorf("role %s readme %v %v", c.ContentName, c.ReadmeFile, c.ReadmeHTML)
		}
	}
	for key, want := range map[string]string{
		"action ping":          "null",
		"module_utils helpers": "null",
		"playbook site.yml":    "{}",
		"role web":             "{}",
		"module ping": `{"doc":{"module":"ping","short_description":"Try to connect to host","version_added":"historical",` +
			`"options":[{"name":"data","description":"Data to return.","type":"str","default":"pong","version_added":"1.1.0","version_added_collection":"acme.demo"},` +
			`{"name":"nested","description":"Nested.","type":"dict","suboptions":[{"name":"inner","description":"Inner.","required":true}]}],` +
			`"version_added_collection":"acme.demo","collection":"acme.demo","plugin_name":"acme.demo.ping","has_action":true},` +
			`"examples":"\n- name: ping\n  acme.demo.ping:\n","metadata":null,` +
			`"return":[{"name":"ping","description":"Value provided with the data parameter.","returned":"success","type":"str","sample":"pong"}]}`,
		"filter core": `{"doc":{"name":"core","short_description":"Core filters","version_added":"1.0.0","version_added_collection":"acme.demo","collection":"acme.demo","plugin_name":"acme.demo.core"},"examples":"x: '{{ y | core }}'\n","metadata":null,"return":null}`,
	} {
		if got := byName[key]; got != want {
			t.Errorf("%s doc_strings\n got %s\nwant %s", key, got, want)
		}
	}
}

// TestHostile: every broken or hostile artifact fails with the kind, the file and the
// words galaxy-importer would use, and never with a panic.
func TestHostile(t *testing.T) {
	t.Parallel()
	withFiles := func(extra ...tfile) []tfile { return append(baseFiles(), extra...) }
	without := func(name string) []tfile {
		var out []tfile
		for _, f := range baseFiles() {
			if f.name != name {
				out = append(out, f)
			}
		}
		return out
	}
	cases := []struct {
		name string
		data func(t *testing.T) []byte
		opt  Options
		kind error
		path string
		msg  string
	}{
		{"not gzip", func(t *testing.T) []byte { return []byte("PK\x03\x04 zip") }, Options{}, ErrFormat, "", "not a gzip file"},
		{"truncated", func(t *testing.T) []byte { b := build{}.bytes(t); return b[:len(b)/2] }, Options{}, ErrFormat, "", ""},
		{"traversal", func(t *testing.T) []byte { return build{extra: []tfile{{name: "../evil", body: "x"}}}.bytes(t) }, Options{}, ErrUnsafe, "../evil", "invalid file paths detected"},
		{"traversal inside", func(t *testing.T) []byte { return build{extra: []tfile{{name: "docs/../../evil", body: "x"}}}.bytes(t) }, Options{}, ErrUnsafe, "docs/../../evil", "invalid file paths"},
		{"absolute path", func(t *testing.T) []byte { return build{extra: []tfile{{name: "/etc/passwd", body: "x"}}}.bytes(t) }, Options{}, ErrUnsafe, "/etc/passwd", "invalid file paths"},
		{"symlink escapes", func(t *testing.T) []byte {
			return build{extra: []tfile{{name: "plugins/x.py", link: "../../etc/passwd"}}}.bytes(t)
		}, Options{}, ErrUnsafe, "plugins/x.py", "invalid link target"},
		{"absolute symlink", func(t *testing.T) []byte { return build{extra: []tfile{{name: "x", link: "/etc/passwd"}}}.bytes(t) }, Options{}, ErrUnsafe, "x", "invalid link target"},
		{"chained symlink escape", func(t *testing.T) []byte {
			return build{files: withFiles(tfile{name: "a/up", link: ".."}, tfile{name: "a/b/c", link: "../up/README.md"}, tfile{name: "a/b/d", link: "../up/../up/../.."})}.bytes(t)
		}, Options{}, ErrUnsafe, "a/b/d", "invalid link target"},
		{"entry through a symlink", func(t *testing.T) []byte {
			return build{files: withFiles(tfile{name: "docs/sub", link: "../roles"}), extra: []tfile{{name: "docs/sub/web/README.md", body: "evil"}}}.bytes(t)
		}, Options{}, ErrUnsafe, "docs/sub/web", "passes through a symbolic link"},
		{"hard link escapes", func(t *testing.T) []byte { return build{extra: []tfile{{name: "x", hard: "../etc/passwd"}}}.bytes(t) }, Options{}, ErrUnsafe, "x", "invalid link target"},
		{"hard link to nothing", func(t *testing.T) []byte { return build{extra: []tfile{{name: "x", hard: "nothing"}}}.bytes(t) }, Options{}, ErrFormat, "x", "not a file earlier"},
		{"device file", func(t *testing.T) []byte { return build{extra: []tfile{{name: "dev", typ: '3'}}}.bytes(t) }, Options{}, ErrUnsafe, "dev", "device files"},
		{"fifo", func(t *testing.T) []byte { return build{extra: []tfile{{name: "fifo", typ: '6'}}}.bytes(t) }, Options{}, ErrUnsafe, "fifo", "FIFOs"},
		{"duplicate entry", func(t *testing.T) []byte { return build{extra: []tfile{{name: "README.md", body: "evil"}}}.bytes(t) }, Options{}, ErrFormat, "README.md", "twice"},
		{"missing MANIFEST.json", func(t *testing.T) []byte { return build{noMani: true}.bytes(t) }, Options{}, ErrMissing, "", "no manifest found in collection"},
		{"invalid MANIFEST.json", func(t *testing.T) []byte { return build{rawMani: []byte(`{"collection_info": {`)}.bytes(t) }, Options{}, ErrFormat, "MANIFEST.json", "invalid JSON"},
		{"MANIFEST.json not an object", func(t *testing.T) []byte { return build{rawMani: []byte(`[1]`)}.bytes(t) }, Options{}, ErrFormat, "MANIFEST.json", "not a JSON object"},
		{"unknown manifest key", func(t *testing.T) []byte { return build{info: map[string]any{"evil": 1}}.bytes(t) }, Options{}, ErrFormat, "MANIFEST.json", `unexpected key "evil" in collection_info`},
		{"no file_manifest_file", func(t *testing.T) []byte {
			return build{rawMani: mustJSON(t, map[string]any{"collection_info": defaultInfo(), "format": 1})}.bytes(t)
		}, Options{}, ErrFormat, "MANIFEST.json", "did not contain a 'file_manifest_file'"},
		{"FILES.json missing", func(t *testing.T) []byte { return build{noFiles: true}.bytes(t) }, Options{}, ErrMissing, "FILES.json", "the file (FILES.json) was not found"},
		{"FILES.json wrong", func(t *testing.T) []byte {
			b := build{}
			b.rawFiles = []byte(`{"files": [], "format": 1}`)
			data := b.bytes(t)
			return data
		}, Options{}, ErrUnlisted, "", "files in the artifact but not the file manifest: README.md, docs,"},
		{"FILES.json checksum", func(t *testing.T) []byte {
			good := build{}.bytes(t)
			_ = good
			return build{rawMani: manifestWithFilesSum(t, strings.Repeat("0", 64))}.bytes(t)
		}, Options{}, ErrChecksum, "FILES.json", "file FILES.json sha256sum should be 0000"},
		{"FILES.json invalid", func(t *testing.T) []byte { return build{rawFiles: []byte(`{"files": 7}`)}.bytes(t) }, Options{}, ErrFormat, "FILES.json", "'files' is not a list"},
		{"file checksum mismatch", func(t *testing.T) []byte {
			return build{fixFiles: func(fs []any) []any {
				for _, f := range fs {
					if m := f.(map[string]any); m["name"] == "plugins/modules/ping.py" {
						m["chksum_sha256"] = sum("something else")
					}
				}
				return fs
			}}.bytes(t)
		}, Options{}, ErrChecksum, "plugins/modules/ping.py", "sha256sum should be"},
		{"symlink target checksum", func(t *testing.T) []byte {
			return build{fixFiles: func(fs []any) []any {
				for _, f := range fs {
					if m := f.(map[string]any); m["name"] == "docs/link.md" {
						m["chksum_sha256"] = sum("x")
					}
				}
				return fs
			}}.bytes(t)
		}, Options{}, ErrChecksum, "docs/link.md", "sha256sum should be"},
		{"listed file missing", func(t *testing.T) []byte {
			return build{fixFiles: func(fs []any) []any {
				return append(fs, map[string]any{"name": "plugins/gone.py", "ftype": "file", "chksum_sha256": sum("")})
			}}.bytes(t)
		}, Options{}, ErrMissing, "plugins/gone.py", "the file (plugins/gone.py) was not found"},
		{"FILES.json path escapes", func(t *testing.T) []byte {
			return build{fixFiles: func(fs []any) []any {
				return append(fs, map[string]any{"name": "../../etc/passwd", "ftype": "file", "chksum_sha256": sum("")})
			}}.bytes(t)
		}, Options{}, ErrUnsafe, "FILES.json", "invalid path"},
		{"file not listed", func(t *testing.T) []byte {
			return build{extra: []tfile{{name: "plugins/extra.py", body: "x"}}}.bytes(t)
		}, Options{}, ErrUnlisted, "", "files in the artifact but not the file manifest: plugins/extra.py"},
		{"directory not listed", func(t *testing.T) []byte { return build{unlisted: map[string]bool{"roles/group": true}}.bytes(t) }, Options{}, ErrUnlisted, "", "roles/group"},
		{"filename namespace", func(t *testing.T) []byte { return build{}.bytes(t) }, Options{Expect: Filename{"other", "demo", "1.2.3"}}, ErrMismatch, "", `Filename namespace "other" did not match metadata "acme"`},
		{"filename version", func(t *testing.T) []byte { return build{}.bytes(t) }, Options{Expect: Filename{Version: "1.2.4"}}, ErrMismatch, "", `Filename version "1.2.4" did not match metadata "1.2.3"`},
		{"bad namespace", func(t *testing.T) []byte { return build{info: map[string]any{"namespace": "Acme"}}.bytes(t) }, Options{}, ErrInvalid, "MANIFEST.json", "'namespace' has invalid format: Acme"},
		{"namespace digit", func(t *testing.T) []byte { return build{info: map[string]any{"namespace": "1acme"}}.bytes(t) }, Options{}, ErrInvalid, "MANIFEST.json", "'namespace' has invalid format"},
		{"namespace keyword", func(t *testing.T) []byte { return build{info: map[string]any{"namespace": "import"}}.bytes(t) }, Options{}, ErrInvalid, "MANIFEST.json", "Python keyword"},
		{"bad name", func(t *testing.T) []byte { return build{info: map[string]any{"name": "de__mo"}}.bytes(t) }, Options{}, ErrInvalid, "MANIFEST.json", "'name' has invalid format"},
		{"long name", func(t *testing.T) []byte {
			return build{info: map[string]any{"name": strings.Repeat("a", 65)}}.bytes(t)
		}, Options{}, ErrInvalid, "MANIFEST.json", "must not be greater than 64"},
		{"bad version", func(t *testing.T) []byte { return build{info: map[string]any{"version": "1.0"}}.bytes(t) }, Options{}, ErrInvalid, "MANIFEST.json", "semantic version format, instead found '1.0'"},
		{"no authors", func(t *testing.T) []byte { return build{info: map[string]any{"authors": []any{}}}.bytes(t) }, Options{}, ErrInvalid, "MANIFEST.json", "'authors' is required"},
		{"no repository", func(t *testing.T) []byte { return build{info: map[string]any{"repository": nil}}.bytes(t) }, Options{}, ErrInvalid, "MANIFEST.json", "'repository' is required"},
		{"bad tag", func(t *testing.T) []byte { return build{info: map[string]any{"tags": []any{"Bad-Tag"}}}.bytes(t) }, Options{}, ErrInvalid, "MANIFEST.json", "'tag' has invalid format: Bad-Tag"},
		{"too many tags", func(t *testing.T) []byte {
			tags := []any{}
			for i := 0; i < 21; i++ {
				tags = append(tags, "t"+strings.Repeat("x", i))
			}
			return build{info: map[string]any{"tags": tags}}.bytes(t)
		}, Options{}, ErrInvalid, "MANIFEST.json", "no more than 20 tags"},
		{"bad license", func(t *testing.T) []byte { return build{info: map[string]any{"license": []any{"GPLv3"}}}.bytes(t) }, Options{}, ErrInvalid, "MANIFEST.json", "invalid license identifiers: 'GPLv3'"},
		{"license and license_file", func(t *testing.T) []byte { return build{info: map[string]any{"license_file": "COPYING"}}.bytes(t) }, Options{}, ErrInvalid, "MANIFEST.json", "mutually exclusive"},
		{"bad dependency range", func(t *testing.T) []byte {
			return build{info: map[string]any{"dependencies": map[string]any{"acme.base": ">= 1.0.0"}}}.bytes(t)
		}, Options{}, ErrInvalid, "MANIFEST.json", "dependency version spec range invalid: acme.base >= 1.0.0"},
		{"self dependency", func(t *testing.T) []byte {
			return build{info: map[string]any{"dependencies": map[string]any{"acme.demo": "*"}}}.bytes(t)
		}, Options{}, ErrInvalid, "MANIFEST.json", "cannot have self dependency"},
		{"readme missing", func(t *testing.T) []byte { return build{info: map[string]any{"readme": "README.rst"}}.bytes(t) }, Options{}, ErrMissing, "", "could not find file README.rst"},
		{"no collection readme", func(t *testing.T) []byte {
			return build{files: without("README.md"), info: map[string]any{"readme": "docs/guide.md"}}.bytes(t)
		}, Options{}, ErrMissing, "", "no collection readme found"},
		{"no role readme", func(t *testing.T) []byte { return build{files: without("roles/web/README.md")}.bytes(t) }, Options{}, ErrMissing, "roles/web", "no role readme found"},
		{"bad plugin name", func(t *testing.T) []byte {
			return build{files: withFiles(tfile{name: "plugins/modules/Bad-Name.py", body: ""})}.bytes(t)
		}, Options{}, ErrInvalid, "plugins/modules/Bad-Name.py", "module name invalid format: Bad-Name"},
		{"no runtime.yml", func(t *testing.T) []byte { return build{files: without("meta/runtime.yml")}.bytes(t) }, Options{}, ErrInvalid, "", "'requires_ansible' in meta/runtime.yml is mandatory, but no meta/runtime.yml found"},
		{"bad requires_ansible", func(t *testing.T) []byte {
			fs := without("meta/runtime.yml")
			return build{files: append(fs, tfile{name: "meta/runtime.yml", body: "requires_ansible: 'at least 2.9'\n"})}.bytes(t)
		}, Options{}, ErrInvalid, "meta/runtime.yml", "not a valid requirement specification"},
		{"runtime.yml not YAML", func(t *testing.T) []byte {
			fs := without("meta/runtime.yml")
			return build{files: append(fs, tfile{name: "meta/runtime.yml", body: "a: [b\n"})}.bytes(t)
		}, Options{}, ErrFormat, "meta/runtime.yml", "error during parsing of runtime.yml"},
		{"big readme", func(t *testing.T) []byte {
			fs := without("README.md")
			return build{files: append(fs, tfile{name: "README.md", body: strings.Repeat("x", 512<<10+1)})}.bytes(t)
		}, Options{}, ErrLimit, "README.md", "bigger than 512 KiB"},
		{"gzip bomb", func(t *testing.T) []byte {
			return build{extra: []tfile{{name: "zeros", body: strings.Repeat("\x00", 64<<20)}}}.bytes(t)
		}, Options{}, ErrLimit, "", "times its size"},
		{"uncompressed limit", func(t *testing.T) []byte { return build{}.bytes(t) }, Options{Limits: Limits{Uncompressed: 4096}}, ErrLimit, "", "unpacks to more than 4096 bytes"},
		{"compressed limit", func(t *testing.T) []byte { return build{}.bytes(t) }, Options{Limits: Limits{Compressed: 100}}, ErrLimit, "", "larger than 100 bytes"},
		{"too many entries", func(t *testing.T) []byte { return build{}.bytes(t) }, Options{Limits: Limits{Entries: 10}}, ErrLimit, "", "more than 10 entries"},
		{"path too long", func(t *testing.T) []byte {
			return build{extra: []tfile{{name: strings.Repeat("a", 300), body: ""}}}.bytes(t)
		}, Options{Limits: Limits{PathLen: 200}}, ErrLimit, "", "path longer than 200 bytes"},
		{"too deep", func(t *testing.T) []byte {
			return build{extra: []tfile{{name: strings.Repeat("a/", 40) + "f", body: ""}}}.bytes(t)
		}, Options{}, ErrLimit, "", "nested deeper than 32"},
		{"docs kept limit", func(t *testing.T) []byte { return build{}.bytes(t) }, Options{Limits: Limits{Kept: 600}}, ErrLimit, "", "exceed 600 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := Read(bytes.NewReader(tc.data(t)), tc.opt)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, %v; want an *Error", v, err)
			}
			if !errors.Is(err, tc.kind) || !strings.HasPrefix(e.Path, tc.path) || !strings.Contains(e.Error(), tc.msg) {
				t.Errorf("got %q (kind %v, path %q); want kind %v, path %q, message with %q", err, e.Kind, e.Path, tc.kind, tc.path, tc.msg)
			}
			named := e.Kind == ErrChecksum || e.Kind == ErrUnlisted || e.Kind == ErrMismatch || e.Kind == ErrMissing && tc.path != ""
			if named && !strings.HasPrefix(err.Error(), "collection acme.demo 1.2.3: ") {
				t.Errorf("error %q does not name the collection", err)
			}
		})
	}
}

// manifestWithFilesSum is the default manifest with file_manifest_file's digest set.
func manifestWithFilesSum(t *testing.T, digest string) []byte {
	return mustJSON(t, map[string]any{
		"collection_info": defaultInfo(),
		"file_manifest_file": map[string]any{"name": "FILES.json", "ftype": "file", "chksum_type": "sha256",
			"chksum_sha256": digest, "format": 1},
		"format": 1,
	})
}

// TestHardLinkedDoc: a hard link is the file it names, contents included.
func TestHardLinkedDoc(t *testing.T) {
	t.Parallel()
	files := append(baseFiles(), tfile{name: "docs/hard.md", hard: "docs/guide.md"}, tfile{name: "plugins/modules/pong.py", hard: "plugins/modules/ping.py"})
	v, err := Read(bytes.NewReader(build{files: files}.bytes(t)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := v.DocsBlob.DocumentationFiles
	if len(d) != 3 || d[1].Name != "hard.md" || d[1].HTML != d[0].HTML {
		t.Errorf("documentation files %+v", d)
	}
	var desc []string
	for _, c := range v.Contents {
		if c.ContentType == "module" && c.Description != nil {
			desc = append(desc, c.Name+": "+*c.Description)
		}
	}
	if !cmp.Equal(desc, []string{"ping: Try to connect to host", "pong: Try to connect to host", "win_ping: Windows ping", "win_ping: Windows ping"}) {
		t.Errorf("module descriptions %q", desc)
	}
}
