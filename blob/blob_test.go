package blob_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"pith/blob"
)

const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func TestCheckDigest(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in string
		ok bool
	}{
		{empty, true},
		{strings.Repeat("0", 64), true},
		{"", false},
		{strings.ToUpper(empty), false},
		{empty[:63], false},
		{empty + "0", false},
		{"../" + empty[3:], false},
		{strings.Repeat("é", 32), false},
		{strings.Repeat("x", 10000), false},
	} {
		err := blob.CheckDigest(c.in)
		if blob.ValidDigest(c.in) != c.ok || (err == nil) != c.ok {
			t.Errorf("%.20q: valid=%v err=%v, want valid=%v", c.in, blob.ValidDigest(c.in), err, c.ok)
		}
		if err != nil {
			if !errors.Is(err, blob.ErrInvalidDigest) {
				t.Errorf("%.20q: %v does not match ErrInvalidDigest", c.in, err)
			}
			if len(err.Error()) > 200 {
				t.Errorf("%.20q: message of %d bytes", c.in, len(err.Error()))
			}
		}
	}
	if err := blob.CheckDigest("../etc"); !strings.Contains(err.Error(), `"../etc"`) {
		t.Errorf("message %q does not name the value", err)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	me := &blob.MismatchError{What: "sha256", Want: "aa", Got: "bb"}
	if got, want := me.Error(), "sha256 mismatch: expected aa, got bb"; got != want {
		t.Errorf("MismatchError = %q, want %q", got, want)
	}
	for _, c := range []struct {
		err  *blob.DriverError
		want string
	}{
		{&blob.DriverError{Driver: "fs", Op: "open", Digest: empty, Err: blob.ErrNotFound}, "blob driver fs: open " + empty + ": blob not found"},
		{&blob.DriverError{Driver: "s3", Op: "create", Err: errors.New("denied")}, "blob driver s3: create: denied"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("DriverError = %q, want %q", got, c.want)
		}
	}
	wrapped := fmt.Errorf("serve: %w", &blob.DriverError{Driver: "fs", Op: "stat", Err: blob.ErrNotFound})
	var de *blob.DriverError
	if !errors.Is(wrapped, blob.ErrNotFound) || !errors.As(wrapped, &de) || de.Op != "stat" {
		t.Errorf("unwrapping %v failed", wrapped)
	}
}

func TestDigestsJSON(t *testing.T) {
	t.Parallel()
	d := blob.Digests{Size: 3, SHA256: "s256", SHA512: "s512"}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"size":3,"sha256":"s256","sha512":"s512"}`; got != want {
		t.Errorf("json = %s, want %s", got, want)
	}
	var back blob.Digests
	if err := json.Unmarshal([]byte(`{"size":1,"md5":"m","sha1":"1","sha224":"2","sha256":"3","sha384":"4","sha512":"5"}`), &back); err != nil {
		t.Fatal(err)
	}
	want := blob.Digests{Size: 1, MD5: "m", SHA1: "1", SHA224: "2", SHA256: "3", SHA384: "4", SHA512: "5"}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	for name, v := range map[string]string{"md5": "m", "sha1": "1", "sha224": "2", "sha256": "3", "sha384": "4", "sha512": "5", "crc32": ""} {
		if got := back.Get(name); got != v {
			t.Errorf("Get(%q) = %q, want %q", name, got, v)
		}
	}
}

// A driver error says which storage failed and whether it is full, never where the
// storage keeps its files on the server.
func TestDriverErrorMessages(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  *blob.DriverError
		want string
		full bool
	}{
		{&blob.DriverError{Driver: "fs", Op: "write", Err: &os.PathError{Op: "write", Path: "/srv/pith/blobs/tmp/blob-1", Err: syscall.ENOSPC}},
			"the filesystem blob storage is full: write: write blob-1: no space left on device", true},
		{&blob.DriverError{Driver: "fs", Op: "put part", Err: &os.PathError{Op: "write", Path: "/srv/pith/blobs/parts/u/.tmp-1", Err: syscall.EDQUOT}},
			"the filesystem blob storage is full: put part: write .tmp-1: disk quota exceeded", true},
		{&blob.DriverError{Driver: "fs", Op: "commit", Digest: empty, Err: &os.LinkError{Op: "rename", Old: "/srv/pith/blobs/tmp/blob-1", New: "/srv/pith/blobs/artifact/e3/b0", Err: syscall.EACCES}},
			"blob driver fs: commit " + empty + ": rename blob-1 b0: permission denied", false},
		{&blob.DriverError{Driver: "database", Op: "write", Err: fmt.Errorf("%w: %w", blob.ErrFull, errors.New("database or disk is full (13)"))},
			"the database blob storage is full: write: no space left: database or disk is full (13)", true},
		{&blob.DriverError{Driver: "s3", Op: "open", Digest: empty, Err: errors.New("connection refused")},
			"blob driver s3: open " + empty + ": connection refused", false},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("message %q, want %q", got, c.want)
		}
		var err error = fmt.Errorf("store a file: %w", c.err)
		if errors.Is(err, blob.ErrFull) != c.full || c.err.Full() != c.full {
			t.Errorf("%q: full = %v, want %v", c.want, errors.Is(err, blob.ErrFull), c.full)
		}
	}
}
