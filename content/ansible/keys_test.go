package ansible_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"

	"pith/sign"
)

// testKey is a fresh signing key.
func testKey(t *testing.T) *sign.Signer {
	t.Helper()
	e, err := openpgp.NewEntity("Pith Test", "", "test@example.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w, _ := armor.Encode(&b, openpgp.PrivateKeyType, nil)
	if err := e.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	s, err := sign.Read(&b, "test")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// manifestOf is the MANIFEST.json of a collection tarball of the reader's test data.
func manifestOf(t *testing.T, file string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tarball(t, file)))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s has no MANIFEST.json: %v", file, err)
		}
		if h.Name == "MANIFEST.json" {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}
