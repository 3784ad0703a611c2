package testfiles

import (
	"bytes"
	"os"
	"testing"
)

func TestPath(t *testing.T) {
	if _, err := os.Stat(Path("README.md")); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns a gzipped file decompressed, and a plain one as it is.
func TestReadFile(t *testing.T) {
	b, err := ReadFile("reference", "pulp-3.105", "api-3105.json")
	if err != nil || !bytes.HasPrefix(b, []byte("{")) {
		t.Fatalf("api-3105.json: %d bytes starting %.20q, %v", len(b), b, err)
	}
	b, err = ReadFile("yum-katello", "file1", "PULP_MANIFEST")
	if want, _ := os.ReadFile(Path("yum-katello", "file1", "PULP_MANIFEST")); err != nil || !bytes.Equal(b, want) {
		t.Fatalf("PULP_MANIFEST: %q, %v", b, err)
	}
	if _, err := ReadFile("no-such-file"); !os.IsNotExist(err) {
		t.Fatalf("a missing file: %v", err)
	}
}
