package meta

import (
	"context"
	"fmt"
	"testing"
)

// A transaction keeps at most maxTxStmts statements prepared, however many distinct
// ones it runs (a statement whose text carries its values is new every time), and
// every statement past the bound still runs, in the transaction.
func TestTxStmtsBounded(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if _, err := db.Exec(ctx, `CREATE TABLE t (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	const n = 3 * maxTxStmts
	err := db.Tx(ctx, func(tx *Tx) error {
		for i := range n {
			if _, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO t (n) VALUES (%d)`, i)); err != nil {
				return err
			}
			var got int
			if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM t WHERE n <= %d`, i)).Scan(&got); err != nil {
				return err
			}
			if got != i+1 {
				return fmt.Errorf("statement %d: %d rows, want %d", i, got, i+1)
			}
			if len(tx.stmts) > maxTxStmts {
				return fmt.Errorf("statement %d: %d kept", i, len(tx.stmts))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var total int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM t`).Scan(&total); err != nil || total != n {
		t.Fatalf("after commit: %d rows (%v), want %d", total, err, n)
	}
}
