package drivertest

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"io"
	"sort"
	"strings"
	"testing"

	"pith/blob"
)

// Run runs the conformance suite; newDriver makes a fresh, empty driver for each subtest.
func Run(t *testing.T, newDriver func(t *testing.T) blob.Driver) {
	t.Helper()
	runDriver(t, newDriver)
	runStore(t, newDriver)
	runParts(t, newDriver)
	runSweepKeeps(t, newDriver)
}

// Bench measures storing distinct blobs of size bytes through a Store over d; each blob
// is deleted again so the benchmark does not fill the disk.
func Bench(b *testing.B, d blob.Driver, size int) {
	ctx := b.Context()
	s, err := blob.New(d, nil)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var i uint64
	for b.Loop() {
		i++
		for j := range 8 { // distinct content, so no iteration is a dedup shortcut
			data[j] = byte(i >> (8 * j))
		}
		dg, err := s.Put(ctx, bytes.NewReader(data), blob.Expect{Size: int64(size)})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Delete(ctx, dg.SHA256); err != nil {
			b.Fatal(err)
		}
	}
}

func sum256(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// allDigests computes every checksum of data with crypto/*, independently of package blob.
func allDigests(data []byte) blob.Digests {
	m, s1, s224, s384, s512 := md5.Sum(data), sha1.Sum(data), sha256.Sum224(data), sha512.Sum384(data), sha512.Sum512(data)
	return blob.Digests{
		Size:   int64(len(data)),
		MD5:    hex.EncodeToString(m[:]),
		SHA1:   hex.EncodeToString(s1[:]),
		SHA224: hex.EncodeToString(s224[:]),
		SHA256: sum256(data),
		SHA384: hex.EncodeToString(s384[:]),
		SHA512: hex.EncodeToString(s512[:]),
	}
}

// badDigests are strings no entry point may accept, path traversal among them.
var badDigests = []string{
	"",
	"abc",
	"../../etc/passwd",
	strings.Repeat("../", 21) + "x",          // 64 characters
	"ab/" + strings.Repeat("c", 61),          // 64 characters, a separator inside
	strings.ToUpper(sum256([]byte("upper"))), // upper-case hex
	sum256([]byte("short"))[:63],             // one digit short
	sum256([]byte("long")) + "0",             // one digit long
	strings.Repeat("g", 64),                  // not hex
	sum256([]byte("nul"))[:63] + "\x00",      // a NUL byte
}

// commit writes data to a new temporary in chunks of at most chunk bytes and commits it.
func commit(t *testing.T, d blob.Driver, data []byte, chunk int) string {
	t.Helper()
	ctx := t.Context()
	tmp, err := d.Create(ctx)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	for p := data; len(p) > 0; {
		n := min(chunk, len(p))
		if _, err := tmp.Write(p[:n]); err != nil {
			t.Fatalf("write: %v", err)
		}
		p = p[n:]
	}
	sha := sum256(data)
	if err := tmp.Commit(ctx, sha); err != nil {
		t.Fatalf("commit %s: %v", sha, err)
	}
	return sha
}

// readAll opens a blob through the driver and reads it whole.
func readAll(t *testing.T, d blob.Driver, sha string) []byte {
	t.Helper()
	r, err := d.Open(t.Context(), sha)
	if err != nil {
		t.Fatalf("open %s: %v", sha, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", sha, err)
	}
	return b
}

// walk lists the committed digests and their sizes, sorted.
func walk(t *testing.T, d blob.Driver) []string {
	t.Helper()
	var got []string
	err := d.Walk(t.Context(), func(sha string, info blob.Info) error {
		got = append(got, sha)
		return nil
	})
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	sort.Strings(got)
	return got
}

// seekRead seeks r and reads n bytes.
func seekRead(r io.ReadSeeker, off int64, whence, n int) (string, error) {
	if _, err := r.Seek(off, whence); err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return string(b), err
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, blob.ErrNotFound) }

func isInvalid(err error) bool {
	return err != nil && errors.Is(err, blob.ErrInvalidDigest) && !errors.Is(err, blob.ErrNotFound)
}
