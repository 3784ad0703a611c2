package file

import (
	"context"
	"fmt"

	"pith/content"
	"pith/meta"
	"pith/task"
)

// runRefresh refreshes one path of a file alternate content source: the path names a
// manifest (PULP_MANIFEST) below the source's remote URL, and every file it lists is
// recorded by sha256 with its URL, for syncs to take before asking their remote.
func (p *Plugin) runRefresh(ctx context.Context, r *task.Run) error {
	f, err := p.core.StartRefresh(ctx, r)
	if err != nil {
		return err
	}
	pm := r.Progress("sync.downloading.metadata", "Downloading Metadata Files", 1)
	mf, _, err := p.fetchManifest(ctx, f.D, f.URL)
	if err == nil {
		pm.Add(1)
	}
	pm.Finish(err)
	if err != nil {
		return fmt.Errorf("alternate content source %q: %w", f.ACS.Name, err)
	}
	defer mf.Close()
	base := content.URLBase(f.URL)
	var files []meta.ACSFile
	pp := r.Progress("sync.parsing.metadata", "Parsing Metadata Lines", -1)
	err = ParseManifest(mf, func(e Entry) error {
		files = append(files, meta.ACSFile{SHA256: e.Digest, Size: e.Size, URL: content.JoinURL(base, e.RelativePath)})
		pp.Add(1)
		return nil
	})
	pp.Finish(err)
	if err != nil {
		return fmt.Errorf("alternate content source %q: manifest %s: %w", f.ACS.Name, f.URL, err)
	}
	return p.core.SaveRefresh(ctx, f, files)
}
