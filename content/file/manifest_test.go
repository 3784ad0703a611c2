package file

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/internal/testfiles"
)

func parseAll(s string) ([]Entry, error) {
	var out []Entry
	err := ParseManifest(strings.NewReader(s), func(e Entry) error { out = append(out, e); return nil })
	return out, err
}

const (
	sha  = "25561a37d958182f6b79299af1ec853f54d6a7627b6bdd648c17e5adbd41e5e5"
	sha2 = "5b2e31cdeda1a2982d6046bfbd624b1be165cafba341efb324347f5d5171bed2"
)

func TestParseManifest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     []Entry
	}{
		{"empty", "", nil},
		{"one line, no final newline", "a.iso," + sha + ",1024", []Entry{{"a.iso", sha, 1024, 1}}},
		{"blank lines skipped", "\n\na.iso," + sha + ",1\n\n   \nb/c.iso," + sha2 + ",0\n\n",
			[]Entry{{"a.iso", sha, 1, 3}, {"b/c.iso", sha2, 0, 6}}},
		{"crlf as Python's csv writes", "a.iso," + sha + ",1\r\nb.iso," + sha2 + ",2\r\n",
			[]Entry{{"a.iso", sha, 1, 1}, {"b.iso", sha2, 2, 2}}},
		{"byte order mark", "\ufeffa.iso," + sha + ",1\n", []Entry{{"a.iso", sha, 1, 1}}},
		{"upper-case digest is lowered", "a.iso," + strings.ToUpper(sha) + ",1\n", []Entry{{"a.iso", sha, 1, 1}}},
		{"spaces around digest and size", "a.iso, " + sha + " , 7 \n", []Entry{{"a.iso", sha, 7, 1}}},
		{"quoted path with comma and quote", `"b,c ""x"".iso",` + sha + ",5\n", []Entry{{`b,c "x".iso`, sha, 5, 1}}},
		{"same digest at two paths", "a," + sha + ",1\nb," + sha + ",1\n", []Entry{{"a", sha, 1, 1}, {"b", sha, 1, 2}}},
		{"large size", "a.iso," + sha + ",9223372036854775807\n", []Entry{{"a.iso", sha, 1<<63 - 1, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseAll(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseManifestErrors(t *testing.T) {
	t.Parallel()
	good := "ok.iso," + sha + ",1\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"two fields", "a.iso," + sha + "\n", "line 1: 2 fields, want 3"},
		{"four fields", good + "a.iso," + sha + ",1,2\n", "line 2: 4 fields, want 3"},
		{"one field", good + "\njunk\n", "line 3: 1 fields, want 3"},
		{"short digest", good + "b.iso,xyz,1\n", `line 2: "b.iso": digest "xyz" is not a sha256`},
		{"non-hex digest", "a.iso," + strings.Repeat("g", 64) + ",1\n", "is not a sha256"},
		{"md5 digest", "a.iso,d41d8cd98f00b204e9800998ecf8427e,1\n", "is not a sha256"},
		{"negative size", "a.iso," + sha + ",-1\n", `line 1: "a.iso": size "-1" is not a non-negative integer`},
		{"size None", "a.iso," + sha + ",None\n", `size "None"`},
		{"fractional size", "a.iso," + sha + ",1.5\n", `size "1.5"`},
		{"size overflow", "a.iso," + sha + ",9223372036854775808\n", `size "9223372036854775808"`},
		{"empty size", "a.iso," + sha + ",\n", `size ""`},
		{"traversal", "../a.iso," + sha + ",1\n", `line 1: relative path "../a.iso": contains a ".." segment`},
		{"absolute", good + "/a.iso," + sha + ",1\n", `line 2: relative path "/a.iso": is absolute`},
		{"empty path", "," + sha + ",1\n", `line 1: relative path "": is empty`},
		{"backslash", `a\b,` + sha + ",1\n", "contains a backslash"},
		{"duplicate", good + "x," + sha2 + ",2\n" + good, `line 3: "ok.iso" is listed twice (first on line 1)`},
		{"bare quote", `a"b,` + sha + ",1\n", `line 1: bare " in non-quoted-field`},
		{"unterminated quote", good + `"a.iso,` + sha + ",1\n" + good, "line 2: extraneous or missing \" in quoted-field"},
		{"quoted newline", "\"a\nb\"," + sha + ",1\n", "line 1: a quoted field runs on to line 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseAll(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// An unterminated quote early in a huge manifest fails without reading it all.
func TestParseManifestUnterminatedQuoteIsBounded(t *testing.T) {
	t.Parallel()
	endless := io.MultiReader(strings.NewReader(`"a.iso,`+sha+",1\n"), endlessLines{})
	err := ParseManifest(endless, func(Entry) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "after line 0: more than") {
		t.Errorf("error %v, want a bounded-record error", err)
	}
}

// endlessLines yields manifest-like lines forever.
type endlessLines struct{}

func (endlessLines) Read(p []byte) (int, error) {
	line := "b.iso," + sha + ",1\n"
	n := 0
	for n+len(line) <= len(p) {
		n += copy(p[n:], line)
	}
	if n == 0 {
		n = copy(p, "\n")
	}
	return n, nil
}

// Entries reach fn as they are read: a read error after the first line comes after
// the first entry was delivered.
func TestParseManifestStreams(t *testing.T) {
	t.Parallel()
	broken := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("a.iso,"+sha+",1\n"), errReader{broken})
	var got []string
	err := ParseManifest(bufio.NewReaderSize(r, 16), func(e Entry) error { got = append(got, e.RelativePath); return nil })
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "after line 1") {
		t.Errorf("error %v, want the read error after line 1", err)
	}
	if diff := cmp.Diff([]string{"a.iso"}, got); diff != "" {
		t.Errorf("entries before the error (-want +got):\n%s", diff)
	}

	stop := errors.New("stop")
	calls := 0
	err = ParseManifest(strings.NewReader("a,"+sha+",1\nb,"+sha+",1\n"), func(Entry) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("fn's error: got %v after %d calls, want it returned after 1", err, calls)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestWriteManifestRoundTrip(t *testing.T) {
	t.Parallel()
	in := []Entry{
		{RelativePath: "a.iso", Digest: sha, Size: 1024},
		{RelativePath: "dir/b,c.iso", Digest: sha2, Size: 0},
		{RelativePath: `q"uote.txt`, Digest: sha, Size: 3},
		{RelativePath: " leading space", Digest: sha2, Size: 4},
	}
	var buf bytes.Buffer
	if err := WriteManifest(&buf, in); err != nil {
		t.Fatal(err)
	}
	wantText := "a.iso," + sha + ",1024\n\"dir/b,c.iso\"," + sha2 + ",0\n\"q\"\"uote.txt\"," + sha + ",3\n\" leading space\"," + sha2 + ",4\n"
	if diff := cmp.Diff(wantText, buf.String()); diff != "" {
		t.Errorf("manifest text (-want +got):\n%s", diff)
	}
	got, err := parseAll(buf.String())
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i].Line = i + 1
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestWriteManifestRejectsBadEntries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		e    Entry
		want string
	}{
		{"traversal", Entry{RelativePath: "../x", Digest: sha}, `manifest entry 1: relative path "../x"`},
		{"upper-case digest", Entry{RelativePath: "x", Digest: strings.ToUpper(sha)}, "manifest entry 1: \"x\": digest"},
		{"negative size", Entry{RelativePath: "x", Digest: sha, Size: -1}, "negative size -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			err := WriteManifest(&buf, []Entry{{RelativePath: "ok", Digest: sha}, tc.e})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %q before failing", buf.String())
			}
		})
	}
}

// The real manifests in the test data parse.
func TestParseRealManifests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path  string
		n     int
		first Entry
	}{
		{testfiles.Path("file-katello-puppet", "PULP_MANIFEST"), 12,
			Entry{"puppetlabs-apache-1.10.0.tar.gz", "abe35244036c1cd42af203ab09de43a313a72f1ece9e0c6ec59f7cd3b4b480f8", 189186, 1}},
		{testfiles.Path("yum-katello", "file1", "PULP_MANIFEST"), 3, Entry{"1.iso", sha, 1024, 1}},
	} {
		f, err := os.Open(tc.path)
		if errors.Is(err, os.ErrNotExist) {
			t.Logf("%s: not present, skipped", tc.path)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var got []Entry
		err = ParseManifest(f, func(e Entry) error { got = append(got, e); return nil })
		f.Close()
		if err != nil || len(got) != tc.n {
			t.Errorf("%s: %d entries, %v; want %d", tc.path, len(got), err, tc.n)
			continue
		}
		if diff := cmp.Diff(tc.first, got[0]); diff != "" {
			t.Errorf("%s: first entry (-want +got):\n%s", tc.path, diff)
		}
	}
}
