package repodata

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecompress(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(data, "rpm-edge-cases/compressed_files")
	for _, base := range []string{"00_plain", "01_plain"} {
		want, err := os.ReadFile(filepath.Join(dir, base+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		// foo0..foo5 are the same files under a name that says nothing: plain, gz, bz2,
		// xz, zck, zst, found by magic.
		for _, ext := range []string{".txt", ".txt.gz", ".txt.bz2", ".txt.xz", ".txt.zst", ".txt.zck",
			".foo0", ".foo1", ".foo2", ".foo3", ".foo4", ".foo5"} {
			name := base + ext
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			rc, err := Decompress(f, name)
			if strings.HasSuffix(ext, "zck") || ext == ".foo4" && base == "01_plain" { // 00_plain.foo4 is empty
				if !errors.Is(err, ErrZchunk) || !strings.HasPrefix(err.Error(), name+": zchunk is not supported") {
					t.Errorf("%s: error %v, want ErrZchunk naming the file", name, err)
				}
				f.Close()
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, err := io.ReadAll(rc)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: %q, %v; want %q", name, got, err, want)
			}
			rc.Close()
			f.Close()
		}
	}
}

func TestDecompressErrors(t *testing.T) {
	t.Parallel()
	var gz bytes.Buffer
	cw, _ := NewCompressWriter(&gz, Gzip, "sha256")
	cw.Write(bytes.Repeat([]byte("hello world "), 1000))
	cw.Close()
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"t.xml.gz", gz.Bytes()[:gz.Len()/2], "gzip: unexpected EOF"},
		{"t.xml.gz", append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0}, "garbage!"...), "gzip: flate: corrupt input"},
		{"t.xml.xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0, 1, 2}, "t.xml.xz: xz: "},
		{"t.xml.bz2", []byte("BZh9garbage"), "bzip2: "},
		{"t.xml.zst", []byte{0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff, 0xff}, "zstd: "},
	} {
		rc, err := Decompress(bytes.NewReader(tc.in), tc.name)
		if err == nil {
			_, err = io.ReadAll(rc)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %x: error %v, want %q", tc.name, tc.in[:8], err, tc.want)
		}
	}
}

func TestCompressWriter(t *testing.T) {
	t.Parallel()
	content := bytes.Repeat([]byte("<package>Šabata &amp; co</package>\n"), 5000)
	for _, c := range []Compression{Gzip, Zstd, None} {
		for _, typ := range []string{"sha256", "sha1", "sha512", "sha384", "sha224", "md5", "SHA"} {
			var out bytes.Buffer
			cw, err := NewCompressWriter(&out, c, typ)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(content); i += 7000 {
				if _, err := cw.Write(content[i:min(i+7000, len(content))]); err != nil {
					t.Fatal(err)
				}
			}
			if err := cw.Close(); err != nil {
				t.Fatal(err)
			}
			s := cw.Sums()
			if s.Size != int64(out.Len()) || s.Checksum != hexSum(t, typ, out.Bytes()) ||
				s.OpenSize != int64(len(content)) || s.OpenChecksum != hexSum(t, typ, content) {
				t.Errorf("%s %s: sums %+v wrong", c, typ, s)
			}
			rc, err := Decompress(bytes.NewReader(out.Bytes()), "x"+c.Ext())
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(rc); err != nil || !bytes.Equal(got, content) {
				t.Errorf("%s: does not decompress to the input: %v", c, err)
			}
			rc.Close()
			// Deterministic: the same input gives the same bytes.
			var again bytes.Buffer
			cw2, _ := NewCompressWriter(&again, c, typ)
			cw2.Write(content)
			cw2.Close()
			if !bytes.Equal(out.Bytes(), again.Bytes()) {
				t.Errorf("%s: output differs between runs", c)
			}
			rec := s.Record("primary", "repodata/primary.xml"+c.Ext(), 1)
			if (c == None) != (rec.OpenChecksum == "" && rec.OpenSize == -1) || rec.ChecksumType == "sha" {
				t.Errorf("%s: record %+v", c, rec)
			}
		}
	}
	if _, err := NewCompressWriter(io.Discard, "bz2", "sha256"); err == nil {
		t.Error("unknown compression: no error")
	}
	if _, err := NewCompressWriter(io.Discard, Gzip, "crc32"); err == nil {
		t.Error("unknown checksum type: no error")
	}
}

func hexSum(t *testing.T, typ string, b []byte) string {
	h, err := NewHash(typ)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
