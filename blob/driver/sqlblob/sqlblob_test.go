package sqlblob_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"pith/blob"
	"pith/blob/driver/sqlblob"
	"pith/blob/drivertest"
	"pith/internal/testpg"
	"pith/meta"
)

func TestMain(m *testing.M) { testpg.Main(m) }

// databases names each engine and makes a fresh, empty database of it for a test.
var databases = []struct {
	name string
	dsn  func(t testing.TB) string
}{
	{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "pith.db") }},
	{"postgres", testpg.URL},
}

func open(t testing.TB, dsn string) (*sqlblob.Driver, *meta.DB) {
	t.Helper()
	db, err := meta.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	d, err := sqlblob.New(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	return d, db
}

// forEach runs test as a parallel subtest per database.
func forEach(t *testing.T, test func(t *testing.T, dsn func(testing.TB) string)) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			test(t, db.dsn)
		})
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, dsn func(testing.TB) string) {
		drivertest.Run(t, func(t *testing.T) blob.Driver { d, _ := open(t, dsn(t)); return d })
	})
}

func BenchmarkPut10MiB(b *testing.B) {
	for _, db := range databases {
		b.Run(db.name, func(b *testing.B) {
			d, _ := open(b, db.dsn(b))
			drivertest.Bench(b, d, 10<<20)
		})
	}
}

func sum(data []byte) string { s := sha256.Sum256(data); return hex.EncodeToString(s[:]) }

// write stores data through the driver in writes of at most n bytes.
func write(t *testing.T, d blob.Driver, data []byte, n int) string {
	t.Helper()
	tmp, err := d.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for p := data; len(p) > 0; p = p[min(n, len(p)):] {
		if _, err := tmp.Write(p[:min(n, len(p))]); err != nil {
			t.Fatal(err)
		}
	}
	sha := sum(data)
	if err := tmp.Commit(t.Context(), sha); err != nil {
		t.Fatal(err)
	}
	return sha
}

// count returns the rows of a driver table.
func count(t *testing.T, db *meta.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(t.Context(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLargeBlobSeeks(t *testing.T) {
	t.Parallel()
	const size = 20 << 20
	data := make([]byte, size)
	rand.NewChaCha8([32]byte{1}).Read(data)
	forEach(t, func(t *testing.T, dsn func(testing.TB) string) {
		d, db := open(t, dsn(t))
		sha := write(t, d, data, 64<<10)
		if got, want := count(t, db, "blob_chunks"), size/sqlblob.ChunkSize; got != want {
			t.Errorf("%d chunk rows, want %d", got, want)
		}
		if n := count(t, db, "blob_uploads"); n != 0 {
			t.Errorf("%d uploads left after commit", n)
		}
		r, err := d.Open(t.Context(), sha)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read whole: %d bytes, %v; content equal: %v", len(got), err, bytes.Equal(got, data))
		}
		const c = sqlblob.ChunkSize
		for _, s := range []struct {
			name   string
			off    int64
			whence int
			n      int
			at     int64 // where the bytes read start in data
		}{
			{"start", 0, io.SeekStart, 1000, 0},
			{"middle of a chunk", 7*c + c/2, io.SeekStart, 4096, 7*c + c/2},
			{"across a chunk boundary", 12*c - 3000, io.SeekStart, 6000, 12*c - 3000},
			{"across several chunks", 2*c + 1, io.SeekStart, 3 * c, 2*c + 1},
			{"back from the current position", -(c + 17), io.SeekCurrent, 100, 4*c - 16},
			{"end", -4096, io.SeekEnd, 4096, size - 4096},
			{"last byte", size - 1, io.SeekStart, 1, size - 1},
		} {
			pos, err := r.Seek(s.off, s.whence)
			if err != nil || pos != s.at {
				t.Errorf("%s: seek(%d, %d) = %d, %v; want %d", s.name, s.off, s.whence, pos, err, s.at)
				continue
			}
			got := make([]byte, s.n)
			if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, data[s.at:s.at+int64(s.n)]) {
				t.Errorf("%s: read %d bytes at %d: %v; content equal: %v", s.name, s.n, s.at, err, bytes.Equal(got, data[s.at:s.at+int64(s.n)]))
			}
		}
		if n, err := r.Read(make([]byte, 10)); n != 0 || err != io.EOF {
			t.Errorf("read at the end: %d, %v; want 0, EOF", n, err)
		}
		if _, err := r.Seek(size+10, io.SeekStart); err != nil {
			t.Errorf("seek past the end: %v", err)
		}
		if n, err := r.Read(make([]byte, 10)); n != 0 || err != io.EOF {
			t.Errorf("read past the end: %d, %v; want 0, EOF", n, err)
		}
		if _, err := r.Seek(-1, io.SeekStart); err == nil {
			t.Error("seek to -1 succeeded")
		}
		if err := d.Delete(t.Context(), sha); err != nil {
			t.Fatal(err)
		}
		if n := count(t, db, "blob_chunks"); n != 0 {
			t.Errorf("%d chunk rows left after delete", n)
		}
	})
}

func TestRowsOfTemporaries(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, dsn func(testing.TB) string) {
		d, db := open(t, dsn(t))
		data := bytes.Repeat([]byte("0123456789abcdef"), sqlblob.ChunkSize/16*2+1) // two chunks and a bit
		sha := write(t, d, data, 100_000)

		// Dedup: the second upload's chunks go, the stored ones stay.
		write(t, d, data, sqlblob.ChunkSize+5)
		if got := count(t, db, "blob_chunks"); got != 3 {
			t.Errorf("after storing the same content twice: %d chunk rows, want 3", got)
		}

		// Cancel removes flushed chunks and the upload.
		tmp, err := d.Create(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		tmp.Write(data)
		if got := count(t, db, "blob_chunks"); got != 5 {
			t.Errorf("while a second blob is written: %d chunk rows, want 5 (3 stored, 2 flushed)", got)
		}
		if err := tmp.Cancel(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := count(t, db, "blob_chunks"); got != 3 {
			t.Errorf("after cancel: %d chunk rows, want 3", got)
		}
		if n := count(t, db, "blob_uploads"); n != 0 {
			t.Errorf("%d uploads left", n)
		}

		// A reader of a blob deleted under it fails at its next chunk with ErrNotFound.
		r, err := d.Open(t.Context(), sha)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := r.Read(make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
		if err := d.Delete(t.Context(), sha); err != nil {
			t.Fatal(err)
		}
		r.Seek(sqlblob.ChunkSize, io.SeekStart)
		if _, err := r.Read(make([]byte, 10)); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("read of a deleted blob: %v, want ErrNotFound", err)
		}
	})
}

// What a writer whose process died leaves: an upload with a flushed chunk that nobody
// commits or cancels, older than any write lasts.
func TestSweep(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, dsn func(testing.TB) string) {
		dbs := map[blob.Driver]*meta.DB{}
		var mu sync.Mutex
		drivertest.RunSweep(t, func(t *testing.T) blob.Driver {
			d, db := open(t, dsn(t))
			mu.Lock()
			dbs[d] = db
			mu.Unlock()
			return d
		}, func(t *testing.T, d blob.Driver) func() bool {
			mu.Lock()
			db := dbs[d]
			mu.Unlock()
			dead, err := d.Create(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			dead.Write(bytes.Repeat([]byte{7}, sqlblob.ChunkSize+1)) // one chunk flushed
			past := time.Now().Add(-sqlblob.TempMaxAge - time.Minute).UnixMicro()
			if _, err := db.Exec(t.Context(), `UPDATE blob_uploads SET created = ? WHERE id = (SELECT max(id) FROM blob_uploads)`, past); err != nil {
				t.Fatal(err)
			}
			return func() bool { return count(t, db, "blob_uploads") == 1 && count(t, db, "blob_chunks") == 0 } // the live write's upload only
		})
	})
}

// A writer whose upload was swept (it wrote for longer than TempMaxAge) cannot commit,
// and leaves nothing.
func TestCommitAfterSweep(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, dsn func(testing.TB) string) {
		d, db := open(t, dsn(t))
		big := bytes.Repeat([]byte{7}, sqlblob.ChunkSize+1)
		old, err := d.Create(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		old.Write(big) // one chunk flushed
		past := time.Now().Add(-sqlblob.TempMaxAge - time.Minute).UnixMicro()
		if _, err := db.Exec(t.Context(), `UPDATE blob_uploads SET created = ?`, past); err != nil {
			t.Fatal(err)
		}
		if n, err := d.SweepTemp(t.Context()); n != 1 || err != nil {
			t.Fatalf("sweep removed %d, %v; want 1", n, err)
		}
		if err := old.Commit(t.Context(), sum(big)); err == nil {
			t.Error("commit of a swept upload succeeded")
		}
		if n := count(t, db, "blob_chunks"); n != 0 {
			t.Errorf("%d chunk rows after the failed commit", n)
		}
		if _, err := d.Stat(t.Context(), sum(big)); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("stat of a swept upload's digest: %v, want ErrNotFound", err)
		}
	})
}

func TestNew(t *testing.T) {
	t.Parallel()
	if _, err := sqlblob.New(t.Context(), nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	forEach(t, func(t *testing.T, dsn func(testing.TB) string) {
		d, db := open(t, dsn(t))
		if d.Name() != "database" {
			t.Errorf("Name() = %q", d.Name())
		}
		sha := write(t, d, []byte("survives"), 3)
		if err := db.Migrate(t.Context()); err != nil {
			t.Fatalf("migrations again: %v", err)
		}
		again, err := sqlblob.New(t.Context(), db) // tables exist: nothing changes
		if err != nil {
			t.Fatal(err)
		}
		if info, err := again.Stat(t.Context(), sha); err != nil || info.Size != 8 {
			t.Errorf("stat after a second New: %+v, %v", info, err)
		}
	})
}

func TestPostgresStoresChunksUncompressed(t *testing.T) {
	t.Parallel()
	_, db := open(t, testpg.URL(t))
	var storage string
	err := db.QueryRow(t.Context(), `SELECT attstorage FROM pg_attribute
		WHERE attrelid = 'blob_chunks'::regclass AND attname = 'data'`).Scan(&storage)
	if err != nil || storage != "e" {
		t.Errorf("blob_chunks.data storage %q, %v; want \"e\" (external, uncompressed)", storage, err)
	}
}
