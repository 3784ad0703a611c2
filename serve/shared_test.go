package serve

import (
	"context"
	"testing"

	"pith/internal/testredis"
	"pith/meta"
)

// Two content processes share resolutions through Redis; a change made anywhere starts
// a new generation; with Redis gone, content is still served, uncached.
func TestSharedRedisCache(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rs := testredis.Start(t)
	v := f.version(f.stored("a.txt", []byte("shared")))
	pub := f.publish(v.Number)
	d, err := meta.CreateDistribution(ctx, f.db, meta.Distribution{Type: "file.file", Name: "d", BasePath: "d", PublicationID: &pub.ID})
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
	if code := get(a, "/pulp/content/d/a.txt"); code != 200 {
		t.Fatalf("a: %d", code)
	}
	// Take the file away behind both processes' backs: b has never resolved the path,
	// so a 200 from b can only come from the entry a shared.
	if _, err := f.db.Exec(ctx, `DELETE FROM published_files WHERE publication_id = ?`, pub.ID); err != nil {
		t.Fatal(err)
	}
	if code := get(b, "/pulp/content/d/a.txt"); code != 200 {
		t.Fatalf("b did not use the shared resolution: %d", code)
	}
	// The change is announced: a new generation everywhere.
	a.Changed(ctx)
	b.Invalidate()
	if code := get(b, "/pulp/content/d/a.txt"); code != 404 {
		t.Fatalf("b after the change: %d, want 404", code)
	}
	// Redis goes away: still served (uncached), the failure counted.
	if err := meta.DeletePublication(ctx, f.db, pub.ID); err != nil {
		t.Fatal(err)
	}
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
}
