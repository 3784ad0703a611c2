// Package drivertest is the conformance suite every blob driver passes: a driver joins
// by calling Run from its own test.
package drivertest

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"pith/blob"
)

func hexsum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// Run runs the suite against drivers made by newDriver (one per subtest).
func Run(t *testing.T, newDriver func(t *testing.T) blob.Driver) {
	ctx := context.Background()
	store := func(t *testing.T, allowed ...string) *blob.Store {
		s, err := blob.New(newDriver(t), allowed)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	read := func(t *testing.T, s *blob.Store, d string) []byte {
		t.Helper()
		r, err := s.Open(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Run("PutOpenSeekStat", func(t *testing.T) {
		s := store(t)
		data := []byte("hello, blob\n")
		d, err := s.Put(ctx, bytes.NewReader(data), blob.Expect{Size: int64(len(data)), SHA256: hexsum(data)})
		if err != nil {
			t.Fatal(err)
		}
		if got := read(t, s, d.SHA256); !bytes.Equal(got, data) {
			t.Fatalf("read %q", got)
		}
		r, _ := s.Open(ctx, d.SHA256)
		r.Seek(7, io.SeekStart)
		rest, _ := io.ReadAll(r)
		r.Close()
		if string(rest) != "blob\n" {
			t.Errorf("after seek: %q", rest)
		}
		if i, err := s.Stat(ctx, d.SHA256); err != nil || i.Size != int64(len(data)) {
			t.Errorf("stat: %+v %v", i, err)
		}
	})
	t.Run("AllDigests", func(t *testing.T) {
		s := store(t, "md5", "sha1", "sha224", "sha256", "sha384", "sha512")
		data := bytes.Repeat([]byte("pith"), 1000)
		d, err := s.Put(ctx, bytes.NewReader(data), blob.Expect{Size: -1})
		if err != nil {
			t.Fatal(err)
		}
		m, s1, s224, s384, s512 := md5.Sum(data), sha1.Sum(data), sha256.Sum224(data), sha512.Sum384(data), sha512.Sum512(data)
		want := blob.Digests{Size: int64(len(data)), MD5: hex.EncodeToString(m[:]), SHA1: hex.EncodeToString(s1[:]), SHA224: hex.EncodeToString(s224[:]),
			SHA256: hexsum(data), SHA384: hex.EncodeToString(s384[:]), SHA512: hex.EncodeToString(s512[:])}
		if d != want {
			t.Errorf("digests\n got %+v\nwant %+v", d, want)
		}
		// Pulp's default set leaves md5 and sha1 out.
		d, _ = store(t).Put(ctx, bytes.NewReader(data), blob.Expect{Size: -1})
		if d.MD5 != "" || d.SHA1 != "" || d.SHA512 == "" {
			t.Errorf("default digests: %+v", d)
		}
		if _, err := blob.New(newDriver(t), []string{"crc32"}); err == nil {
			t.Error("unknown checksum accepted")
		}
	})
	t.Run("MismatchCommitsNothing", func(t *testing.T) {
		s := store(t)
		data := []byte("some bytes")
		for _, want := range []blob.Expect{
			{Size: -1, SHA256: hexsum([]byte("other"))},
			{Size: 3},
			{Size: -1, Digests: map[string]string{"sha512": "00"}},
		} {
			_, err := s.Put(ctx, bytes.NewReader(data), want)
			var me *blob.MismatchError
			if !errors.As(err, &me) {
				t.Errorf("expect %+v: error %v, want *MismatchError", want, err)
			}
		}
		n := 0
		s.Walk(ctx, func(string, blob.Info) error { n++; return nil })
		if n != 0 {
			t.Errorf("%d blobs stored after mismatches", n)
		}
		if _, err := s.Stat(ctx, hexsum(data)); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("stat after mismatch: %v", err)
		}
	})
	t.Run("NothingVisibleBeforeCommit", func(t *testing.T) {
		s := store(t)
		data := []byte("not yet")
		w, err := s.NewWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		if _, err := s.Stat(ctx, hexsum(data)); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("visible before commit: %v", err)
		}
		w.Cancel(ctx)
		if _, err := w.Commit(ctx, blob.Expect{Size: -1}); err == nil {
			t.Error("commit after cancel succeeded")
		}
		if _, err := s.Stat(ctx, hexsum(data)); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("visible after cancel: %v", err)
		}
	})
	t.Run("DedupAndConcurrentWriters", func(t *testing.T) {
		s := store(t)
		data := bytes.Repeat([]byte("same"), 4096)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Put(ctx, bytes.NewReader(data), blob.Expect{Size: int64(len(data)), SHA256: hexsum(data)})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		n := 0
		s.Walk(ctx, func(d string, i blob.Info) error {
			n++
			if d != hexsum(data) || i.Size != int64(len(data)) {
				t.Errorf("walk: %s %+v", d, i)
			}
			return nil
		})
		if n != 1 {
			t.Errorf("%d blobs for identical content, want 1", n)
		}
	})
	t.Run("LargeStreamedInSmallWrites", func(t *testing.T) {
		s := store(t)
		w, _ := s.NewWriter(ctx)
		h := sha256.New()
		chunk := make([]byte, 1000)
		for i := 0; i < 5000; i++ {
			chunk[0] = byte(i)
			w.Write(chunk)
			h.Write(chunk)
		}
		d, err := w.Commit(ctx, blob.Expect{Size: 5_000_000, SHA256: hex.EncodeToString(h.Sum(nil))})
		if err != nil {
			t.Fatal(err)
		}
		if i, _ := s.Stat(ctx, d.SHA256); i.Size != 5_000_000 {
			t.Errorf("size %d", i.Size)
		}
	})
	t.Run("EmptyBlob", func(t *testing.T) {
		s := store(t)
		d, err := s.Put(ctx, bytes.NewReader(nil), blob.Expect{Size: 0})
		if err != nil || d.Size != 0 {
			t.Fatalf("%+v %v", d, err)
		}
		if got := read(t, s, d.SHA256); len(got) != 0 {
			t.Errorf("read %d bytes", len(got))
		}
	})
	t.Run("DeleteAndNotFound", func(t *testing.T) {
		s := store(t)
		d, _ := s.Put(ctx, bytes.NewReader([]byte("x")), blob.Expect{Size: -1})
		if err := s.Delete(ctx, d.SHA256); err != nil {
			t.Fatal(err)
		}
		for name, err := range map[string]error{
			"open":   func() error { _, err := s.Open(ctx, d.SHA256); return err }(),
			"stat":   func() error { _, err := s.Stat(ctx, d.SHA256); return err }(),
			"delete": s.Delete(ctx, d.SHA256),
		} {
			if !errors.Is(err, blob.ErrNotFound) {
				t.Errorf("%s of a deleted blob: %v, want ErrNotFound", name, err)
			}
		}
	})
	t.Run("InvalidDigests", func(t *testing.T) {
		s := store(t)
		for _, d := range []string{"", "../../etc/passwd", "ABCDEF" + hexsum(nil)[6:], hexsum(nil)[:63]} {
			if _, err := s.Open(ctx, d); err == nil || errors.Is(err, blob.ErrNotFound) {
				t.Errorf("open %q: %v, want an invalid-digest error", d, err)
			}
			if err := s.Delete(ctx, d); err == nil {
				t.Errorf("delete %q accepted", d)
			}
		}
	})
}

// Bench measures storing a blob of size bytes.
func Bench(b *testing.B, d blob.Driver, size int) {
	s, _ := blob.New(d, nil)
	data := make([]byte, size)
	b.SetBytes(int64(size))
	for i := 0; b.Loop(); i++ {
		copy(data, fmt.Sprint(i))
		if _, err := s.Put(context.Background(), bytes.NewReader(data), blob.Expect{Size: int64(size)}); err != nil {
			b.Fatal(err)
		}
	}
}
