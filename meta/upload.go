package meta

import (
	"context"
	"database/sql"
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
}

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
	rows, err := q.Query(ctx, `SELECT offset_bytes, size FROM upload_chunks WHERE upload_id = ? ORDER BY offset_bytes`, uploadID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Chunk
	for rows.Next() {
		var c Chunk
		if err := rows.Scan(&c.Offset, &c.Size); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// AddChunk records a received range.
func AddChunk(ctx context.Context, q Querier, uploadID int64, c Chunk) error {
	_, err := q.Exec(ctx, `INSERT INTO upload_chunks (upload_id, offset_bytes, size) VALUES (?, ?, ?)`, uploadID, c.Offset, c.Size)
	if IsUniqueViolation(err) {
		return fmt.Errorf("a chunk at offset %d was already uploaded: %w", c.Offset, ErrConflict)
	}
	return err
}

// CompleteUpload marks an upload committed.
func CompleteUpload(ctx context.Context, q Querier, id int64) error {
	now := Now()
	_, err := q.Exec(ctx, `UPDATE uploads SET completed = ?, updated = ? WHERE id = ?`, now, now, id)
	return err
}

// DeleteUpload deletes an upload row and its chunk records.
func DeleteUpload(ctx context.Context, q Querier, id int64) error {
	_, err := q.Exec(ctx, `DELETE FROM uploads WHERE id = ?`, id)
	return err
}
