package blob

import (
	"hash"
	"io"
	"slices"
	"strings"
)

// HashReader passes a blob's bytes through while computing its sha256 and other named
// digests: an export verifies what it copies and fills in digests the store did not
// record.
type HashReader struct {
	r      io.Reader
	names  []string
	hashes []hash.Hash
	n      int64
}

// NewHashReader reads r, hashing sha256 and names ("sha224", …).
func NewHashReader(r io.Reader, names []string) *HashReader {
	h := &HashReader{r: r}
	for _, n := range append([]string{"sha256"}, names...) {
		if slices.Contains(h.names, n) || !knownChecksum(n) {
			continue
		}
		h.names, h.hashes = append(h.names, n), append(h.hashes, newHash(n))
	}
	return h
}

func (h *HashReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	for _, x := range h.hashes {
		x.Write(p[:n])
	}
	h.n += int64(n)
	return n, err
}

// Digests are the size and digests of what was read.
func (h *HashReader) Digests() Digests { return digestsOf(h.names, h.hashes, h.n) }

// Check reports a *MismatchError unless what was read has this sha256.
func (h *HashReader) Check(sha256 string) error {
	if got := h.Digests().SHA256; !strings.EqualFold(got, sha256) {
		return &MismatchError{What: "sha256", Want: sha256, Got: got}
	}
	return nil
}
