package sqlblob

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"pith/blob"
	"pith/meta"
)

// ChunkSize is the most bytes one chunk row holds, and so about the most a writer or a
// reader keeps in memory. Each blob records the chunk size it was written with.
const ChunkSize = 1 << 20

// walkPage is how many blobs Walk reads per query; no cursor stays open while fn runs.
const walkPage = 500

// Driver stores blobs in database tables. It is safe for concurrent use, also by several
// processes sharing the database.
type Driver struct {
	db *meta.DB
}

var (
	_ blob.Driver  = (*Driver)(nil)
	_ blob.Stager  = (*Driver)(nil)
	_ blob.Sweeper = (*Driver)(nil)
)

// New returns a driver over db, whose migrations (meta.DB.Migrate) made its tables.
func New(ctx context.Context, db *meta.DB) (*Driver, error) {
	if db == nil {
		return nil, errors.New("blob database: nil database")
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM blob_parts WHERE upload = ''`).Scan(&n); err != nil {
		return nil, fmt.Errorf("blob database: its tables are missing on %s (run pith migrate): %w", db.Dialect(), err)
	}
	return &Driver{db: db}, nil
}

// Name is "database".
func (d *Driver) Name() string { return "database" }

// Create starts a temporary upload. Its writes run under ctx.
func (d *Driver) Create(ctx context.Context) (blob.Temp, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var id int64
	err := d.db.QueryRow(ctx, `INSERT INTO blob_uploads (created) VALUES (?) RETURNING id`, meta.Now()).Scan(&id)
	if err != nil {
		return nil, full(err)
	}
	return &temp{d: d, ctx: ctx, id: id}, nil
}

// full marks an error of a database that has no room left as blob.ErrFull.
func full(err error) error {
	if meta.IsFull(err) && !errors.Is(err, blob.ErrFull) {
		return fmt.Errorf("%w: %w", blob.ErrFull, err)
	}
	return err
}

// object is a committed blob's row.
type object struct {
	size, chunkSize, dataID, created int64
}

func (d *Driver) object(ctx context.Context, sha256 string) (object, error) {
	if err := blob.CheckDigest(sha256); err != nil {
		return object{}, err
	}
	var o object
	err := d.db.QueryRow(ctx, `SELECT size, chunk_size, data_id, created FROM blob_objects WHERE sha256 = ?`, sha256).
		Scan(&o.size, &o.chunkSize, &o.dataID, &o.created)
	if errors.Is(err, sql.ErrNoRows) {
		return object{}, blob.ErrNotFound
	}
	if err == nil && o.size > 0 && o.chunkSize <= 0 {
		err = fmt.Errorf("corrupt blob row: chunk size %d", o.chunkSize)
	}
	return o, err
}

// Open returns a reader that fetches one chunk at a time. Reads run under ctx. A blob
// deleted while it is read gives an error matching blob.ErrNotFound at the next chunk.
func (d *Driver) Open(ctx context.Context, sha256 string) (blob.Reader, error) {
	o, err := d.object(ctx, sha256)
	if err != nil {
		return nil, err
	}
	return &reader{ctx: ctx, db: d.db, sha256: sha256, obj: o, chunk: -1}, nil
}

// Stat describes a blob; its modification time is when it was committed.
func (d *Driver) Stat(ctx context.Context, sha256 string) (blob.Info, error) {
	o, err := d.object(ctx, sha256)
	if err != nil {
		return blob.Info{}, err
	}
	return blob.Info{Size: o.size, ModTime: meta.Time(o.created)}, nil
}

// Delete removes a blob and its chunks in one transaction; a missing one gives
// blob.ErrNotFound.
func (d *Driver) Delete(ctx context.Context, sha256 string) error {
	if err := blob.CheckDigest(sha256); err != nil {
		return err
	}
	return d.db.Tx(ctx, func(tx *meta.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `DELETE FROM blob_objects WHERE sha256 = ? RETURNING data_id`, sha256).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return blob.ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM blob_chunks WHERE data_id = ?`, id)
		return err
	})
}

// Walk visits committed blobs in digest order, a page at a time, so fn may delete.
func (d *Driver) Walk(ctx context.Context, fn func(sha256 string, info blob.Info) error) error {
	type entry struct {
		sha  string
		info blob.Info
	}
	after := ""
	for {
		rows, err := d.db.Query(ctx, `SELECT sha256, size, created FROM blob_objects
			WHERE sha256 > ? ORDER BY sha256 LIMIT ?`, after, walkPage)
		if err != nil {
			return err
		}
		var page []entry
		for rows.Next() {
			var (
				e       entry
				created int64
			)
			if err := rows.Scan(&e.sha, &e.info.Size, &created); err != nil {
				rows.Close()
				return err
			}
			e.info.ModTime = meta.Time(created)
			page = append(page, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, e := range page {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(e.sha, e.info); err != nil {
				return err
			}
		}
		if len(page) < walkPage {
			return nil
		}
		after = page[len(page)-1].sha
	}
}

// TempMaxAge is how old an upload (a temporary) must be before SweepTemp takes it for a
// crashed writer's. Nothing tells a dead writer's rows from a live one's in another
// process, so the age is longer than any write lasts: a write is as long as the request
// body or the download it stores, and a day is beyond both. A write older than that
// loses its rows and its Commit fails; nothing half-written is ever visible.
const TempMaxAge = 24 * time.Hour

// SweepTemp removes uploads started more than TempMaxAge ago, with their chunks: those
// crashed writers left behind.
func (d *Driver) SweepTemp(ctx context.Context) (int, error) {
	cutoff := time.Now().Add(-TempMaxAge).UnixMicro()
	rows, err := d.db.Query(ctx, `SELECT id FROM blob_uploads WHERE created < ? ORDER BY id`, cutoff)
	if err != nil {
		return 0, fmt.Errorf("blob database: sweep temporaries: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("blob database: sweep temporaries: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("blob database: sweep temporaries: %w", err)
	}
	for i, id := range ids {
		if err := d.discard(ctx, id); err != nil {
			return i, fmt.Errorf("blob database: sweep temporaries: upload %d: %w", id, err)
		}
	}
	return len(ids), nil
}

// discard deletes an upload and its chunks, in one transaction so chunks never outlive
// the row that lets SweepTemp find them. Chunks whose data id a blob has taken (committed
// meanwhile) stay; chunks flushed after SweepTemp took the upload row go.
func (d *Driver) discard(ctx context.Context, id int64) error {
	return d.db.Tx(ctx, func(tx *meta.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM blob_uploads WHERE id = ?`, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM blob_chunks WHERE data_id = ?
			AND NOT EXISTS (SELECT 1 FROM blob_objects WHERE data_id = ?)`, id, id)
		return err
	})
}
