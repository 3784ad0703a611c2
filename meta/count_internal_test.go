package meta

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"pith/internal/testpg"
)

// A list's count is answered from the cache while nothing is committed, and counted
// again after any commit: through the same store, through another one on the same
// database (another process), and after the token's connection is lost. A count in a
// transaction is never answered from the cache.
func TestCountsKeptUntilCommit(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dsn := filepath.Join(t.TempDir(), "pith.db")
			if engine == "postgres" {
				dsn = testpg.URL(t)
			}
			open := func() *DB {
				db, err := Open(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			}
			db, other := open(), open()
			if _, err := db.Exec(ctx, `CREATE TABLE t (n BIGINT)`); err != nil {
				t.Fatal(err)
			}
			const q = `SELECT count(*) FROM t WHERE n > ?`
			args := []any{int64(0)}
			want := func(db *DB, n int64) {
				t.Helper()
				got, err := count(ctx, db, q, args)
				if err != nil || got != n {
					t.Fatalf("count = %d, %v; want %d", got, err, n)
				}
			}
			// plant puts a wrong count in db's cache under the current token: a count
			// that answers it came from the cache.
			plant := func(db *DB) {
				t.Helper()
				tok, err := db.counts.token(ctx)
				if err != nil {
					t.Fatal(err)
				}
				db.counts.mu.Lock()
				db.counts.m[countKey(q, args)] = countEntry{token: tok, n: 99}
				db.counts.mu.Unlock()
			}
			want(db, 0)
			plant(db)
			want(db, 99) // nothing committed: kept
			if _, err := db.Exec(ctx, `INSERT INTO t (n) VALUES (1)`); err != nil {
				t.Fatal(err)
			}
			want(db, 1)
			plant(db)
			if _, err := other.Exec(ctx, `INSERT INTO t (n) VALUES (2)`); err != nil {
				t.Fatal(err)
			}
			want(db, 2) // another store's commit
			plant(db)
			if _, err := db.Exec(ctx, `INSERT INTO t (n) VALUES (0)`); err != nil { // commits, matches nothing
				t.Fatal(err)
			}
			want(db, 2)
			// Another argument is another count.
			plant(db)
			if got, err := count(ctx, db, q, []any{int64(1)}); err != nil || got != 1 {
				t.Fatalf("count of n > 1 = %d, %v; want 1", got, err)
			}
			// However many distinct counts are asked, at most maxCounts are kept.
			for i := range 2*maxCounts + 1 {
				if _, err := count(ctx, db, q, []any{int64(-i)}); err != nil {
					t.Fatal(err)
				}
				if n := len(db.counts.m); n > maxCounts {
					t.Fatalf("%d counts kept", n)
				}
			}
			err := db.Tx(ctx, func(tx *Tx) error {
				if _, err := tx.Exec(ctx, `INSERT INTO t (n) VALUES (3)`); err != nil {
					return err
				}
				got, err := count(ctx, tx, q, args)
				if err == nil && got != 3 {
					t.Errorf("count in the transaction = %d, want 3", got)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if engine == "sqlite" {
				// A new token connection starts its data_version again: the token
				// carries the connection's number.
				want(db, 3)
				plant(db)
				db.counts.connMu.Lock()
				db.counts.conn.Close()
				db.counts.conn = nil
				db.counts.connMu.Unlock()
				if _, err := other.Exec(ctx, `INSERT INTO t (n) VALUES (4)`); err != nil {
					t.Fatal(err)
				}
				want(db, 4)
			}
		})
	}
}

// A list without its narrowing conditions keeps the others, in their count's form, with
// their arguments in order.
func TestUnnarrowed(t *testing.T) {
	var l List
	l.And("a = ?", 1)
	l.AndCond(Cond{Row: "b1 = ? AND b2 = ?", Set: "b IN (?, ?)", Args: []any{2, 3}, Narrow: true})
	l.AndCond(Cond{Row: "+c = ?", Set: "c = ?", Sparse: "c <> ?", Args: []any{4}})
	l.And("d BETWEEN ? AND ?", 5, 6)
	l.AndCond(Cond{Row: "e = ?", Set: "e IN (?)", Args: []any{7}, Narrow: true})
	w, args := l.unnarrowed()
	if want := " WHERE a = ? AND c = ? AND d BETWEEN ? AND ?"; w != want {
		t.Errorf("where %q, want %q", w, want)
	}
	if !slices.Equal(args, []any{1, 4, 5, 6}) {
		t.Errorf("args %v, want [1 4 5 6]", args)
	}
	if want := " WHERE a = ? AND b IN (?, ?) AND c <> ? AND d BETWEEN ? AND ? AND e IN (?)"; l.sparseWhere() != want {
		t.Errorf("sparse where %q, want %q", l.sparseWhere(), want)
	}
}

// A list's count, whose text varies with the list's filters, does not take one of the
// store's kept statements (maxRowStmts), in the cache or not.
func TestCountsNotKeptAsStatements(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if _, err := db.Exec(ctx, `CREATE TABLE t (n BIGINT)`); err != nil {
		t.Fatal(err)
	}
	before := db.nRowStmts.Load()
	for i := range 20 {
		query := "SELECT count(*) FROM t WHERE n IN " + Placeholders(i+1)
		args := make([]any, i+1)
		for j := range args {
			args[j] = int64(j)
		}
		if _, err := count(ctx, db, query, args); err != nil {
			t.Fatal(err)
		}
	}
	if after := db.nRowStmts.Load(); after != before {
		t.Errorf("20 counts kept %d statements", after-before)
	}
}

// A request that reads only (ReadsOnly) reads the commit token once: a commit after its
// first read does not change the token its later counts are kept by. Another request
// reads the token anew.
func TestReadsOnlyToken(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	check(t, db.Migrate(ctx))
	req := ReadsOnly(ctx)
	first, err := db.counts.token(req)
	check(t, err)
	_, err = CreateRepository(ctx, db, Repository{Type: "file.file", Name: "r"})
	check(t, err)
	again, err := db.counts.token(req)
	check(t, err)
	next, err := db.counts.token(ReadsOnly(ctx))
	check(t, err)
	if again != first || next == first {
		t.Errorf("tokens %q, then %q in the same request and %q in the next; want the first two equal, the last not", first, again, next)
	}
}
