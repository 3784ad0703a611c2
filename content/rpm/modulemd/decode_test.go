package modulemd

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sample has one document of each stored type, with the values that trip naive
// parsers: numeric-looking streams, quoted versions, static_context, obsoletes.
const sample = `# modules of a test repository
---
document: modulemd
version: 2
data:
  name: perl
  stream: 5.30
  version: "18446744073709551615"
  context: 00000000
  static_context: true
  arch: x86_64
  summary: Practical Extraction and Report Language
  description: ""
  license:
    module: [MIT]
  dependencies:
  - buildrequires:
      platform: [el8]
    requires:
      platform: []
      perl-libs: [-5.24, 5.30]
  - requires:
      platform: [el9]
  profiles:
    minimal:
      rpms: [perl-interpreter]
    empty:
      description: installs nothing
  artifacts:
    rpms:
    - perl-4:5.30.1-452.module_el8+1+1.x86_64
    - perl-4:5.30.1-452.module_el8+1+1.src
...
---
document: modulemd-translations
version: 1
data:
  module: perl
...
---
document: modulemd-defaults
version: 1
data:
  module: perl
  modified: 202002242100
  profiles:
    "5.30": [minimal]
    5.10: []
...
---
document: modulemd-obsoletes
version: 1
data:
  modified: 2022-01-24T08:54Z
  reset: false
  module: perl
  stream: 5.30
  context: 6c81f848
  eol_date: 2021-06-01T00:00Z
  message: Module stream perl:5.30 is no longer supported. Please switch to perl:5.32
  obsoleted_by:
    module: perl
    stream: 5.32
...
`

func TestSample(t *testing.T) {
	t.Parallel()
	f := parseBytes(t, "modules.yaml", []byte(sample))
	yes, no := true, Flag(false)
	str := func(s string) *string { return &s }
	want := &File{
		Modules: []Modulemd{{
			Name: "perl", Stream: "5.30", Version: 18446744073709551615, StaticContext: &yes,
			Context: "00000000", Arch: "x86_64",
			Artifacts: []string{"perl-4:5.30.1-452.module_el8+1+1.x86_64", "perl-4:5.30.1-452.module_el8+1+1.src"},
			Dependencies: []Dependency{
				{BuildRequires: map[string][]string{"platform": {"el8"}}, Requires: map[string][]string{"platform": {}, "perl-libs": {"-5.24", "5.30"}}},
				{Requires: map[string][]string{"platform": {"el9"}}},
			},
			Profiles: map[string][]string{"minimal": {"perl-interpreter"}},
		}},
		Defaults: []ModulemdDefaults{{Module: "perl", Profiles: map[string][]string{"5.30": {"minimal"}, "5.10": {}}}},
		Obsoletes: []ModulemdObsolete{{
			Modified: "2022-01-24T08:54Z", ModuleName: "perl", ModuleStream: "5.30",
			Message:          "Module stream perl:5.30 is no longer supported. Please switch to perl:5.32",
			OverridePrevious: &no, ModuleContext: str("6c81f848"), EOLDate: str("2021-06-01T00:00Z"),
			ObsoletedByModuleName: str("perl"), ObsoletedByModuleStream: str("5.32"),
		}},
		Skipped: []Skipped{{Line: 34, Type: "modulemd-translations"}},
	}
	noSnippets := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Snippet" }, cmp.Ignore())
	if diff := cmp.Diff(want, f, noSnippets); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(f.Modules[0].Snippet, "---\ndocument: modulemd\n") || !strings.HasSuffix(f.Obsoletes[0].Snippet, "    stream: 5.32\n...") {
		t.Errorf("snippets not framed: %q ... %q", f.Modules[0].Snippet[:30], f.Obsoletes[0].Snippet)
	}
}

// TestJSON pins the rendering the API relies on: Pulp's names, version as a string,
// override_previous as "True"/"False", nulls where Pulp has NULL, no snippet.
func TestJSON(t *testing.T) {
	t.Parallel()
	f := parseBytes(t, "modules.yaml", []byte(sample))
	for _, c := range []struct {
		v    any
		want string
	}{
		{f.Modules[0], `{"name":"perl","stream":"5.30","version":"18446744073709551615","static_context":true,` +
			`"context":"00000000","arch":"x86_64","artifacts":["perl-4:5.30.1-452.module_el8+1+1.x86_64","perl-4:5.30.1-452.module_el8+1+1.src"],` +
			`"dependencies":[{"buildrequires":{"platform":["el8"]},"requires":{"perl-libs":["-5.24","5.30"],"platform":[]}},{"requires":{"platform":["el9"]}}],` +
			`"packages":null,"profiles":{"minimal":["perl-interpreter"]},"description":""}`},
		{f.Defaults[0], `{"module":"perl","stream":"","profiles":{"5.10":[],"5.30":["minimal"]}}`},
		{f.Obsoletes[0], `{"modified":"2022-01-24T08:54Z","module_name":"perl","module_stream":"5.30",` +
			`"message":"Module stream perl:5.30 is no longer supported. Please switch to perl:5.32","override_previous":"False",` +
			`"module_context":"6c81f848","eol_date":"2021-06-01T00:00Z","obsoleted_by_module_name":"perl","obsoleted_by_module_stream":"5.32"}`},
		{ModulemdObsolete{}, `{"modified":"","module_name":"","module_stream":"","message":"","override_previous":null,` +
			`"module_context":null,"eol_date":null,"obsoleted_by_module_name":null,"obsoleted_by_module_stream":null}`},
	} {
		got, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("json:\n got %s\nwant %s", got, c.want)
		}
	}
	var back Modulemd
	if err := json.Unmarshal([]byte(`{"version":"20180730223407"}`), &back); err != nil || back.Version != 20180730223407 {
		t.Errorf("unmarshal version: %v %d", err, back.Version)
	}
	var flag Flag
	if err := json.Unmarshal([]byte(`"True"`), &flag); err != nil || !flag {
		t.Errorf("unmarshal flag: %v %v", err, flag)
	}
}

func TestMarkers(t *testing.T) {
	t.Parallel()
	const body = "document: modulemd-defaults\nversion: 1\ndata:\n  module: m\n  stream: s"
	const want = "---\n" + body + "\n..."
	for _, c := range []struct{ name, in string }{
		{"libmodulemd", "---\n" + body + "\n...\n"},
		{"no start marker", body + "\n...\n"},
		{"no end marker", "---\n" + body + "\n"},
		{"no markers, no newline", body},
		{"comments, directive and BOM", "\ufeff# generated\n%YAML 1.1\n--- # first\n\n\n" + body + "\n\n  \n... # end\n# trailer\n"},
		{"empty documents around", "---\n---\n# nothing\n...\n---\n" + body + "\n---\n...\n"},
		{"stray end marker", "...\n---\n" + body + "\n"},
	} {
		f := parseBytes(t, c.name, []byte(c.in))
		if len(f.Defaults) != 1 || f.Defaults[0].Snippet != want || f.Defaults[0].Stream != "s" {
			t.Errorf("%s: got %+v", c.name, f)
		}
	}
	// CRLF files keep their bytes; values come out clean.
	f := parseBytes(t, "crlf", []byte(strings.ReplaceAll("---\n"+body+"\n...\n", "\n", "\r\n")))
	if len(f.Defaults) != 1 || f.Defaults[0].Stream != "s" || !strings.Contains(f.Defaults[0].Snippet, "module: m\r\n") {
		t.Errorf("crlf: %+v", f.Defaults)
	}
	// "----" and "...x" are content, not markers.
	in := "---\ndocument: modulemd-defaults\nversion: 1\ndata:\n  module: m\n  stream: |\n    a\n----\n"
	if _, err := Parse(strings.NewReader(in), "m.yaml"); err == nil || !strings.Contains(err.Error(), "m.yaml:8") {
		t.Errorf("---- at column 0 inside a block: %v", err)
	}
}

func TestNextContinuesAfterInvalidDocument(t *testing.T) {
	t.Parallel()
	in := "---\ndocument: modulemd-defaults\nversion: 1\ndata: {}\n...\n" +
		"---\ndocument: modulemd-defaults\nversion: 1\ndata:\n  module: ok\n...\n"
	d := NewDecoder(strings.NewReader(in), "m.yaml")
	if _, err := d.Next(); !errors.Is(err, ErrInvalid) || err.Error() != "m.yaml:4: data.module: required field is missing or empty" {
		t.Fatalf("first: %v", err)
	}
	doc, err := d.Next()
	if err != nil || doc.Defaults.Module != "ok" || doc.Line != 6 || doc.Type != "modulemd-defaults" {
		t.Fatalf("second: %+v %v", doc, err)
	}
	if _, err := d.Next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}

func TestParseSnippet(t *testing.T) {
	t.Parallel()
	f := parseBytes(t, "modules.yaml", []byte(sample))
	doc, err := ParseSnippet("snippet", f.Modules[0].Snippet)
	if err != nil || !cmp.Equal(*doc.Module, f.Modules[0]) {
		t.Fatalf("%v\n%s", err, cmp.Diff(f.Modules[0], doc.Module))
	}
	for _, c := range []struct{ in, want string }{
		{"---\ndocument: modulemd-translations\nversion: 1\n...", `snippet:1: document: "modulemd-translations" documents are not stored`},
		{"# nothing", "snippet: no document"},
		{f.Defaults[0].Snippet + "\n" + f.Defaults[0].Snippet, "snippet:11: more than one document"},
		{"foobar", "snippet:1: expected a mapping, found \"foobar\""},
	} {
		if _, err := ParseSnippet("snippet", c.in); err == nil || err.Error() != c.want {
			t.Errorf("ParseSnippet(%q) = %v, want %s", c.in, err, c.want)
		}
	}
}

func TestWriterFramesBareSnippets(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, s := range []string{"document: a\n", "---\ndocument: b\n...", "---\ndocument: c\n\n"} {
		if err := w.WriteSnippet(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "---\ndocument: a\n...\n---\ndocument: b\n...\n---\ndocument: c\n...\n"
	if buf.String() != want {
		t.Errorf("got %q", buf.String())
	}
}

func TestCorrupted(t *testing.T) {
	t.Parallel()
	const head = "---\ndocument: modulemd\nversion: 2\ndata:\n"
	const good = "  name: n\n  stream: s\n  version: 1\n  context: c\n  arch: noarch\n  summary: s\n  description: d\n  license:\n    module: [MIT]\n"
	mod := func(replace, with string) string {
		if replace == "" {
			return head + good + with
		}
		return head + strings.Replace(good, replace, with, 1)
	}
	for _, c := range []struct {
		name, in string
		kind     error
		want     string
	}{
		{"bad yaml", head + "  name: [unclosed\n", ErrSyntax, "m.yaml:5: did not find expected ',' or ']'"},
		{"tab indentation", head + "\tname: n\n", ErrSyntax, "m.yaml:5: found character that cannot start any token"},
		{"not a mapping", "---\n- a\n- b\n", ErrInvalid, `m.yaml:2: expected a mapping, found a list`},
		{"no document type", "---\nversion: 2\n", ErrInvalid, "m.yaml:2: document: required field is missing or empty"},
		{"document is a list", "---\ndocument: [a]\n", ErrInvalid, `m.yaml:2: document: expected a scalar, found a list`},
		{"no version", "---\ndocument: modulemd\ndata: {}\n", ErrInvalid, "m.yaml:2: version: required field is missing"},
		{"modulemd v1", "---\ndocument: modulemd\nversion: 1\ndata: {}\n", ErrUnsupported,
			"m.yaml:3: version: modulemd version 1 is not supported (only version 2 is); convert it with libmodulemd's modulemd-validator or drop it"},
		{"defaults v2", "---\ndocument: modulemd-defaults\nversion: 2\ndata: {}\n", ErrUnsupported, "m.yaml:3: version: modulemd-defaults version 2 is not supported (only version 1 is)"},
		{"no data", "---\ndocument: modulemd\nversion: 2\n", ErrInvalid, "m.yaml:2: data: required field is missing"},
		{"data is a string", head[:len(head)-1] + " x\n", ErrInvalid, `m.yaml:4: data: expected a mapping, found "x"`},
		{"missing name", mod("  name: n\n", ""), ErrInvalid, "m.yaml:5: data.name: required field is missing or empty"},
		{"empty stream", mod("stream: s", "stream: ''"), ErrInvalid, "m.yaml:6: data.stream: required field is missing or empty"},
		{"null stream", mod("stream: s", "stream: ~"), ErrInvalid, "m.yaml:6: data.stream: required field is missing or empty"},
		{"name is a mapping", mod("name: n", "name: {a: b}"), ErrInvalid, "m.yaml:5: data.name: expected a scalar, found a mapping"},
		{"version is text", mod("version: 1", "version: one"), ErrInvalid, `m.yaml:7: data.version: "one" is not an unsigned integer`},
		{"version is negative", mod("version: 1", "version: -1"), ErrInvalid, `m.yaml:7: data.version: "-1" is not an unsigned integer`},
		{"version overflows", mod("version: 1", "version: 18446744073709551616"), ErrInvalid, `m.yaml:7: data.version: "18446744073709551616" does not fit in 64 bits`},
		{"no license", mod("  license:\n    module: [MIT]\n", ""), ErrInvalid, "m.yaml:5: data.license: required field is missing"},
		{"no license.module", mod("    module: [MIT]\n", "    content: [MIT]\n"), ErrInvalid, "m.yaml:13: data.license.module: required field is missing"},
		{"no description", mod("  description: d\n", ""), ErrInvalid, "m.yaml:5: data.description: required field is missing"},
		{"static_context not bool", mod("", "  static_context: maybe\n"), ErrInvalid, `m.yaml:14: data.static_context: "maybe" is not true or false`},
		{"artifacts.rpms not a list", mod("", "  artifacts:\n    rpms: foo-0:1-1.noarch\n"), ErrInvalid, `m.yaml:15: data.artifacts.rpms: expected a list, found "foo-0:1-1.noarch"`},
		{"empty artifact", mod("", "  artifacts:\n    rpms: [a, '']\n"), ErrInvalid, `m.yaml:15: data.artifacts.rpms[1]: empty item`},
		{"profile not a mapping", mod("", "  profiles:\n    default: [a]\n"), ErrInvalid, `m.yaml:15: data.profiles.default: expected a mapping, found a list`},
		{"dependencies not a list", mod("", "  dependencies: {requires: {}}\n"), ErrInvalid, `m.yaml:14: data.dependencies: expected a list, found a mapping`},
		{"streams not a list", mod("", "  dependencies:\n  - requires:\n      platform: f30\n"), ErrInvalid, `m.yaml:16: data.dependencies[0].requires.platform: expected a list, found "f30"`},
		{"duplicate key", mod("", "  name: again\n"), ErrInvalid, "m.yaml:14: data.name: duplicate key"},
		{"complex key", mod("", "  ? [a]\n  : b\n"), ErrInvalid, "m.yaml:14: data: a key is a list, not a scalar"},
		{"alias", mod("  summary: s\n", "  summary: &s s\n  x: *s\n"), ErrSyntax, "m.yaml:11: YAML aliases (*s) are not supported"},
		{"merge key", mod("", "  a: &a {b: c}\n  d:\n    <<: *a\n"), ErrSyntax, "m.yaml:16: YAML aliases (*a) are not supported"},
		{"defaults without module", "---\ndocument: modulemd-defaults\nversion: 1\ndata:\n  stream: s\n", ErrInvalid, "m.yaml:5: data.module: required field is missing or empty"},
		{"defaults profiles not lists", "---\ndocument: modulemd-defaults\nversion: 1\ndata:\n  module: m\n  profiles:\n    s: default\n", ErrInvalid,
			`m.yaml:7: data.profiles.s: expected a list, found "default"`},
		{"obsolete without message", "---\ndocument: modulemd-obsoletes\nversion: 1\ndata:\n  modified: 2022-01-24T08:54Z\n  module: m\n  stream: s\n", ErrInvalid,
			"m.yaml:5: data.message: required field is missing or empty"},
		{"obsolete reset not bool", "---\ndocument: modulemd-obsoletes\nversion: 1\ndata:\n  modified: x\n  module: m\n  stream: s\n  message: m\n  reset: 2\n", ErrInvalid,
			`m.yaml:9: data.reset: "2" is not true or false`},
		{"marker with content", "--- document: modulemd\n", ErrSyntax, "m.yaml:1: content on a document marker line is not supported; put it on the next line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.in), "m.yaml")
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, c.kind) || err.Error() != c.want {
				t.Errorf("got  %v\nwant %s (%v)", err, c.want, c.kind)
			}
		})
	}
}

func TestSizeLimit(t *testing.T) {
	t.Parallel()
	small := func(r io.Reader) *Decoder {
		d := NewDecoder(r, "big.yaml")
		d.max = 1000
		return d
	}
	// One endless line: refused once past the limit, without reading it all.
	_, err := small(endless{}).Next()
	if !errors.Is(err, ErrTooLarge) || err.Error() != "big.yaml:1: document is larger than 1000 bytes" {
		t.Fatalf("endless line: %v", err)
	}
	// Many short lines in one document.
	d := small(strings.NewReader("---\ndocument: x\n" + strings.Repeat("a: b\n", 300)))
	if _, err := d.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("long document: %v", err)
	}
	if _, err := d.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("the error is not sticky: %v", err)
	}
	// The limit is per document: many small ones pass.
	doc := "---\ndocument: modulemd-defaults\nversion: 1\ndata:\n  module: m\n...\n"
	f, err := func() (*File, error) {
		d := small(strings.NewReader(strings.Repeat(doc, 100)))
		n := 0
		for {
			_, err := d.Next()
			if err == io.EOF {
				return &File{Defaults: make([]ModulemdDefaults, n)}, nil
			}
			if err != nil {
				return nil, err
			}
			n++
		}
	}()
	if err != nil || len(f.Defaults) != 100 {
		t.Fatalf("100 small documents: %v", err)
	}
	if MaxDocumentSize != 64<<20 {
		t.Errorf("MaxDocumentSize = %d", MaxDocumentSize)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// TestAliasBomb: a billion-laughs document is refused quickly, at its first alias.
func TestAliasBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("---\ndocument: modulemd\nversion: 2\ndata:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("  a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 9 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	start := time.Now()
	_, err := Parse(strings.NewReader(b.String()), "bomb.yaml")
	if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "YAML aliases (*a0) are not supported") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestDeepNesting: yaml.v3 caps nesting depth, so deep input is an error, not a crash.
func TestDeepNesting(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"---\ndocument: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n",
		"---\ndocument: " + strings.Repeat("{a: ", 20000) + "b" + strings.Repeat("}", 20000) + "\n",
	} {
		if _, err := Parse(strings.NewReader(in), "deep.yaml"); !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "exceeded max depth") {
			t.Errorf("got %v", err)
		}
	}
}
