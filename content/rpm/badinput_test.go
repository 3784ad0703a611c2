package rpm_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"pith/content/rpm"
	"pith/content/rpm/repodata"
	"pith/meta"
	"pith/task"
)

// copyRepo copies a repository of the shared data into a temporary directory served
// over HTTP, for a test to break.
func copyRepo(t *testing.T, from string) (string, *httptest.Server) {
	t.Helper()
	dir := t.TempDir()
	err := filepath.Walk(filepath.Join(data, from), func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(data, from), p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return dir, srv
}

// replaceRecord writes new content (compressed as gz) for a repomd record and updates
// repomd.xml to match, so only the content is wrong.
func replaceRecord(t *testing.T, dir, typ string, content []byte) {
	t.Helper()
	path := filepath.Join(dir, "repodata", "repomd.xml")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	md, err := repodata.ParseRepomd(f, "repomd.xml")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range md.Records {
		if rec.Type != typ {
			continue
		}
		var buf bytes.Buffer
		cw, err := repodata.NewCompressWriter(&buf, repodata.Gzip, "sha256")
		if err != nil {
			t.Fatal(err)
		}
		cw.Write(content)
		cw.Close()
		href := "repodata/broken-" + typ + ".xml.gz"
		if err := os.WriteFile(filepath.Join(dir, href), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		md.Records[i] = cw.Sums().Record(typ, href, rec.Timestamp)
	}
	if err := os.WriteFile(path, md.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Each broken upstream fails the sync with an error naming the file and the problem, and
// leaves no repository version.
func TestSyncBrokenUpstreams(t *testing.T) {
	zooUpdateinfo, err := os.ReadFile(filepath.Join(data, "yum-katello/zoo/updateinfo.xml"))
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.Index(zooUpdateinfo, []byte("<update "))
	end := bytes.Index(zooUpdateinfo, []byte("</update>")) + len("</update>")
	dup := append(append(append([]byte{}, zooUpdateinfo[:end]...), zooUpdateinfo[first:end]...), zooUpdateinfo[end:]...)
	for _, tc := range []struct {
		name    string
		policy  string
		breakIt func(t *testing.T, dir string)
		want    []string
	}{
		{"missing primary", "on_demand", func(t *testing.T, dir string) {
			ms, _ := filepath.Glob(filepath.Join(dir, "repodata", "*-primary.xml.gz"))
			os.Remove(ms[0])
		}, []string{"primary.xml.gz", "404"}},
		{"wrong checksum", "on_demand", func(t *testing.T, dir string) {
			ms, _ := filepath.Glob(filepath.Join(dir, "repodata", "*-other.xml.gz"))
			os.WriteFile(ms[0], []byte("not what repomd.xml says"), 0o644)
		}, []string{"other.xml.gz", "mismatch"}},
		{"malformed repomd", "on_demand", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "repodata", "repomd.xml"), []byte("<repomd><data type="), 0o644)
		}, []string{"repomd.xml"}},
		{"malformed primary", "on_demand", func(t *testing.T, dir string) {
			replaceRecord(t, dir, "primary", []byte(`<?xml version="1.0"?><metadata packages="1"><package type="rpm"><name>x</`))
		}, []string{"broken-primary.xml.gz"}},
		{"duplicate advisory ids", "on_demand", func(t *testing.T, dir string) {
			replaceRecord(t, dir, "updateinfo", dup)
		}, []string{"broken-updateinfo.xml.gz", "duplicate"}},
		{"treeinfo names a missing image", "on_demand", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "images", "test1.img"))
		}, []string{".treeinfo", "images/test1.img", "404"}},
		// The packages download while the rest of the metadata is stored: a failure
		// there is the sync's error, not the cancel it makes of the downloads.
		{"duplicate advisory ids, packages downloading", "immediate", func(t *testing.T, dir string) {
			replaceRecord(t, dir, "updateinfo", dup)
		}, []string{"broken-updateinfo.xml.gz", "duplicate"}},
		{"package differs from primary", "immediate", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "walrus-5.21-1.noarch.rpm"), []byte("not the package primary describes"), 0o644)
		}, []string{"walrus-5.21-1.noarch.rpm", "mismatch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			dir, srv := copyRepo(t, "yum-katello/zoo")
			tc.breakIt(t, dir)
			repo := e.repo("r")
			m, err := meta.CreateRemote(context.Background(), e.db, meta.Remote{Type: rpm.RepoType, Name: "m", URL: srv.URL + "/", Policy: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			tk := e.sync(repo, m, rpm.Additive)
			if tk.State != task.Failed {
				t.Fatalf("sync %s, want failed", tk.State)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(tk.Error), w) {
					t.Errorf("error %s does not name %q", tk.Error, w)
				}
			}
			if v := e.latest(repo); v.Number != 0 {
				t.Errorf("version %d left after a failed sync", v.Number)
			}
		})
	}
}

// Every repository of createrepo_c's test data either syncs, with the units it holds, or
// fails with an error naming the file and problem.
func TestSyncEdgeCases(t *testing.T) {
	e := newEnv(t)
	for name, want := range map[string]string{
		"repo_00":                       "",                    // packages="0": an empty repository
		"repo_01":                       "primary.xml.gz: GET", // its primary is not the file repomd.xml describes
		"repo_02":                       "rpm.package:2",
		"repo_03":                       "rpm.modulemd:1 rpm.modulemd_defaults:1",
		"repo_04":                       "rpm.package:2",
		"repo_koji_01":                  "rpm.package:2",
		"repo_koji_02":                  "rpm.package:1",
		"repo_with_additional_metadata": "rpm.advisory:1 rpm.modulemd:64 rpm.modulemd_defaults:17 rpm.package:1 rpm.packagecategory:1 rpm.packageenvironment:1 rpm.packagegroup:1 rpm.packagelangpacks:1",
		"repo_with_duplicate_packages":  "rpm.package:2",
	} {
		repo := e.repo(name)
		m, err := meta.CreateRemote(context.Background(), e.db, meta.Remote{Type: rpm.RepoType, Name: name, URL: e.srv.URL + "/rpm-edge-cases/" + name + "/", Policy: "on_demand"})
		if err != nil {
			t.Fatal(err)
		}
		tk := e.sync(repo, m, rpm.Additive)
		if strings.Contains(want, ": GET") {
			if tk.State != task.Failed || !strings.Contains(string(tk.Error), "size mismatch") || !strings.Contains(string(tk.Error), "primary.xml.gz") {
				t.Errorf("%s: %s %s, want a size mismatch naming primary.xml.gz", name, tk.State, tk.Error)
			}
			continue
		}
		if tk.State != task.Completed {
			t.Errorf("%s: %s %s", name, tk.State, tk.Error)
			continue
		}
		var got []string
		for _, typ := range []string{rpm.AdvisoryType, rpm.ModulemdType, rpm.DefaultsType, rpm.PackageType, rpm.CategoryType, rpm.EnvironmentType, rpm.GroupType, rpm.LangpacksType} {
			if n := e.latest(repo).Summary.Present[typ]; n > 0 {
				got = append(got, typ+":"+itoa(n))
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %q, want %q", name, strings.Join(got, " "), want)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
