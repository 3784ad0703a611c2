package meta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Upload is a chunked upload in progress; its bytes live in the data directory.
type Upload struct {
	ID        int64
	PulpID    string
	Size      int64
	Completed *int64
	Created   int64
	Updated   int64
}

// Chunk is a byte range received for an upload.
type Chunk struct {
	Offset int64
	Size   int64
	Part   int64 // the key of the part holding its bytes in the blob storage
}

// OverlapError says that a chunk overlaps one the upload has received already.
type OverlapError struct {
	Received Chunk
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("the chunk overlaps the chunk already uploaded at bytes %d-%d", e.Received.Offset, e.Received.Offset+e.Received.Size-1)
}

// Unwrap makes an overlap a conflict.
func (e *OverlapError) Unwrap() error { return ErrConflict }

const uploadCols = "u.id, u.pulp_id, u.size, u.completed, u.created, u.updated"

func scanUpload(r interface{ Scan(...any) error }) (Upload, error) {
	var u Upload
	err := r.Scan(&u.ID, &u.PulpID, &u.Size, &u.Completed, &u.Created, &u.Updated)
	return u, err
}

// CreateUpload inserts an upload of the declared size.
func CreateUpload(ctx context.Context, q Querier, size int64) (Upload, error) {
	now := Now()
	var id int64
	if err := q.QueryRow(ctx, `INSERT INTO uploads (pulp_id, size, created, updated) VALUES (?, ?, ?, ?) RETURNING id`, NewID(), size, now, now).Scan(&id); err != nil {
		return Upload{}, fmt.Errorf("insert upload: %w", err)
	}
	u, err := scanUpload(q.QueryRow(ctx, "SELECT "+uploadCols+" FROM uploads u WHERE u.id = ?", id))
	return u, err
}

// UploadByPulpID finds an upload by its href UUID.
func UploadByPulpID(ctx context.Context, q Querier, id string) (Upload, error) {
	u, err := scanUpload(q.QueryRow(ctx, "SELECT "+uploadCols+" FROM uploads u WHERE u.pulp_id = ?", id))
	return u, noRows(err, "upload", id)
}

// ListUploads selects a page of uploads (alias u).
func ListUploads(ctx context.Context, q Querier, l List) ([]Upload, int64, error) {
	return Page(ctx, q, uploadCols, "uploads u", "u.id DESC", l, func(r *sql.Rows) (Upload, error) { return scanUpload(r) })
}

// Chunks lists the received ranges of an upload in offset order.
func Chunks(ctx context.Context, q Querier, uploadID int64) ([]Chunk, error) {
	rows, err := q.Query(ctx, `SELECT offset_bytes, size, COALESCE(part, offset_bytes) FROM upload_chunks
		WHERE upload_id = ? ORDER BY offset_bytes`, uploadID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Chunk
	for rows.Next() {
		var c Chunk
		if err := rows.Scan(&c.Offset, &c.Size, &c.Part); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Overlapping returns an *OverlapError if c overlaps a chunk the upload has received.
func Overlapping(ctx context.Context, q Querier, uploadID int64, c Chunk) error {
	var got Chunk
	err := q.QueryRow(ctx, `SELECT offset_bytes, size, COALESCE(part, offset_bytes) FROM upload_chunks
		WHERE upload_id = ? AND offset_bytes < ? AND offset_bytes + size > ? ORDER BY offset_bytes LIMIT 1`,
		uploadID, c.Offset+max(c.Size, 1), c.Offset).Scan(&got.Offset, &got.Size, &got.Part)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("chunks of upload %d: %w", uploadID, err)
	}
	return &OverlapError{Received: got}
}

// AddChunk records a received range if it overlaps none the upload has, checked in the
// transaction that records it: of two overlapping chunks recorded at once, exactly one
// is, the other gets an *OverlapError. The transactions of one upload serialize on its
// row (locked first on PostgreSQL; SQLite's transactions take the write lock as they
// begin). An upload deleted meanwhile gives ErrNotFound.
func AddChunk(ctx context.Context, db *DB, uploadID int64, c Chunk) error {
	lock := ""
	if db.Dialect() == Postgres {
		lock = " FOR UPDATE"
	}
	return db.Tx(ctx, func(tx *Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `SELECT id FROM uploads WHERE id = ?`+lock, uploadID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("upload %d: %w", uploadID, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("lock upload %d: %w", uploadID, err)
		}
		if err := Overlapping(ctx, tx, uploadID, c); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO upload_chunks (upload_id, offset_bytes, size, part) VALUES (?, ?, ?, ?)`,
			uploadID, c.Offset, c.Size, c.Part); err != nil {
			if IsUniqueViolation(err) { // two empty chunks at one offset
				return fmt.Errorf("a chunk at offset %d was already uploaded: %w", c.Offset, ErrConflict)
			}
			return fmt.Errorf("record chunk at byte %d of upload %d: %w", c.Offset, uploadID, err)
		}
		return nil
	})
}

// CompleteUpload marks an upload committed.
func CompleteUpload(ctx context.Context, q Querier, id int64) error {
	now := Now()
	_, err := q.Exec(ctx, `UPDATE uploads SET completed = ?, updated = ? WHERE id = ?`, now, now, id)
	return err
}

// DeleteUpload deletes an upload row and its chunk records.
func DeleteUpload(ctx context.Context, q Querier, id int64) error {
	if err := ForgetGrants(ctx, q, "uploads", "id = ?", id); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM uploads WHERE id = ?`, id)
	return err
}
