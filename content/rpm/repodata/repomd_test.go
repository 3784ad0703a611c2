package repodata

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRepomd(t *testing.T) {
	t.Parallel()
	m := readRepomdFile(t, filepath.Join(data, "yum-katello/zoo/repodata/repomd.xml"))
	if m.Revision != "1631823519" || len(m.Records) != 11 {
		t.Fatalf("revision %q, %d records", m.Revision, len(m.Records))
	}
	want := Record{
		Type:             "primary",
		LocationHref:     "repodata/b45d07d607ce97be7b13d0f6925c54ac93dc18b5467b9e5e78668a25d5f8befe-primary.xml.gz",
		Checksum:         "b45d07d607ce97be7b13d0f6925c54ac93dc18b5467b9e5e78668a25d5f8befe",
		ChecksumType:     "sha256",
		OpenChecksum:     "3a8d96d13eb9e2b1352afa4eeb667dcb6162d97273c739fcc6c927a9609ee501",
		OpenChecksumType: "sha256",
		Size:             2659, OpenSize: 20021, HeaderSize: -1, Timestamp: 1631823519,
	}
	if diff := cmp.Diff(&want, m.Record("primary")); diff != "" {
		t.Errorf("primary (-want +got):\n%s", diff)
	}
	if r := m.Record("other_db"); r.DatabaseVersion != 10 || r.OpenSize != 10240 {
		t.Errorf("other_db: %+v", r)
	}
	if r := m.Record("group"); r.OpenSize != -1 || r.OpenChecksum != "" || r.Size != 2282 {
		t.Errorf("group: %+v", r)
	}
	if m.Record("nonesuch") != nil {
		t.Error("Record of an absent type is not nil")
	}

	m = readRepomdFile(t, filepath.Join(data, "rpm-edge-cases/repo_with_additional_metadata/repodata/repomd.xml"))
	z := m.Record("primary_zck")
	if z == nil || z.HeaderChecksum != "5809d2657156017d46bd3c3acbf06f78947f0fc516652251b5ca7f7b459d9737" ||
		z.HeaderChecksumType != "sha256" || z.HeaderSize <= 0 {
		t.Errorf("primary_zck: %+v", z)
	}
}

// TestRepomdBytes checks the writer against repomd.xml files of a recent createrepo_c,
// byte for byte, and reads back what it wrote.
func TestRepomdBytes(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"repo_04", "repo_with_additional_metadata", "repo_with_duplicate_packages", "repo_00", "repo_koji_01"} {
		path := filepath.Join(data, "rpm-edge-cases", dir, "repodata/repomd.xml")
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m := readRepomdFile(t, path)
		got := m.Bytes()
		if diff := cmp.Diff(string(orig), string(got)); diff != "" {
			t.Errorf("%s (-createrepo_c +ours):\n%s", dir, diff)
		}
	}
	for _, path := range []string{"yum-katello/zoo/repodata/repomd.xml", "yum-katello/zoo2/repodata/repomd.xml",
		"rpm-edge-cases/repo_01/repodata/repomd.xml"} {
		m := readRepomdFile(t, filepath.Join(data, path))
		again, err := ParseRepomd(bytes.NewReader(m.Bytes()), "again")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(m, again); diff != "" {
			t.Errorf("%s (-read +written and read):\n%s", path, diff)
		}
	}
}

func TestRepomdTags(t *testing.T) {
	t.Parallel()
	m := &Repomd{
		Revision: "7", RepoID: "r<1>", RepoIDType: "sha256",
		ContentTags: []string{"binary-x86_64"}, RepoTags: []string{"a&b"},
		DistroTags: []DistroTag{{CPEID: `cpe:/o:fedoraproject:fedora:23`, Name: "Fedora 23 «é»"}},
		Records:    []Record{(Sums{Compression: Zstd, ChecksumType: "sha256", Size: 1, Checksum: "ab", OpenSize: 2, OpenChecksum: "cd"}).Record("primary", "repodata/p.xml.zst", 5)},
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<repomd xmlns="http://linux.duke.edu/metadata/repo" xmlns:rpm="http://linux.duke.edu/metadata/rpm">
  <revision>7</revision>
  <repoid type="sha256">r&lt;1&gt;</repoid>
  <tags>
    <content>binary-x86_64</content>
    <repo>a&amp;b</repo>
    <distro cpeid="cpe:/o:fedoraproject:fedora:23">Fedora 23 «é»</distro>
  </tags>
  <data type="primary">
    <checksum type="sha256">ab</checksum>
    <open-checksum type="sha256">cd</open-checksum>
    <location href="repodata/p.xml.zst"/>
    <timestamp>5</timestamp>
    <size>1</size>
    <open-size>2</open-size>
  </data>
</repomd>
`
	if diff := cmp.Diff(want, string(m.Bytes())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	again, err := ParseRepomd(strings.NewReader(want), "repomd.xml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, again); diff != "" {
		t.Errorf("read back (-written +read):\n%s", diff)
	}
}

func TestRepomdErrors(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(modified("missing_type-repomd.xml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ParseRepomd(bytes.NewReader(b), "missing_type-repomd.xml")
	if want := "missing_type-repomd.xml: line 12: <data>: missing the type attribute"; err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
	const head = `<repomd xmlns="http://linux.duke.edu/metadata/repo">` + "\n"
	for _, tc := range []struct {
		name, doc, want string
		kind            error
	}{
		{"no location", head + `<data type="primary"><checksum type="sha256">ab</checksum></data></repomd>`,
			`repomd.xml: line 2: <data type="primary">: missing <location href="...">`, ErrInvalid},
		{"no checksum", head + `<data type="primary"><location href="a"/></data></repomd>`,
			`repomd.xml: line 2: <data type="primary">: missing <checksum>`, ErrInvalid},
		{"bad size", head + `<data type="primary"><location href="a"/><checksum type="sha256">ab</checksum><size>1e3</size></data></repomd>`,
			`repomd.xml: line 2: <size>1e3</size>: not a number`, ErrInvalid},
		{"wrong root", `<metadata/>`, `repomd.xml: line 1: root element is <metadata>, expected <repomd>`, ErrInvalid},
		{"truncated", head + `<data type="primary"><location href="a"/>`,
			`repomd.xml: line 2: unexpected end of file: <data> not closed`, ErrSyntax},
		{"empty", ``, `repomd.xml: line 1: unexpected end of file: no root element`, ErrSyntax},
	} {
		_, err := ParseRepomd(strings.NewReader(tc.doc), "repomd.xml")
		if err == nil || err.Error() != tc.want || !errors.Is(err, tc.kind) {
			t.Errorf("%s: error\n%v\nwant\n%s", tc.name, err, tc.want)
		}
	}
}
