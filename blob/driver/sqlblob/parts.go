package sqlblob

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"strconv"

	"pith/blob"
	"pith/meta"
)

// Parts are rows of blob_parts; its column offset_bytes holds the part's key (once the
// chunk's offset, which pith used as the key).

// PutPart writes the part's chunks like a temporary blob's, then in one transaction
// records them as the part (replacing an earlier part under the key) and ends the
// temporary, so a part is whole or absent and SweepTemp never takes it.
func (d *Driver) PutPart(ctx context.Context, upload string, key int64, r io.Reader, size int64) error {
	tw, err := d.Create(ctx)
	if err != nil {
		return err
	}
	t := tw.(*temp)
	defer t.Cancel(ctx)
	if _, err := io.Copy(t, r); err != nil {
		return err
	}
	if t.err != nil {
		return t.err
	}
	if len(t.buf) > 0 {
		if err := t.flush(ctx, t.buf); err != nil {
			return err
		}
	}
	err = d.db.Tx(ctx, func(tx *meta.Tx) error {
		if err := deletePart(ctx, tx, `upload = ? AND offset_bytes = ?`, upload, key); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO blob_parts (upload, offset_bytes, size, data_id) VALUES (?, ?, ?, ?)`,
			upload, key, t.size, t.id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM blob_uploads WHERE id = ?`, t.id)
		return err
	})
	if err != nil {
		return full(err)
	}
	t.done, t.buf = true, nil
	return nil
}

// deletePart removes the parts matching where, with their chunks.
func deletePart(ctx context.Context, tx *meta.Tx, where string, args ...any) error {
	if _, err := tx.Exec(ctx, `DELETE FROM blob_chunks WHERE data_id IN (SELECT data_id FROM blob_parts WHERE `+where+`)`, args...); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM blob_parts WHERE `+where, args...)
	return err
}

// OpenPart reads a part one chunk at a time.
func (d *Driver) OpenPart(ctx context.Context, upload string, key int64) (io.ReadCloser, error) {
	o := object{chunkSize: ChunkSize}
	err := d.db.QueryRow(ctx, `SELECT size, data_id FROM blob_parts WHERE upload = ? AND offset_bytes = ?`, upload, key).Scan(&o.size, &o.dataID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, blob.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &reader{ctx: ctx, db: d.db, sha256: "part " + upload + "@" + strconv.FormatInt(key, 10), obj: o, chunk: -1}, nil
}

// DeleteParts removes every part of the upload with its chunks.
func (d *Driver) DeleteParts(ctx context.Context, upload string) error {
	return d.db.Tx(ctx, func(tx *meta.Tx) error { return deletePart(ctx, tx, `upload = ?`, upload) })
}
