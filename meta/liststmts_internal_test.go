package meta

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// List pages keep their statements on SQLite, at most maxListStmts of them, the least
// recently used dropped; a statement dropped while a query was about to run on it
// leaves that query to run unkept, with the same rows. The store's own lookups
// (rowStmts) are not touched. Fixed queries of the store (QueryKept) are kept among
// those, and ArtifactsOf's IN list takes one of a few forms whatever its length.
func TestListStmts(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	check(t, db.Migrate(ctx))
	check(t, exec1(db, `CREATE TABLE t (n BIGINT)`))
	check(t, exec1(db, `INSERT INTO t VALUES (1), (2), (3)`))
	sum := func(text string, args ...any) int64 {
		t.Helper()
		rows, err := queryList(ctx, db, text, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var s int64
		for rows.Next() {
			var n int64
			check(t, rows.Scan(&n))
			s += n
		}
		check(t, rows.Err())
		return s
	}
	rowsBefore := db.nRowStmts.Load()
	for i := range 3 * maxListStmts {
		if got := sum(fmt.Sprintf("SELECT n FROM t WHERE n >= ? AND %d = %d", i, i), 2); got != 5 {
			t.Fatalf("page %d: %d", i, got)
		}
	}
	if n := db.listStmts.order.Len(); n != maxListStmts || len(db.listStmts.at) != maxListStmts {
		t.Errorf("%d list statements kept (%d indexed), want %d", n, len(db.listStmts.at), maxListStmts)
	}
	if db.nRowStmts.Load() != rowsBefore {
		t.Errorf("list pages took places of the store's lookups")
	}
	// A recurring text stays; the oldest went.
	last := fmt.Sprintf("SELECT n FROM t WHERE n >= ? AND %d = %d", 3*maxListStmts-1, 3*maxListStmts-1)
	if _, ok := db.listStmts.at[last]; !ok {
		t.Error("the latest page's statement is not kept")
	}
	if _, ok := db.listStmts.at["SELECT n FROM t WHERE n >= ? AND 0 = 0"]; ok {
		t.Error("the oldest page's statement is still kept")
	}
	// Dropped under a query about to run: it runs unkept.
	db.listStmts.at[last].Value.(*listStmt).s.Close()
	if got := sum(last, 1); got != 6 {
		t.Errorf("on a closed statement: %d", got)
	}

	// ArtifactsOf: 3, 5 and 8 ids share one text; 9 another.
	before := db.nRowStmts.Load()
	for _, n := range []int{3, 5, 8} {
		ids := make([]int64, n)
		if _, err := ArtifactsOf(ctx, db, ids); err != nil {
			t.Fatal(err)
		}
	}
	if got := db.nRowStmts.Load() - before; got != 1 {
		t.Errorf("ArtifactsOf of 3, 5 and 8 units kept %d statements, want 1", got)
	}
	if _, err := ArtifactsOf(ctx, db, make([]int64, 9)); err != nil || db.nRowStmts.Load()-before != 2 {
		t.Errorf("ArtifactsOf of 9 units: %v, %d kept", err, db.nRowStmts.Load()-before)
	}
}

func exec1(db *DB, q string) error {
	_, err := db.Exec(context.Background(), q)
	return err
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// openTest opens a SQLite store in a temporary directory, closed at the test's end.
func openTest(t *testing.T) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "pith.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
