package file

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func parseAll(s string) ([]Entry, error) {
	var out []Entry
	err := ParseManifest(strings.NewReader(s), func(e Entry) error { out = append(out, e); return nil })
	return out, err
}

const sha = "25561a37d958182f6b79299af1ec853f54d6a7627b6bdd648c17e5adbd41e5e5"

func TestParseManifest(t *testing.T) {
	t.Parallel()
	got, err := parseAll("a.iso," + sha + ",1024\n\n\"b,c.iso\"," + strings.ToUpper(sha) + ",0\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"a.iso", sha, 1024, 1}, {"b,c.iso", sha, 0, 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := WriteManifest(&buf, got); err != nil {
		t.Fatal(err)
	}
	again, err := parseAll(buf.String())
	if err != nil || len(again) != 2 || again[1].RelativePath != "b,c.iso" {
		t.Errorf("round trip: %v %v\n%s", again, err, buf.String())
	}
}

func TestParseManifestErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"a.iso," + sha + "\n", "line 1: 2 fields"},
		{"a.iso," + sha + ",1,2\n", "line 1: 4 fields"},
		{"ok," + sha + ",1\nb.iso,xyz,1\n", `line 2: b.iso: digest "xyz"`},
		{"a.iso," + sha + ",-1\n", `size "-1"`},
		{"a.iso," + sha + ",None\n", `size "None"`},
		{"../a.iso," + sha + ",1\n", `".." segment`},
		{"/a.iso," + sha + ",1\n", "absolute"},
		{"a.iso," + sha + ",1\na.iso," + sha + ",1\n", "line 2: a.iso is listed twice (first on line 1)"},
		{"\"a.iso," + sha + ",1\n", "line 1"},
	} {
		_, err := parseAll(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.want)
		}
	}
}

// The real manifests in the shared data parse.
func TestParseRealManifests(t *testing.T) {
	t.Parallel()
	for path, n := range map[string]int{
		"../../../shared/data/file-katello-puppet/PULP_MANIFEST": 12,
		"../../../shared/data/yum-katello/file1/PULP_MANIFEST":   3,
	} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatalf("shared data: %v", err)
		}
		var got int
		err = ParseManifest(f, func(Entry) error { got++; return nil })
		f.Close()
		if err != nil || got != n {
			t.Errorf("%s: %d entries, %v; want %d", path, got, err, n)
		}
	}
}
