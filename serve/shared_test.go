package serve

import (
	"context"
	"strings"
	"testing"

	"pith/internal/testredis"
	"pith/meta"
)

// Two content processes share resolutions through Redis; a change to one distribution
// reaches every process and forgets only what that distribution served; with Redis
// gone, content is still served, uncached.
func TestSharedRedisCache(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rs := testredis.Start(t)
	unit := f.stored("a.txt", []byte("shared"))
	v := f.version(unit)
	pub := f.publish(v.Number)
	d, err := meta.CreateDistribution(ctx, f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "d", PublicationID: &pub.ID})
	if err != nil {
		t.Fatal(err)
	}
	_, err = meta.CreateDistribution(ctx, f.db, meta.Distribution{Type: "file.file", Name: "e", BasePath: "e", PublicationID: &pub.ID})
	if err != nil {
		t.Fatal(err)
	}
	newServer := func() *Server {
		sh, err := NewShared(ctx, rs.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sh.Close() })
		return New(f.db, f.store, Options{Shared: sh})
	}
	a, b := newServer(), newServer()
	get := func(s *Server, path string) int {
		f.srv = s
		return f.get(path).Code
	}
	for _, p := range []string{"/pulp/content/d/a.txt", "/pulp/content/e/a.txt"} {
		if code := get(a, p); code != 200 {
			t.Fatalf("a %s: %d", p, code)
		}
	}
	// Take the file away behind both processes' backs: b has never resolved the path,
	// so a 200 from b can only come from the entry a shared.
	if _, err := f.db.Exec(ctx, `DELETE FROM published_files WHERE publication_id = ?`, pub.ID); err != nil {
		t.Fatal(err)
	}
	if code := get(b, "/pulp/content/d/a.txt"); code != 200 {
		t.Fatalf("b did not use the shared resolution: %d", code)
	}
	// Distribution d moves to a new publication without the file; both processes hear
	// of it. d's entries are left behind, e's (unchanged) are kept: e still answers from
	// the cache what the database no longer holds.
	var v2 meta.Version
	if err := f.db.Tx(ctx, func(tx *meta.Tx) (err error) {
		v2, _, err = meta.NewVersion(ctx, tx, f.repo.ID, meta.Change{Remove: []int64{unit.ID}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	pub2 := f.publish(v2.Number)
	d.PublicationID = &pub2.ID
	if err := meta.UpdateDistribution(ctx, f.db, d, meta.Now()); err != nil {
		t.Fatal(err)
	}
	a.Invalidate()
	b.Invalidate()
	for _, s := range []*Server{a, b} {
		if code := get(s, "/pulp/content/d/a.txt"); code != 404 {
			t.Fatalf("d after the change: %d, want 404", code)
		}
		if code := get(s, "/pulp/content/e/a.txt"); code != 200 {
			t.Fatalf("e, unchanged, lost its cached entry: %d", code)
		}
	}
	// Redis goes away: still served (uncached), the failure counted. d now serves the
	// repository's latest version, which has the file again.
	f.version(unit)
	d, _ = meta.DistributionByID(ctx, f.db, d.ID)
	d.PublicationID = nil
	d.RepositoryID = &f.repo.ID
	if err := meta.UpdateDistribution(ctx, f.db, d, meta.Now()); err != nil {
		t.Fatal(err)
	}
	rs.Stop()
	c := newServer()
	if code := get(c, "/pulp/content/d/a.txt"); code != 200 {
		t.Fatalf("with Redis down: %d", code)
	}
	if c.opt.Shared.Errors() == 0 || c.opt.Shared.Connected(ctx) {
		t.Errorf("the Redis outage was not noticed: %d errors", c.opt.Shared.Errors())
	}
	var m strings.Builder
	c.WriteMetrics(ctx, &m)
	if !strings.Contains(m.String(), "pith_content_cache_redis_up 0") || strings.Contains(m.String(), "pith_content_cache_redis_errors_total 0\n") {
		t.Errorf("metrics do not show the outage:\n%s", m.String())
	}
}

// With SharedOnly a process keeps its resolutions in Redis alone: once Redis forgets
// them, the process resolves again in the database (here: the path is gone, 404), where
// one with a local cache too would still answer from memory.
func TestSharedOnly(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rs := testredis.Start(t)
	unit := f.stored("a.txt", []byte("shared only"))
	pub := f.publish(f.version(unit).Number)
	if _, err := meta.CreateDistribution(ctx, f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "d", PublicationID: &pub.ID}); err != nil {
		t.Fatal(err)
	}
	servers := map[bool]*Server{}
	for _, only := range []bool{true, false} {
		sh, err := NewShared(ctx, rs.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sh.Close() })
		servers[only] = New(f.db, f.store, Options{Shared: sh, SharedOnly: only})
		f.srv = servers[only]
		if code := f.get("/pulp/content/d/a.txt").Code; code != 200 {
			t.Fatalf("shared only %v: %d", only, code)
		}
	}
	if _, err := f.db.Exec(ctx, `DELETE FROM published_files WHERE publication_id = ?`, pub.ID); err != nil {
		t.Fatal(err)
	}
	if err := servers[true].opt.Shared.rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for only, want := range map[bool]int{true: 404, false: 200} {
		f.srv = servers[only]
		if code := f.get("/pulp/content/d/a.txt").Code; code != want {
			t.Errorf("shared only %v, Redis emptied: %d, want %d", only, code, want)
		}
	}
}
