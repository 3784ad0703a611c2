package sqlblob

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"pith/blob"
	"pith/meta"
)

var errClosed = errors.New("blob reader closed")

// reader reads a blob one chunk row at a time. Chunk i holds bytes
// [i*chunkSize, min((i+1)*chunkSize, size)), so a seek is arithmetic and a range read
// fetches only the chunks it covers.
type reader struct {
	ctx    context.Context // of Open: Read has none of its own
	db     *meta.DB
	sha256 string
	obj    object
	off    int64
	chunk  int64  // index of the chunk in data; -1 for none
	data   []byte // reused from chunk to chunk
	closed bool
}

func (r *reader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, errClosed
	}
	if r.off >= r.obj.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	i := r.off / r.obj.chunkSize
	if i != r.chunk {
		if err := r.load(i); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.data[r.off-i*r.obj.chunkSize:])
	r.off += int64(n)
	return n, nil
}

// load fetches chunk i into r.data and checks its length.
func (r *reader) load(i int64) error {
	r.chunk = -1
	rows, err := r.db.Query(r.ctx, `SELECT data FROM blob_chunks WHERE data_id = ? AND idx = ?`, r.obj.dataID, i)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return fmt.Errorf("blob %s chunk %d: %w (deleted while read?)", r.sha256, i, blob.ErrNotFound)
	}
	var raw sql.RawBytes // valid until Close: copied into the reused buffer
	if err := rows.Scan(&raw); err != nil {
		return err
	}
	if want := min(r.obj.chunkSize, r.obj.size-i*r.obj.chunkSize); int64(len(raw)) != want {
		return fmt.Errorf("blob %s chunk %d: corrupt: %d bytes, want %d", r.sha256, i, len(raw), want)
	}
	r.data = append(r.data[:0], raw...)
	r.chunk = i
	return nil
}

func (r *reader) Seek(offset int64, whence int) (int64, error) {
	if r.closed {
		return 0, errClosed
	}
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.off + offset
	case io.SeekEnd:
		abs = r.obj.size + offset
	default:
		return 0, fmt.Errorf("blob %s: seek: invalid whence %d", r.sha256, whence)
	}
	if abs < 0 {
		return 0, fmt.Errorf("blob %s: seek to negative position %d", r.sha256, abs)
	}
	r.off = abs
	return abs, nil
}

// Close releases the chunk buffer; the reader holds no database resources between reads.
func (r *reader) Close() error {
	if r.closed {
		return errClosed
	}
	r.closed, r.data = true, nil
	return nil
}
