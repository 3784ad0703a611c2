package drivertest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/blob"
)

var allChecksums = []string{"md5", "sha1", "sha224", "sha256", "sha384", "sha512"}

// runStore checks a Store over the driver: hashing, verification, writer lifecycle.
func runStore(t *testing.T, newDriver func(t *testing.T) blob.Driver) {
	newStore := func(t *testing.T, allowed ...string) (*blob.Store, blob.Driver) {
		t.Helper()
		d := newDriver(t)
		s, err := blob.New(d, allowed)
		if err != nil {
			t.Fatal(err)
		}
		return s, d
	}

	t.Run("Store", func(t *testing.T) {
		t.Parallel()

		t.Run("Digests", func(t *testing.T) {
			t.Parallel()
			data := bytes.Repeat([]byte("pith\n"), 1000)
			all := allDigests(data)
			pulpDefault := all
			pulpDefault.MD5, pulpDefault.SHA1 = "", ""
			onlySHA256 := blob.Digests{Size: all.Size, SHA256: all.SHA256}
			for _, c := range []struct {
				name    string
				allowed []string
				want    blob.Digests
			}{
				{"all", allChecksums, all},
				{"pulp default", nil, pulpDefault},
				{"sha256 implied", []string{"sha512"}, blob.Digests{Size: all.Size, SHA256: all.SHA256, SHA512: all.SHA512}},
				{"sha256 only", []string{"sha256"}, onlySHA256},
			} {
				s, _ := newStore(t, c.allowed...)
				got, err := s.Put(t.Context(), bytes.NewReader(data), blob.Expect{Size: int64(len(data)), SHA256: all.SHA256})
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if diff := cmp.Diff(c.want, got); diff != "" {
					t.Errorf("%s: digests (-want +got):\n%s", c.name, diff)
				}
				if got := readAll(t, s.Driver(), got.SHA256); !bytes.Equal(got, data) {
					t.Errorf("%s: content differs", c.name)
				}
			}
		})

		t.Run("New", func(t *testing.T) {
			t.Parallel()
			d := newDriver(t)
			if _, err := blob.New(d, []string{"sha256", "crc32"}); err == nil || !strings.Contains(err.Error(), `"crc32"`) {
				t.Errorf("unknown checksum: %v, want an error naming \"crc32\"", err)
			}
			if _, err := blob.New(nil, nil); err == nil {
				t.Error("nil driver accepted")
			}
			s, err := blob.New(d, []string{" SHA512", "md5", ""})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"md5", "sha256", "sha512"}, s.Allowed()); diff != "" {
				t.Errorf("allowed (-want +got):\n%s", diff)
			}
			if s.Driver() != d {
				t.Error("Driver() is not the driver given to New")
			}
		})

		t.Run("MismatchCommitsNothing", func(t *testing.T) {
			t.Parallel()
			s, d := newStore(t, allChecksums...)
			data := []byte("some bytes")
			dg := allDigests(data)
			other := allDigests([]byte("other"))
			for _, c := range []struct {
				name string
				want blob.Expect
				what string // "" for an error that is not a *MismatchError
			}{
				{"sha256", blob.Expect{Size: -1, SHA256: other.SHA256}, "sha256"},
				{"size smaller", blob.Expect{Size: 3, SHA256: dg.SHA256}, "size"},
				{"size larger", blob.Expect{Size: 11}, "size"},
				{"empty expected", blob.Expect{Size: 0}, "size"},
				{"sha512", blob.Expect{Size: -1, Digests: map[string]string{"sha512": other.SHA512}}, "sha512"},
				{"md5", blob.Expect{Size: -1, Digests: map[string]string{"md5": other.MD5, "sha1": dg.SHA1}}, "md5"},
				{"sha256 in map", blob.Expect{Size: -1, Digests: map[string]string{"sha256": other.SHA256}}, "sha256"},
				{"unknown checksum", blob.Expect{Size: -1, Digests: map[string]string{"crc32": "00"}}, ""},
			} {
				_, err := s.Put(t.Context(), bytes.NewReader(data), c.want)
				var me *blob.MismatchError
				switch {
				case err == nil:
					t.Errorf("%s: committed", c.name)
				case c.what == "" && errors.As(err, &me):
					t.Errorf("%s: %v is a *MismatchError", c.name, err)
				case c.what != "" && !errors.As(err, &me):
					t.Errorf("%s: %v, want a *MismatchError", c.name, err)
				case c.what != "" && me.What != c.what:
					t.Errorf("%s: mismatch of %q, want %q", c.name, me.What, c.what)
				case c.what != "" && !strings.HasPrefix(err.Error(), c.what+" mismatch: expected "):
					t.Errorf("%s: message %q", c.name, err)
				}
			}
			if got := walk(t, d); len(got) != 0 {
				t.Errorf("stored after mismatches: %v", got)
			}
			if _, err := s.Stat(t.Context(), dg.SHA256); !isNotFound(err) {
				t.Errorf("stat after mismatches: %v, want ErrNotFound", err)
			}
			// Expected hex is compared without regard to case.
			got, err := s.Put(t.Context(), bytes.NewReader(data), blob.Expect{Size: 10, SHA256: strings.ToUpper(dg.SHA256),
				Digests: map[string]string{"md5": strings.ToUpper(dg.MD5), "sha512": dg.SHA512}})
			if err != nil || got != dg {
				t.Errorf("put with matching expectations: %+v, %v", got, err)
			}
		})

		t.Run("WriterLifecycle", func(t *testing.T) {
			t.Parallel()
			s, d := newStore(t)
			data := []byte("written in two parts")
			w, err := s.NewWriter(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer w.Cancel(t.Context())
			w.Write(data[:7])
			w.Write(data[7:])
			if w.Written() != int64(len(data)) {
				t.Errorf("Written() = %d, want %d", w.Written(), len(data))
			}
			if _, err := s.Stat(t.Context(), sum256(data)); !isNotFound(err) {
				t.Errorf("stat before commit: %v, want ErrNotFound", err)
			}
			dg, err := w.Commit(t.Context(), blob.Expect{Size: -1})
			if err != nil || dg.SHA256 != sum256(data) {
				t.Fatalf("commit: %+v, %v", dg, err)
			}
			if _, err := w.Commit(t.Context(), blob.Expect{Size: -1}); err == nil {
				t.Error("second commit succeeded")
			}
			if _, err := w.Write(data); err == nil {
				t.Error("write after commit succeeded")
			}
			if err := w.Cancel(t.Context()); err != nil {
				t.Errorf("cancel after commit: %v", err)
			}
			if got := readAll(t, d, dg.SHA256); !bytes.Equal(got, data) {
				t.Errorf("read %q", got)
			}

			w2, err := s.NewWriter(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			w2.Write([]byte("abandoned"))
			if err := w2.Cancel(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := w2.Commit(t.Context(), blob.Expect{Size: -1}); err == nil {
				t.Error("commit after cancel succeeded")
			}
			if got := walk(t, d); !cmp.Equal(got, []string{dg.SHA256}) {
				t.Errorf("walk: %v, want only %s", got, dg.SHA256)
			}
		})

		t.Run("ConcurrentWritersOfSameContent", func(t *testing.T) {
			t.Parallel()
			s, d := newStore(t)
			data := bytes.Repeat([]byte("same"), 16384)
			want := allDigests(data)
			want.MD5, want.SHA1 = "", ""
			results := make([]blob.Digests, 8)
			errs := make([]error, len(results))
			var wg sync.WaitGroup
			for i := range results {
				wg.Go(func() {
					results[i], errs[i] = s.Put(t.Context(), bytes.NewReader(data), blob.Expect{Size: want.Size, SHA256: want.SHA256})
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			for _, got := range results {
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("digests (-want +got):\n%s", diff)
				}
			}
			if got := walk(t, d); !cmp.Equal(got, []string{want.SHA256}) {
				t.Errorf("walk: %v, want only %s", got, want.SHA256)
			}
			if got := readAll(t, d, want.SHA256); !bytes.Equal(got, data) {
				t.Error("content differs")
			}
		})

		t.Run("LargeBlobInSmallWrites", func(t *testing.T) {
			t.Parallel()
			s, _ := newStore(t)
			const size = 4<<20 + 3
			w, err := s.NewWriter(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer w.Cancel(t.Context())
			h := sha256.New()
			chunk := make([]byte, 4093) // odd-sized writes cross every block boundary
			for written := 0; written < size; {
				n := min(len(chunk), size-written)
				for i := range chunk[:n] {
					chunk[i] = byte(written + i*7)
				}
				if _, err := w.Write(chunk[:n]); err != nil {
					t.Fatal(err)
				}
				h.Write(chunk[:n])
				written += n
			}
			want := hex.EncodeToString(h.Sum(nil))
			dg, err := w.Commit(t.Context(), blob.Expect{Size: size, SHA256: want})
			if err != nil {
				t.Fatal(err)
			}
			info, err := s.Stat(t.Context(), dg.SHA256)
			if err != nil || info.Size != size {
				t.Errorf("stat: %+v, %v; want size %d", info, err, size)
			}
			r, err := s.Open(t.Context(), dg.SHA256)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rh := sha256.New()
			if n, err := io.CopyBuffer(rh, r, make([]byte, 1000)); err != nil || n != size {
				t.Fatalf("read back %d bytes, %v", n, err)
			}
			if got := hex.EncodeToString(rh.Sum(nil)); got != want {
				t.Errorf("read back sha256 %s, want %s", got, want)
			}
		})

		t.Run("EmptyBlob", func(t *testing.T) {
			t.Parallel()
			s, d := newStore(t, allChecksums...)
			got, err := s.Put(t.Context(), bytes.NewReader(nil), blob.Expect{Size: 0, SHA256: sum256(nil)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(allDigests(nil), got); diff != "" {
				t.Errorf("digests of the empty blob (-want +got):\n%s", diff)
			}
			if b := readAll(t, d, got.SHA256); len(b) != 0 {
				t.Errorf("read %d bytes", len(b))
			}
		})

		t.Run("ErrorsNameDriverAndDigest", func(t *testing.T) {
			t.Parallel()
			s, d := newStore(t)
			missing := sum256([]byte("missing"))
			_, errOpen := s.Open(t.Context(), missing)
			_, errStat := s.Stat(t.Context(), missing)
			errDelete := s.Delete(t.Context(), missing)
			for op, err := range map[string]error{"open": errOpen, "stat": errStat, "delete": errDelete} {
				var de *blob.DriverError
				if !isNotFound(err) || !errors.As(err, &de) {
					t.Errorf("%s: %v, want a *DriverError matching ErrNotFound", op, err)
					continue
				}
				if de.Driver != d.Name() || de.Op != op || de.Digest != missing {
					t.Errorf("%s: %+v", op, de)
				}
				if msg := err.Error(); !strings.Contains(msg, d.Name()) || !strings.Contains(msg, missing) {
					t.Errorf("%s: message %q names neither driver nor digest", op, msg)
				}
			}
			for _, bad := range badDigests {
				_, errOpen := s.Open(t.Context(), bad)
				_, errStat := s.Stat(t.Context(), bad)
				errDelete := s.Delete(t.Context(), bad)
				for op, err := range map[string]error{"open": errOpen, "stat": errStat, "delete": errDelete} {
					if !isInvalid(err) {
						t.Errorf("%s %q: %v, want ErrInvalidDigest", op, bad, err)
					}
				}
			}
			stop := errors.New("stop")
			if _, err := s.Put(t.Context(), strings.NewReader("x"), blob.Expect{Size: -1}); err != nil {
				t.Fatal(err)
			}
			if err := s.Walk(t.Context(), func(string, blob.Info) error { return stop }); err != stop {
				t.Errorf("walk: %v, want the callback's error as is", err)
			}
		})

		t.Run("FailedSourceCommitsNothing", func(t *testing.T) {
			t.Parallel()
			s, d := newStore(t)
			boom := errors.New("connection reset")
			src := io.MultiReader(strings.NewReader("partial"), errReader{boom})
			if _, err := s.Put(t.Context(), src, blob.Expect{Size: -1}); !errors.Is(err, boom) {
				t.Errorf("put from a failing reader: %v, want it to wrap %v", err, boom)
			}
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			if _, err := s.Put(ctx, strings.NewReader("late"), blob.Expect{Size: -1}); err == nil {
				t.Error("put with a cancelled context succeeded")
			}
			if got := walk(t, d); len(got) != 0 {
				t.Errorf("stored after failed puts: %v", got)
			}
		})
	})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
