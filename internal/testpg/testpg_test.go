package testpg

import (
	"database/sql"
	"net/url"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// userTables counts the tables outside the system schemas.
func userTables(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM information_schema.tables
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAvailable(t *testing.T) {
	if !Available() {
		t.Fatal("Available() is false, yet this package's tests need PostgreSQL; run scripts/test")
	}
}

func TestFreshDatabases(t *testing.T) {
	t.Parallel()
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("two URL calls returned the same database %s", a)
	}
	da, db := open(t, a), open(t, b)

	for _, c := range []struct {
		dsn string
		db  *sql.DB
	}{{a, da}, {b, db}} {
		u, err := url.Parse(c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		if err := c.db.QueryRowContext(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimPrefix(u.Path, "/"); name != want || !strings.HasPrefix(name, "pith_test_") {
			t.Errorf("connected to database %q, want %q (named pith_test_…)", name, want)
		}
		if n := userTables(t, c.db); n != 0 {
			t.Errorf("fresh database %s has %d tables, want none", name, n)
		}
	}

	if _, err := da.ExecContext(t.Context(), "CREATE TABLE t (x int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if n := userTables(t, db); n != 0 {
		t.Errorf("database b sees %d tables after a write to a, want none", n)
	}
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE t (x int)"); err != nil {
		t.Fatalf("the same table in b: %v", err)
	}
	var n int
	if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM t").Scan(&n); err != nil || n != 0 {
		t.Errorf("b's table holds %d rows (%v), want 0", n, err)
	}
}

func TestDroppedAfterTest(t *testing.T) {
	t.Parallel()
	var name string
	var leftOpen *sql.DB
	ok := t.Run("user", func(t *testing.T) {
		u, err := url.Parse(URL(t))
		if err != nil {
			t.Fatal(err)
		}
		name = strings.TrimPrefix(u.Path, "/")
		// A connection still open when the test ends must not keep the database alive.
		db, err := sql.Open("pgx", u.String())
		if err != nil {
			t.Fatal(err)
		}
		if err := db.PingContext(t.Context()); err != nil {
			t.Fatal(err)
		}
		leftOpen = db
	})
	if leftOpen != nil {
		defer leftOpen.Close()
	}
	if !ok {
		return
	}
	var n int
	err := admin.QueryRowContext(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after its test ended", name)
	}
}
