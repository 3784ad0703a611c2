package collection

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPyDocStrings: what ansible-doc's ast walk finds at module level.
func TestPyDocStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		src  string
		want map[string]string
	}{
		{"raw triple", "DOCUMENTATION = r'''\na: \\d\n'''\n", map[string]string{"DOCUMENTATION": "\na: \\d\n"}},
		{"escapes", `DOCUMENTATION = "a\tb\nc\x41\u00e9\\"` + "\n", map[string]string{"DOCUMENTATION": "a\tb\ncAé\\"}},
		{"double triple", "EXAMPLES = \"\"\"\nx: 'y'\n\"\"\"\n", map[string]string{"EXAMPLES": "\nx: 'y'\n"}},
		{"concatenated", "RETURN = ('a: 1\\n'\n          'b: 2\\n')  # c\n", map[string]string{"RETURN": "a: 1\nb: 2\n"}},
		{"chained", "DOCUMENTATION = X = 'a: 1'\n", map[string]string{"DOCUMENTATION": "a: 1"}},
		{"later wins", "DOCUMENTATION = 'a: 1'\nDOCUMENTATION = 'a: 2'\n", map[string]string{"DOCUMENTATION": "a: 2"}},
		{"indented ignored", "def f():\n    DOCUMENTATION = 'a: 1'\n", map[string]string{}},
		{"in a class ignored", "class X:\n  DOCUMENTATION = '''\nDOCUMENTATION = 'no'\n'''\n", map[string]string{}},
		{"inside a string ignored", "x = '''\nDOCUMENTATION = 'a: 1'\n'''\n", map[string]string{}},
		{"inside brackets ignored", "x = [\nDOCUMENTATION\n]\n", map[string]string{}},
		{"expression skipped", "DOCUMENTATION = 'a' + 'b'\nRETURN = 'r'\n", map[string]string{"RETURN": "r"}},
		{"f-string skipped", "DOCUMENTATION = f'{x}'\n", map[string]string{}},
		{"call skipped", "DOCUMENTATION = build()\n", map[string]string{}},
		{"bytes", "DOCUMENTATION = b'a: \\xc3\\xa9'\n", map[string]string{"DOCUMENTATION": "a: é"}},
		{"unterminated", "DOCUMENTATION = '''\nnever closed\n", map[string]string{}},
		{"comparison", "DOCUMENTATION == 'x'\n", map[string]string{}},
		{"continuation", "DOCUMENTATION = \\\n  'a: 1'\n", map[string]string{"DOCUMENTATION": "a: 1"}},
	} {
		got := pyDocStrings(tc.src)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestYAMLAsPyYAML: YAML 1.1 types, merge keys and key order as PyYAML's safe loader.
func TestYAMLAsPyYAML(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"a: yes\nb: No\nc: on\nd: 'yes'\ne: y", `{"a":true,"b":false,"c":true,"d":"yes","e":"y"}`},
		{"a: 0777\nb: 0x1F\nc: 1_000\nd: 1:30\ne: 0b101\nf: -12", `{"a":511,"b":31,"c":1000,"d":90,"e":5,"f":-12}`},
		{"a: 1.5\nb: 1e3\nc: .inf\nd: 1.0\ne: 2020-01-01", `{"a":1.5,"b":"1e3","c":".inf","d":1.0,"e":"2020-01-01"}`},
		{"a: ~\nb:\nc: null\nd: !!str 12", `{"a":null,"b":null,"c":null,"d":"12"}`},
		{"z: 1\na: 2\nz: 3", `{"z":3,"a":2}`},
		{"base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3", `{"base":{"x":1,"y":2},"d":{"x":1,"y":3}}`},
		{"1: a\ntrue: b", `{"1":"a","true":"b"}`},
	} {
		v, err := parseYAML([]byte(tc.in), yamlBudget(len(tc.in)))
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := string(encodeValue(v)); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
	if _, err := parseYAML([]byte(bomb), yamlBudget(len(bomb))); err != errYAMLSize {
		t.Errorf("billion laughs: %v", err)
	}
	for _, bad := range []string{"a: &a [*a]", "a: [b", "--- 1\n--- 2\n"} {
		if _, err := parseYAML([]byte(bad), 1<<20); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestMarkdownSafe: raw HTML and script links never reach the rendered HTML.
func TestMarkdownSafe(t *testing.T) {
	t.Parallel()
	src := "# T\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[a](javascript:alert(1)) " +
		"[b](https://example.com) <a href=\"x\">raw</a>\n\n| h |\n|---|\n| c |\n"
	html, err := renderMarkdown("README.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script", "onerror", "javascript:", "<!--", "<img", `<a href="x"`} {
		if strings.Contains(html, bad) {
			t.Errorf("%q in %s", bad, html)
		}
	}
	for _, good := range []string{"<h1>T</h1>", `<a href="https://example.com">b</a>`, "<table>", "<td>c</td>"} {
		if !strings.Contains(html, good) {
			t.Errorf("%q missing from %s", good, html)
		}
	}
	if _, err := renderMarkdown("x.md", []byte{0xff, 0xfe}); err == nil {
		t.Error("invalid UTF-8 rendered")
	}
}
