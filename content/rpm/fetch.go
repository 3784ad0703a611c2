package rpm

import (
	"context"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"strings"

	"pith/content"
	"pith/content/download"
	"pith/content/rpm/repodata"
)

// fileSink stages one download attempt in an unnamed temporary file while hashing it.
type fileSink struct {
	f *os.File
	h hash.Hash
}

func (s *fileSink) Write(p []byte) (int, error) {
	s.h.Write(p)
	return s.f.Write(p)
}

func (s *fileSink) Abort() { s.f.Close() }

// fetchTemp downloads url into a temporary file, rewound, and returns it with its digest
// of type checksumType. want bounds the size when known.
func fetchTemp(ctx context.Context, d *download.Downloader, url, checksumType string, want download.Expect) (*os.File, string, error) {
	var last *fileSink
	_, err := d.Fetch(ctx, url, want, func() (download.Sink, error) {
		h, err := repodata.NewHash(checksumType)
		if err != nil {
			return nil, err
		}
		f, err := content.TempFile()
		if err != nil {
			return nil, err
		}
		last = &fileSink{f: f, h: h}
		return last, nil
	})
	if err != nil {
		return nil, "", err
	}
	if _, err := last.f.Seek(0, 0); err != nil {
		last.f.Close()
		return nil, "", err
	}
	return last.f, hex.EncodeToString(last.h.Sum(nil)), nil
}

// fetchRecord downloads a metadata file repomd.xml lists and checks its size and
// checksum against the record; a mismatch names the file.
func fetchRecord(ctx context.Context, d *download.Downloader, base string, rec *repodata.Record) (*os.File, error) {
	href := rec.LocationHref
	if _, err := content.CleanRelativePath(href); err != nil {
		return nil, fmt.Errorf("repomd.xml: %s location %q: %w", rec.Type, href, err)
	}
	url := content.JoinURL(base, href)
	if rec.LocationBase != "" {
		url = content.JoinURL(strings.TrimSuffix(rec.LocationBase, "/")+"/", href)
	}
	want := download.Expect{Size: rec.Size}
	f, sum, err := fetchTemp(ctx, d, url, rec.ChecksumType, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", href, err)
	}
	if !strings.EqualFold(sum, rec.Checksum) {
		f.Close()
		return nil, fmt.Errorf("%s: %s checksum mismatch: repomd.xml says %s, the file has %s", href, rec.ChecksumType, rec.Checksum, sum)
	}
	return f, nil
}
