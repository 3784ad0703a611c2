package sqlblob

import (
	"context"
	"errors"
	"time"

	"pith/blob"
	"pith/meta"
)

// cleanupTimeout bounds the removal of an upload's rows once its writer has given up.
const cleanupTimeout = time.Minute

var (
	errFinished  = errors.New("temporary already committed or cancelled")
	errReclaimed = errors.New("temporary upload was removed by SweepTemp before commit")
)

// temp is an upload: full chunks are rows under the upload's id, the last partial chunk
// stays in buf until Commit.
type temp struct {
	d    *Driver
	ctx  context.Context // of Create: Write has none of its own
	id   int64           // upload id, and the data id of the chunks
	buf  []byte          // the chunk being filled; cap ChunkSize once used
	idx  int64           // index of the next chunk row
	size int64
	err  error // sticky: a temporary that lost a chunk is never committed
	done bool
}

func (t *temp) Write(p []byte) (int, error) {
	if t.done {
		return 0, errFinished
	}
	if t.err != nil {
		return 0, t.err
	}
	n := 0
	for len(p) > 0 {
		if len(t.buf) == 0 && len(p) >= ChunkSize { // a whole chunk: no need to copy it
			if err := t.flush(t.ctx, p[:ChunkSize]); err != nil {
				return n, err
			}
			p, n = p[ChunkSize:], n+ChunkSize
			continue
		}
		if t.buf == nil {
			t.buf = make([]byte, 0, ChunkSize)
		}
		k := copy(t.buf[len(t.buf):cap(t.buf)], p)
		t.buf = t.buf[:len(t.buf)+k]
		p, n = p[k:], n+k
		if len(t.buf) == ChunkSize {
			if err := t.flush(t.ctx, t.buf); err != nil {
				return n, err
			}
			t.buf = t.buf[:0]
		}
	}
	return n, nil
}

// flush stores chunk as the next row of the upload.
func (t *temp) flush(ctx context.Context, chunk []byte) error {
	_, err := t.d.db.Exec(ctx, `INSERT INTO blob_chunks (data_id, idx, data) VALUES (?, ?, ?)`, t.id, t.idx, chunk)
	if err != nil {
		t.err = full(err)
		return t.err
	}
	t.idx++
	t.size += int64(len(chunk))
	return nil
}

// Commit flushes the last chunk and, in one transaction, records the blob under sha256
// with the upload's chunks as its data and ends the upload. If the blob exists already
// the upload is discarded. On error the upload is discarded too.
func (t *temp) Commit(ctx context.Context, sha256 string) error {
	if t.done {
		return errFinished
	}
	fail := func(err error) error {
		t.Cancel(ctx)
		return full(err)
	}
	if err := blob.CheckDigest(sha256); err != nil {
		return fail(err)
	}
	if t.err != nil {
		return fail(t.err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if len(t.buf) > 0 {
		if err := t.flush(ctx, t.buf); err != nil {
			return fail(err)
		}
	}
	var stored bool
	err := t.d.db.Tx(ctx, func(tx *meta.Tx) error {
		stored = false // the transaction may be retried
		res, err := tx.Exec(ctx, `INSERT INTO blob_objects (sha256, size, chunk_size, data_id, created)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING`,
			sha256, t.size, ChunkSize, t.id, meta.Now())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // n == 0: stored already, the upload goes below
		}
		res, err = tx.Exec(ctx, `DELETE FROM blob_uploads WHERE id = ?`, t.id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = errReclaimed
			}
			return err
		}
		stored = true
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if !stored {
		// Identical content is stored already. Should the discard fail, the upload is left
		// for SweepTemp: the blob itself is safe.
		t.Cancel(ctx)
		return nil
	}
	t.done, t.buf = true, nil
	return nil
}

// Cancel deletes the upload's rows; it does nothing after Commit or Cancel. The rows go
// even if ctx has ended (within cleanupTimeout), so an abandoned write leaves nothing.
func (t *temp) Cancel(ctx context.Context) error {
	if t.done {
		return nil
	}
	t.done, t.buf = true, nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	return t.d.discard(ctx, t.id)
}
