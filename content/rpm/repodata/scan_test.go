package repodata

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// tok is a token in a form both scanners can produce.
type tok struct {
	kind  byte // 'S'tart, 'E'nd, 'T'ext
	name  string
	attrs string
	text  string
	line  int // ours only
}

func (k tok) String() string {
	switch k.kind {
	case 'S':
		return "<" + k.name + k.attrs + ">"
	case 'E':
		return "</" + k.name + ">"
	}
	return fmt.Sprintf("%q", k.text)
}

func addText(out []tok, s string, line int) []tok {
	if s == "" {
		return out
	}
	if n := len(out); n > 0 && out[n-1].kind == 'T' {
		out[n-1].text += s
		return out
	}
	return append(out, tok{kind: 'T', text: s, line: line})
}

// attrNorm makes attribute values comparable with encoding/xml, which does not turn
// whitespace into spaces as the XML spec says.
var attrNorm = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

// scanAll tokenizes data with our scanner; grow sets its smallest buffer and oneByte
// feeds it a byte per Read, both to cross buffer ends everywhere.
func scanAll(data []byte, grow int, oneByte bool) ([]tok, error) {
	var r io.Reader = bytes.NewReader(data)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	s := newScanner(r, "f")
	s.grow = grow
	var out []tok
	for {
		k, err := s.next()
		if err != nil {
			return out, err
		}
		switch k {
		case tokEOF:
			return out, nil
		case tokStart:
			var a strings.Builder
			for _, at := range s.attrs {
				fmt.Fprintf(&a, " %s=%q", at.name, attrNorm.Replace(string(at.value)))
			}
			out = append(out, tok{kind: 'S', name: string(s.name), attrs: a.String(), line: s.line()})
			if s.empty {
				out = append(out, tok{kind: 'E', name: string(s.name), line: s.line()})
			}
		case tokEnd:
			out = append(out, tok{kind: 'E', name: string(s.name), line: s.line()})
		case tokText:
			out = addText(out, string(s.text), s.line())
		}
	}
}

// stdScan tokenizes data with encoding/xml, the oracle. strict also checks tag
// matching (Token rather than RawToken).
func stdScan(data []byte, strict bool) ([]tok, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		if l := strings.ToLower(label); l == "utf8" || l == "us-ascii" { // we accept these too
			return r, nil
		}
		return nil, fmt.Errorf("unsupported encoding %q", label)
	}
	var out []tok
	depth := 0
	for {
		var tk xml.Token
		var err error
		if strict {
			tk, err = d.Token()
		} else {
			tk, err = d.RawToken()
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		switch tk := tk.(type) {
		case xml.StartElement:
			depth++
			var a strings.Builder
			for _, at := range tk.Attr {
				fmt.Fprintf(&a, " %s=%q", qname(at.Name), attrNorm.Replace(at.Value))
			}
			out = append(out, tok{kind: 'S', name: qname(tk.Name), attrs: a.String()})
		case xml.EndElement:
			depth--
			out = append(out, tok{kind: 'E', name: qname(tk.Name)})
		case xml.CharData:
			if depth > 0 {
				out = addText(out, string(tk), 0)
			}
		}
	}
}

func qname(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

func streamString(toks []tok) string {
	var b strings.Builder
	for _, k := range toks {
		b.WriteString(k.String())
	}
	return b.String()
}

func TestScanner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`<a/>`, `<a></a>`},
		{"\xef\xbb\xbf<?xml version='1.0' encoding='utf-8'?>\n<!-- c -->\n<a  x = 'y\"' >t</a >\n",
			`<a x="y\"">"t"</a>`},
		{"<a>x &amp; &lt;&gt;&quot;&apos; &#65;&#x42;&#x1F600;</a>", `<a>"x & <>\"' AB😀"</a>`},
		{"<a>1<!-- c -->2<![CDATA[<&>]]>3<?pi x?>4</a>", `<a>"12<&>34"</a>`},
		{"<a b='1\r\n2\t3' c='&#10;'>x\r\ny\rz</a>", `<a b="1 2 3" c=" ">"x\ny\nz"</a>`},
		{"<!DOCTYPE a SYSTEM 'x>y'><a>é</a>", `<a>"é"</a>`},
		{"<rpm:a xmlns:rpm='u'><rpm:b/></rpm:a>", `<rpm:a xmlns:rpm="u"><rpm:b></rpm:b></rpm:a>`},
	} {
		got, err := scanAll([]byte(tc.in), minBufSize, false)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if s := streamString(got); s != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.in, s, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"<a>", "f: line 1: unexpected end of file: <a> not closed"},
		{"<a></b>", "f: line 1: end tag </b> does not match <a>"},
		{"<a x='1' x='2'/>", "f: line 1: duplicate attribute x in <a>"},
		{"<a x='<'/>", `f: line 1: "<" in an attribute value`},
		{"<a x/>", "f: line 1: attribute x of <a> has no value"},
		{"<a x='1'y='2'/>", "f: line 1: expected a space before an attribute in <a>"},
		{"<a>&#0;</a>", "f: line 1: character reference &#0; is not an XML character"},
		{"<a>&#xD800;</a>", "f: line 1: character reference &#xD800; is not an XML character"},
		{"<a>\xef\xbf\xbe</a>", "f: line 1: character U+FFFE is not allowed in XML"},
		{"<a><!-- a -- b --></a>", `f: line 1: "--" inside a comment`},
		{"\n<?xml version='1.0'?><a/>", "f: line 2: XML declaration not at the start of the file"},
		{"<a/><b/>", "f: line 1: element after the end of the root element"},
		{"x<a/>", "f: line 1: text outside the root element"},
		{"<a>\nx]]>y</a>", `f: line 2: "]]>" in text outside a CDATA section`},
		{"<![CDATA[x]]><a/>", "f: line 1: CDATA outside the root element"},
		{"<a><!x></a>", `f: line 1: unexpected "<!"`},
		{"<a>\n<1/></a>", `f: line 2: invalid character '1' where a name should start`},
		{"", "f: line 1: unexpected end of file: no root element"},
	} {
		_, err := scanAll([]byte(tc.in), minBufSize, false)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %s", tc.in, err, tc.want)
		}
	}
	// Namespace resolution, with scopes.
	s := newScanner(strings.NewReader(`<m xmlns="c" xmlns:rpm="r"><x:e xmlns:x="r"/><rpm:e/><e/><q:e/><f xmlns="d"><e/></f><e/></m>`), "f")
	var got []string
	for {
		k, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		if k == tokEOF {
			break
		}
		if k == tokStart {
			uri, local := s.resolve(s.name)
			got = append(got, uri+" "+string(local))
		}
	}
	if want := "c m|r e|r e|c e|" + unbound + " e|d f|d e|c e"; strings.Join(got, "|") != want {
		t.Errorf("namespaces %q, want %q", strings.Join(got, "|"), want)
	}
}

// TestScannerChunks checks that buffer ends falling anywhere change nothing, lines
// included.
func TestScannerChunks(t *testing.T) {
	t.Parallel()
	var inputs [][]byte
	for _, p := range []string{"rpm-edge-cases/modified_repo_files/long_primary.xml",
		"rpm-edge-cases/modified_repo_files/repo_01_ampersand-primary.xml",
		"rpm-edge-cases/modified_repo_files/multiple_warnings_00-primary.xml"} {
		b, err := os.ReadFile(filepath.Join(data, p))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	pkgs := readRepo(t, filepath.Join(data, "rpm-edge-cases/repo_koji_01"))
	pri, fil, oth := writeDocs(t, pkgs)
	inputs = append(inputs, pri, fil, oth)
	for i, in := range inputs {
		want, werr := scanAll(in, minBufSize, false)
		for _, grow := range []int{1, 7, 64} {
			for _, oneByte := range []bool{false, true} {
				got, err := scanAll(in, grow, oneByte)
				if fmt.Sprint(err) != fmt.Sprint(werr) || len(got) != len(want) {
					t.Fatalf("input %d, grow %d: %d tokens, %v; want %d, %v", i, grow, len(got), err, len(want), werr)
				}
				for j := range got {
					if got[j] != want[j] {
						t.Fatalf("input %d, grow %d, token %d: %+v, want %+v", i, grow, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// FuzzScanner compares the scanner with encoding/xml and with itself fed in tiny pieces.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		`<a x="1" y='&amp;'>t<b/>&#x41;<![CDATA[c]]><!--x--><?p?></a>`,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<m xmlns:rpm=\"u\"><rpm:e name=\"x\r\n\"/>\r\n</m>",
		"<!DOCTYPE a><a>é&#233;\xef\xbf\xbd</a>",
	} {
		f.Add([]byte(s))
	}
	addSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		ours, err := scanAll(in, minBufSize, false)
		small, serr := scanAll(in, 3, true)
		if fmt.Sprint(err) != fmt.Sprint(serr) || streamString(ours) != streamString(small) {
			t.Fatalf("chunked scan differs:\n%v %s\n%v %s", err, streamString(ours), serr, streamString(small))
		}
		for i := range ours {
			if ours[i].line != small[i].line {
				t.Fatalf("token %d: line %d, chunked %d", i, ours[i].line, small[i].line)
			}
		}
		std, stdErr := stdScan(in, false)
		if err == nil {
			// We accept only what encoding/xml accepts, and read it the same.
			if stdErr != nil {
				t.Fatalf("we accept, encoding/xml says %v", stdErr)
			}
			if a, b := streamString(ours), streamString(std); a != b {
				t.Fatalf("tokens differ:\n ours %s\n  std %s", a, b)
			}
			return
		}
		if _, stdErr := stdScan(in, true); stdErr == nil && !deliberate(err) {
			t.Fatalf("encoding/xml accepts, we say %v", err)
		}
	})
}

// deliberate reports whether err is a rule we enforce and encoding/xml does not.
func deliberate(err error) bool {
	if errors.Is(err, ErrTooLarge) {
		return true
	}
	for _, s := range []string{
		"after the end of the root element", "outside the root element", "no root element",
		"duplicate attribute", "XML declaration not at the start", "unsupported encoding",
		"DOCTYPE", "expected a space after the target", "unsupported XML version", "invalid qualified name", "expected a space before an attribute",
		`unexpected "<!"`, // encoding/xml takes any <!...> as a directive
	} {
		if strings.Contains(err.Error(), s) {
			return true
		}
	}
	return false
}

// addSeeds adds the shared test data's uncompressed XML files to a fuzz corpus.
func addSeeds(f *testing.F) {
	for _, dir := range []string{"rpm-edge-cases/modified_repo_files", "rpm-edge-cases/repodata_snippets"} {
		files, _ := filepath.Glob(filepath.Join(data, dir, "*.xml"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil && len(b) < 8<<10 {
				f.Add(b)
			}
		}
	}
}
