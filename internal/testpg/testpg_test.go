package testpg

import (
	"context"
	"database/sql"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

func TestFreshDatabases(t *testing.T) {
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatal("two tests got the same database")
	}
	ctx := context.Background()
	da, err := sql.Open("pgx", a)
	if err != nil {
		t.Fatal(err)
	}
	defer da.Close()
	db, _ := sql.Open("pgx", b)
	defer db.Close()
	if _, err := da.ExecContext(ctx, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_name = 't'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("database b sees a's table: %d %v", n, err)
	}
}
