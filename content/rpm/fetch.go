package rpm

import (
	"context"
	"fmt"
	"hash"
	"os"
	"strings"

	"pith/content"
	"pith/content/download"
	"pith/content/rpm/repodata"
)

// fetchTemp stages url in a temporary file with its digest of checksumType.
func (s *syncRun) fetchTemp(ctx context.Context, url, checksumType string, want download.Expect) (*os.File, string, error) {
	if _, err := repodata.NewHash(checksumType); err != nil {
		return nil, "", err
	}
	return s.p.core.FetchTemp(ctx, s.d, url, want, func() hash.Hash { h, _ := repodata.NewHash(checksumType); return h })
}

// fetchRecord downloads a metadata file repomd.xml lists and checks its size and
// checksum against the record; a mismatch names the file.
func (s *syncRun) fetchRecord(ctx context.Context, rec *repodata.Record) (*os.File, error) {
	href := rec.LocationHref
	if _, err := content.CleanRelativePath(href); err != nil {
		return nil, fmt.Errorf("repomd.xml: %s location %q: %w", rec.Type, href, err)
	}
	url := content.JoinURL(s.base, href)
	if rec.LocationBase != "" {
		url = content.JoinURL(strings.TrimSuffix(rec.LocationBase, "/")+"/", href)
	}
	want := download.Expect{Size: rec.Size}
	f, sum, err := s.fetchTemp(ctx, url, rec.ChecksumType, want)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", href, err)
	}
	if !strings.EqualFold(sum, rec.Checksum) {
		f.Close()
		return nil, fmt.Errorf("%s: %s checksum mismatch: repomd.xml says %s, the file has %s", href, rec.ChecksumType, rec.Checksum, sum)
	}
	return f, nil
}
