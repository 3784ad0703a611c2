package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// ErrInvalidUpload means an upload name is not a short lower-case hex/dash identifier.
var ErrInvalidUpload = errors.New("invalid upload name")

// ErrNoStaging means the store's driver holds no parts of uploads (it is no Stager).
var ErrNoStaging = errors.New("the blob storage does not stage chunked uploads")

// stager is the store's driver as a Stager.
func (s *Store) stager() (Stager, error) {
	st, ok := s.driver.(Stager)
	if !ok {
		return nil, fmt.Errorf("driver %s: %w", s.driver.Name(), ErrNoStaging)
	}
	return st, nil
}

// checkUpload keeps upload names safe as path and key components.
func checkUpload(upload string) error {
	if upload == "" || len(upload) > 64 {
		return fmt.Errorf("%w: %q", ErrInvalidUpload, upload)
	}
	for i := 0; i < len(upload); i++ {
		if c := upload[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-') {
			return fmt.Errorf("%w: %q", ErrInvalidUpload, upload)
		}
	}
	return nil
}

// PutPart stores the size bytes r yields as the part of an upload in progress under key
// and returns their sha256. A source that yields fewer or more bytes stores nothing and
// gives a *MismatchError on "size".
func (s *Store) PutPart(ctx context.Context, upload string, key, size int64, r io.Reader) (string, error) {
	if err := checkUpload(upload); err != nil {
		return "", err
	}
	if key < 0 || size < 0 {
		return "", fmt.Errorf("blob put part: key %d, size %d: must not be negative", key, size)
	}
	st, err := s.stager()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	er := &exactReader{r: ctxReader{ctx, r}, left: size, h: h}
	if err := st.PutPart(ctx, upload, key, er, size); err != nil {
		if er.err != nil {
			return "", er.err
		}
		return "", s.fail("put part", "", err)
	}
	if er.left > 0 {
		return "", fmt.Errorf("blob put part: driver %s stored %d of %d bytes", s.driver.Name(), er.got, size)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// OpenPart reads the part of an upload in progress stored under key.
func (s *Store) OpenPart(ctx context.Context, upload string, key int64) (io.ReadCloser, error) {
	if err := checkUpload(upload); err != nil {
		return nil, err
	}
	st, err := s.stager()
	if err != nil {
		return nil, err
	}
	r, err := st.OpenPart(ctx, upload, key)
	if err != nil {
		return nil, s.fail("open part", "", err)
	}
	return r, nil
}

// DeleteParts removes the parts of an upload.
func (s *Store) DeleteParts(ctx context.Context, upload string) error {
	if err := checkUpload(upload); err != nil {
		return err
	}
	st, err := s.stager()
	if err != nil {
		return err
	}
	if err := st.DeleteParts(ctx, upload); err != nil {
		return s.fail("delete parts", "", err)
	}
	return nil
}

// exactReader yields exactly left bytes of r, hashing them, and fails the read that
// shows the source is shorter or longer.
type exactReader struct {
	r    io.Reader
	left int64
	h    io.Writer
	err  error
	got  int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.h.Write(p[:n])
	e.left -= int64(n)
	e.got += int64(n)
	switch {
	case err != nil && !errors.Is(err, io.EOF):
		e.err = err
	case e.left > 0 && err != nil:
		e.err = &MismatchError{What: "size", Want: fmt.Sprint(e.got + e.left), Got: fmt.Sprint(e.got)}
	case e.left == 0:
		// The last byte: the source must end here, checked before the driver sees the
		// end, so that a longer source stores nothing.
		var one [1]byte
		if k, perr := io.ReadFull(e.r, one[:]); k > 0 {
			e.err = &MismatchError{What: "size", Want: fmt.Sprint(e.got), Got: "more"}
		} else if !errors.Is(perr, io.EOF) {
			e.err = perr
		} else {
			return n, io.EOF
		}
	default:
		return n, nil
	}
	return n, e.err
}
