package meta_test

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/internal/testpg"
	"pith/meta"
)

func TestMain(m *testing.M) { testpg.Main(m) }

// forEachDB runs a test against a fresh SQLite database and a fresh PostgreSQL one.
func forEachDB(t *testing.T, fn func(t *testing.T, db *meta.DB)) {
	t.Helper()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dsn := filepath.Join(t.TempDir(), "pith.db")
			if engine == "postgres" {
				dsn = testpg.URL(t)
			}
			db := Open(t, dsn)
			fn(t, db)
		})
	}
}

// Open opens and migrates a database, closing it with the test.
func Open(t *testing.T, dsn string) *meta.DB {
	t.Helper()
	ctx := context.Background()
	db, err := meta.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// Migrating twice is a no-op.
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

func unit(t *testing.T, db *meta.DB, path, digest string) meta.Content {
	t.Helper()
	c, created, err := meta.PutContent(context.Background(), db, meta.Content{
		Type: "file.file", NaturalKey: digest + ":" + path, RepoKey: path, RelativePath: path, Digest: digest,
	}, []meta.ContentFile{{RelativePath: path}})
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Fatalf("unit %s: not created", path)
	}
	return c
}

func newVersion(t *testing.T, db *meta.DB, repo int64, ch meta.Change) (meta.Version, bool) {
	t.Helper()
	var v meta.Version
	var created bool
	err := db.Tx(context.Background(), func(tx *meta.Tx) error {
		var err error
		v, created, err = meta.NewVersion(context.Background(), tx, repo, ch)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v, created
}

func members(t *testing.T, db *meta.DB, repo, n int64, names map[int64]string) []string {
	t.Helper()
	ids, err := meta.VersionContentIDs(context.Background(), db, repo, n)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, id := range ids {
		out = append(out, names[id])
	}
	sort.Strings(out)
	return out
}

func TestVersions(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		repo, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "r"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "r"}); !errors.Is(err, meta.ErrConflict) {
			t.Fatalf("duplicate name: got %v, want ErrConflict", err)
		}
		a, b, c := unit(t, db, "a", "1"), unit(t, db, "b", "2"), unit(t, db, "c", "3")
		a2 := unit(t, db, "a", "4") // same repo key as a
		names := map[int64]string{a.ID: "a", b.ID: "b", c.ID: "c", a2.ID: "a2"}

		v1, ok := newVersion(t, db, repo.ID, meta.Change{Add: []int64{a.ID, b.ID}})
		if !ok || v1.Number != 1 {
			t.Fatalf("v1 = %d, created %v", v1.Number, ok)
		}
		if _, ok := newVersion(t, db, repo.ID, meta.Change{Add: []int64{a.ID}}); ok {
			t.Fatal("a change that changes nothing made a version")
		}
		if _, ok := newVersion(t, db, repo.ID, meta.Change{Add: []int64{a.ID, b.ID, a.ID}}); ok {
			t.Fatal("present units given twice made a version")
		}
		v2, _ := newVersion(t, db, repo.ID, meta.Change{Add: []int64{c.ID, a2.ID}, Remove: []int64{b.ID}})
		v3, _ := newVersion(t, db, repo.ID, meta.Change{RemoveAll: true, Add: []int64{b.ID}})
		v4, _ := newVersion(t, db, repo.ID, meta.Change{Base: &v1.Number})

		for _, tc := range []struct {
			n    int64
			want []string
		}{
			{0, []string{}}, {1, []string{"a", "b"}}, {2, []string{"a2", "c"}}, {3, []string{"b"}}, {4, []string{"a", "b"}},
		} {
			if diff := cmp.Diff(tc.want, members(t, db, repo.ID, tc.n, names)); diff != "" {
				t.Errorf("version %d (-want +got):\n%s", tc.n, diff)
			}
		}
		if got := v2.Summary; got.Added["file.file"] != 2 || got.Removed["file.file"] != 2 || got.Present["file.file"] != 2 {
			t.Errorf("v2 summary = %+v", got)
		}
		_ = v3
		// Deleting an intermediate version keeps every other version's content.
		for _, del := range []int64{2, 3} {
			err := db.Tx(ctx, func(tx *meta.Tx) error {
				v, err := meta.VersionByNumber(ctx, tx, repo.ID, del)
				if err != nil {
					return err
				}
				return meta.DeleteVersion(ctx, tx, v)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			n    int64
			want []string
		}{{1, []string{"a", "b"}}, {4, []string{"a", "b"}}} {
			if diff := cmp.Diff(tc.want, members(t, db, repo.ID, tc.n, names)); diff != "" {
				t.Errorf("after deletes, version %d (-want +got):\n%s", tc.n, diff)
			}
		}
		got, err := meta.VersionByNumber(ctx, db, repo.ID, v4.Number)
		if err != nil {
			t.Fatal(err)
		}
		if got.Summary.Present["file.file"] != 2 {
			t.Errorf("v4 summary after squash = %+v", got.Summary)
		}
		// Deleting the latest version undoes its changes.
		err = db.Tx(ctx, func(tx *meta.Tx) error { return meta.DeleteVersion(ctx, tx, got) })
		if err != nil {
			t.Fatal(err)
		}
		r, _ := meta.RepositoryByID(ctx, db, repo.ID)
		if r.LatestVersion != 1 || r.NextVersion != 5 {
			t.Errorf("latest %d next %d, want 1 and 5", r.LatestVersion, r.NextVersion)
		}
		v5, _ := newVersion(t, db, repo.ID, meta.Change{Remove: []int64{a.ID}})
		if v5.Number != 5 {
			t.Errorf("version numbers are not reused: got %d, want 5", v5.Number)
		}
		if diff := cmp.Diff([]string{"b"}, members(t, db, repo.ID, 5, names)); diff != "" {
			t.Errorf("v5 (-want +got):\n%s", diff)
		}
	})
}

// A version costs rows in proportion to its change, not to the repository's size.
func TestVersionRowsProportionalToChange(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		repo, _ := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "big"})
		var ids []int64
		for i := 0; i < 600; i++ {
			ids = append(ids, unit(t, db, "f"+itoa(i), itoa(i)).ID)
		}
		newVersion(t, db, repo.ID, meta.Change{Add: ids})
		count := func() int64 {
			var n int64
			db.QueryRow(ctx, `SELECT count(*) FROM repository_content WHERE repository_id = ?`, repo.ID).Scan(&n)
			return n
		}
		before := count()
		extra := unit(t, db, "extra", "x")
		newVersion(t, db, repo.ID, meta.Change{Add: []int64{extra.ID}})
		if got := count() - before; got != 1 {
			t.Fatalf("adding one unit wrote %d membership rows, want 1", got)
		}
		v, _ := meta.VersionByNumber(ctx, db, repo.ID, 2)
		if v.Summary.Present["file.file"] != 601 || v.Summary.Added["file.file"] != 1 {
			t.Fatalf("summary %+v", v.Summary)
		}
	})
}

func itoa(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	s := ""
	for ; i > 0; i /= 10 {
		s = string(digits[i%10]) + s
	}
	return s
}

func TestArtifactsDedupAndOrphans(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		sha := "aa00000000000000000000000000000000000000000000000000000000000000"
		a1, created, err := meta.PutArtifact(ctx, db, meta.Artifact{Size: 3, SHA256: sha})
		if err != nil || !created {
			t.Fatalf("first put: %v %v", created, err)
		}
		a2, created, err := meta.PutArtifact(ctx, db, meta.Artifact{Size: 3, SHA256: sha})
		if err != nil || created || a2.ID != a1.ID {
			t.Fatalf("second put: created=%v id %d vs %d, %v", created, a2.ID, a1.ID, err)
		}
		id := a1.ID
		c, _, err := meta.PutContent(ctx, db, meta.Content{Type: "file.file", NaturalKey: sha + ":x", RepoKey: "x", RelativePath: "x", Digest: sha},
			[]meta.ContentFile{{RelativePath: "x", ArtifactID: &id}})
		if err != nil {
			t.Fatal(err)
		}
		if err := meta.DeleteArtifact(ctx, db, id); !errors.Is(err, meta.ErrInUse) {
			t.Fatalf("delete of a referenced artifact: %v", err)
		}
		// Protected by time: nothing goes.
		if n, d, err := meta.DeleteOrphans(ctx, db, 0, nil); err != nil || n != 0 || len(d) != 0 {
			t.Fatalf("orphans within protection: %d %v %v", n, d, err)
		}
		n, digests, err := meta.DeleteOrphans(ctx, db, meta.Now()+1, nil)
		if err != nil || n != 1 || len(digests) != 1 || digests[0] != sha {
			t.Fatalf("orphan cleanup: %d %v %v", n, digests, err)
		}
		if _, err := meta.ContentByPulpID(ctx, db, c.PulpID); !errors.Is(err, meta.ErrNotFound) {
			t.Fatalf("orphan content still there: %v", err)
		}
	})
}

func TestListFiltersAndLabels(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		for _, n := range []string{"alpha", "beta", "Gamma"} {
			if _, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: n, Labels: meta.Labels{"env": n}}); err != nil {
				t.Fatal(err)
			}
		}
		d := db.Dialect()
		for _, tc := range []struct {
			cond string
			arg  any
			want int64
		}{
			{d.Contains("r.name", false), "amm", 1},
			{d.Contains("r.name", true), "GAM", 1},
			{d.Contains("r.name", false), "A", 0},
			{d.RegexpMatch("r.name", false), "^(alpha|beta)$", 2},
			{d.RegexpMatch("r.name", true), "^gamma$", 1},
			{d.JSONText("r.labels", "env") + " = ?", "beta", 1},
			{d.NoIndex("r.name") + " = ?", "beta", 1},
		} {
			_, total, err := meta.ListRepositories(ctx, db, meta.List{Where: []string{tc.cond}, Args: []any{tc.arg}, Limit: 10})
			if err != nil {
				t.Fatalf("%s: %v", tc.cond, err)
			}
			if total != tc.want {
				t.Errorf("%s with %v: %d rows, want %d", tc.cond, tc.arg, total, tc.want)
			}
		}
		rs, total, err := meta.ListRepositories(ctx, db, meta.List{Limit: 2, Offset: 1, OrderBy: "r.name"})
		if err != nil || total != 3 || len(rs) != 2 || rs[0].Name != "alpha" {
			t.Fatalf("page: %d %d %v", total, len(rs), err)
		}
	})
}

func TestDistributionBasePaths(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		if _, err := meta.CreateDistribution(ctx, db, meta.Distribution{Type: "file.file", Name: "a", BasePath: "a/b"}); err != nil {
			t.Fatal(err)
		}
		for _, bp := range []string{"a/b", "a", "a/b/c"} {
			if _, err := meta.CreateDistribution(ctx, db, meta.Distribution{Type: "file.file", Name: "x" + bp, BasePath: bp}); !errors.Is(err, meta.ErrConflict) {
				t.Errorf("base path %q: got %v, want ErrConflict", bp, err)
			}
		}
		if _, err := meta.CreateDistribution(ctx, db, meta.Distribution{Type: "file.file", Name: "ok", BasePath: "a/bc"}); err != nil {
			t.Errorf("sibling base path refused: %v", err)
		}
	})
}

func TestUsers(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		if err := meta.SetPassword(ctx, db, "admin", "s3cret", true); err != nil {
			t.Fatal(err)
		}
		h, err := meta.PasswordHash(ctx, db, "admin")
		if err != nil {
			t.Fatal(err)
		}
		if !meta.CheckPassword(h, "s3cret") || meta.CheckPassword(h, "wrong") {
			t.Fatal("password check")
		}
		if err := meta.SetPassword(ctx, db, "admin", "new", true); err != nil {
			t.Fatal(err)
		}
		h, _ = meta.PasswordHash(ctx, db, "admin")
		if !meta.CheckPassword(h, "new") || meta.CheckPassword(h, "s3cret") {
			t.Fatal("password reset")
		}
	})
}

// TestTxRotate: what a transaction wrote before it rotates is committed (others see
// it, a later failure keeps it); what it writes after is the new transaction's.
func TestTxRotate(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		names := func() []string {
			repos, _, err := meta.ListRepositories(ctx, db, meta.List{})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range repos {
				out = append(out, r.Name)
			}
			return out
		}
		err := db.Tx(ctx, func(tx *meta.Tx) error {
			if _, err := meta.CreateRepository(ctx, tx, meta.Repository{Type: "file.file", Name: "before"}); err != nil {
				return err
			}
			if err := tx.Rotate(ctx); err != nil {
				return err
			}
			if got := names(); len(got) != 1 || got[0] != "before" {
				t.Errorf("after rotating, others see %v", got)
			}
			if _, err := meta.CreateRepository(ctx, tx, meta.Repository{Type: "file.file", Name: "after"}); err != nil {
				return err
			}
			return errors.New("fail after the rotation")
		})
		if err == nil {
			t.Fatal("the failure was lost")
		}
		if got := names(); len(got) != 1 || got[0] != "before" {
			t.Errorf("after the failure: %v, want only what was committed by the rotation", got)
		}
	})
}
