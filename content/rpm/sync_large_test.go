package rpm_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"pith/bench"
	"pith/content/rpm"
	"pith/content/rpm/repodata"
	"pith/meta"
	"pith/task"
)

// largeN is more than two of sync's batches of 500 packages (sync.go, batchSize) and
// a partial third.
const largeN = 1234

// A generated repository of largeN real .rpm files (bench.WriteYumRepo, the generator
// of `pith bench rpm`: realistic dependencies, 51 files and 10 changelog entries per
// package) synced on demand and then immediate: each version holds exactly upstream's
// packages, by NEVRA and pkgId; the immediate sync stores every file; and the
// publication's primary, filelists and other, decompressed, are upstream's byte for
// byte. That holds because the generator names each package Packages/<first
// letter>/<NVRA>.rpm, which is where the default layout (nested_alphabetically)
// publishes it, so relocating the primary fragments changes no href; and pith writes
// the documents the way the generator does (repodata.DocumentWriter), from fragments
// it re-renders at sync time, in NEVRA order, which is upstream's order here.
func TestSyncLargeGenerated(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	written, err := bench.WriteYumRepo(dir, largeN, 512)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != largeN {
		t.Fatalf("%d packages written, want %d", len(written), largeN)
	}
	e := newEnv(t)
	// e.remote points remotes at e.srv: here, the generated repository.
	e.srv = httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(e.srv.Close)

	// Upstream's documents, decompressed, and its packages as natural keys
	// (NEVRA sha256:pkgId).
	f, err := os.Open(filepath.Join(dir, "repodata/repomd.xml"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := repodata.ParseRepomd(f, "repomd.xml")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	upstream := map[string][]byte{}
	for _, typ := range []string{"primary", "filelists", "other"} {
		rec := md.Record(typ)
		if rec == nil {
			t.Fatalf("upstream repomd.xml lists no %s", typ)
		}
		b, err := os.ReadFile(filepath.Join(dir, rec.LocationHref))
		if err != nil {
			t.Fatal(err)
		}
		upstream[typ] = decompress(t, b, rec.LocationHref)
	}
	want := packageKeys(t, upstream["primary"])
	if len(want) != largeN {
		t.Fatalf("upstream primary.xml has %d packages, want %d", len(want), largeN)
	}

	var repo meta.Repository
	for _, policy := range []string{"on_demand", "immediate"} {
		// Each policy into its own repository: the immediate sync finds the units the
		// on_demand one created and downloads their files.
		repo = e.repo("large-" + policy)
		tk := e.sync(repo, e.remote("large-"+policy, "", policy), rpm.Additive)
		if tk.State != task.Completed {
			t.Fatalf("%s sync: %s %s", policy, tk.State, tk.Error)
		}
		v := e.latest(repo)
		if v.Number != 1 || v.Summary.Present[rpm.PackageType] != largeN || v.Summary.Added[rpm.PackageType] != largeN {
			t.Errorf("%s: version %d with %d packages present, %d added; want version 1 with %d (summary %+v)", policy, v.Number,
				v.Summary.Present[rpm.PackageType], v.Summary.Added[rpm.PackageType], largeN, v.Summary)
		}
		ids, err := meta.VersionContentIDs(ctx, e.db, repo.ID, v.Number, rpm.PackageType)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, id := range ids {
			var key string
			if err := e.db.QueryRow(ctx, `SELECT natural_key FROM contents WHERE id = ?`, id).Scan(&key); err != nil {
				t.Fatal(err)
			}
			got = append(got, key)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the version's %d packages are not upstream's %d (first version key %q, first upstream key %q)",
				policy, len(got), len(want), first(got), first(want))
		}
	}
	var missing, stored int
	if err := e.db.QueryRow(ctx, `SELECT count(*) FROM content_artifacts WHERE artifact_id IS NULL`).Scan(&missing); err != nil {
		t.Fatal(err)
	}
	if err := e.db.QueryRow(ctx, `SELECT count(*) FROM content_artifacts WHERE artifact_id IS NOT NULL`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if missing != 0 || stored != largeN {
		t.Errorf("after the immediate sync: %d package files stored, %d without an artifact; want %d and 0", stored, missing, largeN)
	}
	// A stored file is the one written.
	if got := e.readArtifact(written[largeN/2].SHA256); !bytes.Equal(got, readFile(t, written[largeN/2].Path)) {
		t.Errorf("stored %s differs from the file served", written[largeN/2].Path)
	}

	pub, paths := e.publish(repo) // the immediate one
	pmd, err := repodata.ParseRepomd(bytes.NewReader(e.read(pub, "repodata/repomd.xml")), "repomd.xml")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"primary", "filelists", "other"} {
		rec := pmd.Record(typ)
		if rec == nil {
			t.Fatalf("published repomd.xml lists no %s", typ)
		}
		got := decompress(t, e.read(pub, rec.LocationHref), rec.LocationHref)
		if !bytes.Equal(got, upstream[typ]) {
			i := firstDiff(got, upstream[typ])
			t.Errorf("published %s.xml (%d bytes) differs from upstream's (%d bytes) at byte %d:\npublished: %q\nupstream:  %q",
				typ, len(got), len(upstream[typ]), i, around(got, i), around(upstream[typ], i))
		}
	}
	for _, w := range written {
		rel, _ := filepath.Rel(dir, w.Path)
		if !slices.Contains(paths, filepath.ToSlash(rel)) {
			t.Errorf("%s is not published where upstream has it", rel)
			break
		}
	}
}

// readArtifact returns a stored artifact's bytes.
func (e *env) readArtifact(sha256 string) []byte {
	e.t.Helper()
	r, err := e.store.Open(context.Background(), sha256)
	if err != nil {
		e.t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decompress returns the decompressed content of a metadata file named name.
func decompress(t *testing.T, b []byte, name string) []byte {
	t.Helper()
	r, err := repodata.Decompress(bytes.NewReader(b), name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// packageKeys returns the natural keys (NEVRA checksum-type:pkgId) of the packages of
// a primary.xml, sorted.
func packageKeys(t *testing.T, primary []byte) []string {
	t.Helper()
	r := repodata.NewReader(bytes.NewReader(primary), "primary.xml", repodata.Primary)
	var keys []string
	for {
		p, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, p.NEVRA()+" "+p.ChecksumType+":"+p.PkgID)
	}
	slices.Sort(keys)
	return keys
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// around is the text of b near offset i.
func around(b []byte, i int) string {
	return string(b[max(0, i-80):min(len(b), i+80)])
}
