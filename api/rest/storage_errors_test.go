package rest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"pith/api/rest"
	"pith/blob"
	"pith/meta"
)

// Storage that is full is a 507 naming the storage, storage that fails otherwise a 503
// naming the driver; neither shows the server's paths or the driver's own words.
func TestStorageErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		status int
		detail string
	}{
		{"blob storage full", fmt.Errorf("put part: %w", &blob.DriverError{Driver: "fs", Op: "put part",
			Err: &os.PathError{Op: "write", Path: "/srv/pith/blobs/parts/u/.tmp-1", Err: syscall.ENOSPC}}),
			507, "the filesystem blob storage is full"},
		{"database full", dbFull(t), 507, "the metadata database is full"},
		{"blob storage down", &blob.DriverError{Driver: "s3", Op: "open", Err: errors.New("dial tcp 10.0.0.7:9000: connection refused")},
			503, "the s3 blob storage is unavailable; try again later"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			rest.WriteError(w, httptest.NewRequest("PUT", "/pulp/api/v3/uploads/x/", nil), c.err)
			body := w.Body.String()
			if w.Code != c.status || !strings.Contains(body, `"detail":"`+c.detail+`"`) {
				t.Errorf("%d %s, want %d with detail %q", w.Code, body, c.status, c.detail)
			}
			for _, leak := range []string{"/srv", "10.0.0.7", "(13)"} {
				if strings.Contains(body, leak) {
					t.Errorf("the answer shows %q: %s", leak, body)
				}
			}
		})
	}
}

// dbFull is the error of a write to a SQLite database that may not grow.
func dbFull(t *testing.T) error {
	ctx := context.Background()
	db, err := meta.Open(ctx, filepath.Join(t.TempDir(), "pith.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Tx(ctx, func(tx *meta.Tx) error {
		for _, s := range []string{`PRAGMA max_page_count = 1`, `CREATE TABLE big (x BLOB)`, `INSERT INTO big VALUES (zeroblob(100000))`} {
			if _, err := tx.Exec(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if !meta.IsFull(err) {
		t.Fatalf("a database that may not grow: %v", err)
	}
	return err
}
