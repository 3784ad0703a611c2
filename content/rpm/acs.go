package rpm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"pith/content"
	"pith/content/download"
	"pith/content/rpm/repodata"
	"pith/meta"
	"pith/task"
)

// runRefresh refreshes one path of an rpm alternate content source: the path is a yum
// repository below the source's remote URL, and every package its primary metadata
// lists with a sha256 checksum is recorded with its URL, for syncs to take before
// asking their remote. (Packages with other checksums cannot match an artifact, whose
// key is its sha256, as in Pulp.)
func (p *Plugin) runRefresh(ctx context.Context, r *task.Run) error {
	f, err := p.core.StartRefresh(ctx, r)
	if err != nil {
		return err
	}
	defer f.D.CloseIdleConnections()
	s := &syncRun{p: p, r: r, d: f.D, remote: f.Remote, base: strings.TrimSuffix(f.URL, "/") + "/", url: f.URL}
	files, err := s.primaryFiles(ctx)
	if err != nil {
		return fmt.Errorf("alternate content source %q: %w", f.ACS.Name, err)
	}
	return p.core.SaveRefresh(ctx, f, files)
}

// primaryFiles reads repomd.xml and primary and lists the packages with a sha256.
func (s *syncRun) primaryFiles(ctx context.Context) ([]meta.ACSFile, error) {
	pm := s.r.Progress("sync.downloading.metadata", "Downloading Metadata Files", 2)
	rf, _, err := s.fetchTemp(ctx, s.base+"repodata/repomd.xml", "sha256", download.Expect{Size: -1})
	if err != nil {
		pm.Finish(err)
		return nil, fmt.Errorf("repodata/repomd.xml: %w", err)
	}
	md, err := repodata.ParseRepomd(rf, "repodata/repomd.xml")
	rf.Close()
	if err == nil && md.Record("primary") == nil {
		err = errors.New("repodata/repomd.xml: no primary metadata listed")
	}
	if err != nil {
		pm.Finish(err)
		return nil, err
	}
	pm.Add(1)
	rec := md.Record("primary")
	pf, err := s.fetchRecord(ctx, rec)
	if err != nil {
		pm.Finish(err)
		return nil, err
	}
	defer pf.Close()
	pm.Add(1)
	pm.Finish(nil)
	dr, err := repodata.Decompress(pf, rec.LocationHref)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rec.LocationHref, err)
	}
	defer dr.Close()
	pp := s.r.Progress("sync.parsing.packages", "Parsing Packages", -1)
	var files []meta.ACSFile
	rd := repodata.NewReader(dr, rec.LocationHref, repodata.Primary)
	for {
		pkg, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			pp.Finish(err)
			return nil, err
		}
		pp.Add(1)
		if pkg.ChecksumType != "sha256" {
			continue
		}
		if _, err := content.CleanRelativePath(pkg.LocationHref); err != nil {
			pp.Finish(err)
			return nil, fmt.Errorf("%s: package %s: %w", rec.LocationHref, pkg.NEVRA(), err)
		}
		files = append(files, meta.ACSFile{SHA256: strings.ToLower(pkg.PkgID), Size: pkg.SizePackage, URL: content.JoinURL(s.base, pkg.LocationHref)})
	}
	pp.Finish(nil)
	return files, nil
}
