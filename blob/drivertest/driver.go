package drivertest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/blob"
)

// runDriver checks the Driver contract, without a Store in between.
func runDriver(t *testing.T, newDriver func(t *testing.T) blob.Driver) {
	t.Run("Driver", func(t *testing.T) {
		t.Parallel()

		t.Run("CommitOpenReadSeekStat", func(t *testing.T) {
			t.Parallel()
			d := newDriver(t)
			if d.Name() == "" {
				t.Error("Name() is empty")
			}
			data := []byte("hello, blob\n")
			sha := commit(t, d, data, 5)
			if got := readAll(t, d, sha); !bytes.Equal(got, data) {
				t.Errorf("read back %q, want %q", got, data)
			}
			r, err := d.Open(t.Context(), sha)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for _, c := range []struct {
				off    int64
				whence int
				n      int
				want   string
			}{
				{7, io.SeekStart, 4, "blob"},
				{-5, io.SeekEnd, 4, "blob"},
				{-10, io.SeekCurrent, 5, "ello,"},
				{0, io.SeekStart, 5, "hello"},
			} {
				got, err := seekRead(r, c.off, c.whence, c.n)
				if err != nil || got != c.want {
					t.Errorf("seek(%d, %d) then read %d: %q, %v; want %q", c.off, c.whence, c.n, got, err, c.want)
				}
			}
			info, err := d.Stat(t.Context(), sha)
			if err != nil {
				t.Fatal(err)
			}
			if info.Size != int64(len(data)) || info.ModTime.IsZero() {
				t.Errorf("stat: %+v, want size %d and a modification time", info, len(data))
			}
		})

		t.Run("NothingVisibleBeforeCommit", func(t *testing.T) {
			t.Parallel()
			d := newDriver(t)
			data := []byte("not yet")
			sha := sum256(data)
			tmp, err := d.Create(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tmp.Write(data); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Stat(t.Context(), sha); !isNotFound(err) {
				t.Errorf("stat before commit: %v, want ErrNotFound", err)
			}
			if _, err := d.Open(t.Context(), sha); !isNotFound(err) {
				t.Errorf("open before commit: %v, want ErrNotFound", err)
			}
			if got := walk(t, d); len(got) != 0 {
				t.Errorf("walk before commit: %v", got)
			}
			if err := tmp.Commit(t.Context(), sha); err != nil {
				t.Fatal(err)
			}
			if err := tmp.Cancel(t.Context()); err != nil {
				t.Errorf("cancel after commit: %v, want nil", err)
			}
			if got := readAll(t, d, sha); !bytes.Equal(got, data) {
				t.Errorf("after commit and cancel: %q", got)
			}
		})

		t.Run("CancelLeavesNothing", func(t *testing.T) {
			t.Parallel()
			d := newDriver(t)
			data := []byte("cancelled")
			tmp, err := d.Create(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			tmp.Write(data)
			if err := tmp.Cancel(t.Context()); err != nil {
				t.Fatalf("cancel: %v", err)
			}
			if err := tmp.Cancel(t.Context()); err != nil {
				t.Errorf("second cancel: %v, want nil", err)
			}
			if _, err := tmp.Write(data); err == nil {
				t.Error("write after cancel succeeded")
			}
			if err := tmp.Commit(t.Context(), sum256(data)); err == nil {
				t.Error("commit after cancel succeeded")
			}
			if _, err := d.Stat(t.Context(), sum256(data)); !isNotFound(err) {
				t.Errorf("stat after cancel: %v, want ErrNotFound", err)
			}
			if got := walk(t, d); len(got) != 0 {
				t.Errorf("walk after cancel: %v", got)
			}
		})

		t.Run("Dedup", func(t *testing.T) {
			t.Parallel()
			d := newDriver(t)
			data := bytes.Repeat([]byte("same"), 1000)
			a := commit(t, d, data, 777)
			b := commit(t, d, data, 4000)
			if a != b {
				t.Fatalf("digests %s and %s", a, b)
			}
			if got, want := walk(t, d), []string{a}; !cmp.Equal(got, want) {
				t.Errorf("walk after storing identical content twice (-got +want):\n%s", cmp.Diff(got, want))
			}
			if got := readAll(t, d, a); !bytes.Equal(got, data) {
				t.Error("content changed by the second commit")
			}
		})

		t.Run("ConcurrentCommitsOfSameContent", func(t *testing.T) {
			t.Parallel()
			d := newDriver(t)
			data := bytes.Repeat([]byte("race"), 8192)
			sha := sum256(data)
			temps := make([]blob.Temp, 8)
			for i := range temps {
				tmp, err := d.Create(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				tmp.Write(data)
				temps[i] = tmp
			}
			var wg sync.WaitGroup
			errs := make([]error, len(temps))
			for i, tmp := range temps {
				wg.Go(func() { errs[i] = tmp.Commit(t.Context(), sha) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			if got := walk(t, d); !cmp.Equal(got, []string{sha}) {
				t.Errorf("walk: %v, want only %s", got, sha)
			}
			if got := readAll(t, d, sha); !bytes.Equal(got, data) {
				t.Error("content differs after concurrent commits")
			}
		})

		t.Run("WalkVisitsCommittedOnly", func(t *testing.T) {
			t.Parallel()
			d := newDriver(t)
			sizes := map[string]int64{}
			for i := range 5 {
				data := []byte(fmt.Sprintf("blob %d%s", i, bytes.Repeat([]byte("x"), i*100)))
				sha := commit(t, d, data, 64)
				sizes[sha] = int64(len(data))
			}
			open, err := d.Create(t.Context()) // an unfinished write must not show
			if err != nil {
				t.Fatal(err)
			}
			defer open.Cancel(t.Context())
			open.Write([]byte("unfinished"))
			got := map[string]int64{}
			err = d.Walk(t.Context(), func(sha string, info blob.Info) error {
				got[sha] = info.Size
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sizes, got); diff != "" {
				t.Errorf("walk (-want +got):\n%s", diff)
			}
			stop := errors.New("stop here")
			n := 0
			err = d.Walk(t.Context(), func(string, blob.Info) error { n++; return stop })
			if !errors.Is(err, stop) || n != 1 {
				t.Errorf("walk whose callback fails: %v after %d calls, want %v after 1", err, n, stop)
			}
		})

		t.Run("WalkMayDelete", func(t *testing.T) {
			t.Parallel()
			d := newDriver(t)
			for i := range 4 {
				commit(t, d, []byte{byte(i)}, 1)
			}
			err := d.Walk(t.Context(), func(sha string, _ blob.Info) error { return d.Delete(t.Context(), sha) })
			if err != nil {
				t.Fatal(err)
			}
			if got := walk(t, d); len(got) != 0 {
				t.Errorf("left after deleting during a walk: %v", got)
			}
		})

		t.Run("DeleteAndNotFound", func(t *testing.T) {
			t.Parallel()
			d := newDriver(t)
			sha := commit(t, d, []byte("short-lived"), 4)
			if err := d.Delete(t.Context(), sha); err != nil {
				t.Fatalf("delete: %v", err)
			}
			never := sum256([]byte("never written"))
			for _, s := range []string{sha, never} {
				_, errOpen := d.Open(t.Context(), s)
				_, errStat := d.Stat(t.Context(), s)
				errDelete := d.Delete(t.Context(), s)
				for op, err := range map[string]error{"open": errOpen, "stat": errStat, "delete": errDelete} {
					if !isNotFound(err) {
						t.Errorf("%s %s: %v, want ErrNotFound", op, s, err)
					}
				}
			}
			if got := walk(t, d); len(got) != 0 {
				t.Errorf("walk after delete: %v", got)
			}
		})

		t.Run("InvalidDigests", func(t *testing.T) {
			t.Parallel()
			d := newDriver(t)
			for _, bad := range badDigests {
				_, errOpen := d.Open(t.Context(), bad)
				_, errStat := d.Stat(t.Context(), bad)
				errDelete := d.Delete(t.Context(), bad)
				tmp, err := d.Create(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				tmp.Write([]byte("x"))
				errCommit := tmp.Commit(t.Context(), bad)
				tmp.Cancel(t.Context())
				for op, err := range map[string]error{"open": errOpen, "stat": errStat, "delete": errDelete, "commit": errCommit} {
					if !isInvalid(err) {
						t.Errorf("%s %q: %v, want ErrInvalidDigest", op, bad, err)
					}
				}
			}
			if got := walk(t, d); len(got) != 0 {
				t.Errorf("walk after invalid commits: %v", got)
			}
		})

		t.Run("EmptyBlob", func(t *testing.T) {
			t.Parallel()
			d := newDriver(t)
			sha := commit(t, d, nil, 1)
			if got := readAll(t, d, sha); len(got) != 0 {
				t.Errorf("read %d bytes from the empty blob", len(got))
			}
			if info, err := d.Stat(t.Context(), sha); err != nil || info.Size != 0 {
				t.Errorf("stat empty blob: %+v, %v", info, err)
			}
		})
	})
}
