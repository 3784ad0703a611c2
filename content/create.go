package content

import (
	"context"
	"fmt"

	"pith/api/href"
	"pith/content/download"
	"pith/meta"
	"pith/task"
)

// UnitHref is the href of a unit of a declared kind.
func (c *Core) UnitHref(u meta.Content) string {
	k, _ := c.table.UnitKind(u.Type)
	return href.Content(k.Segment, u.PulpID)
}

// CreateUnit is the body of a content create task: download the file when a URL was
// given (into *artifact), create the unit, report it, and add it to the repository when
// one is named; with overwrite false, adding it fails when it would replace a unit with
// the same repo key (Pulp's overwrite).
func (c *Core) CreateUnit(ctx context.Context, r *task.Run, fileURL string, artifact *int64, repository string, overwrite bool, create func() (meta.Content, error)) error {
	if fileURL != "" {
		art, err := c.FetchURL(ctx, fileURL)
		if err != nil {
			return err
		}
		*artifact = art.ID
	}
	u, err := create()
	if err != nil {
		return err
	}
	r.Created(c.UnitHref(u))
	if repository == "" {
		return nil
	}
	if !overwrite {
		repo, err := meta.RepositoryByPulpID(ctx, c.DB, repository)
		if err != nil {
			return err
		}
		if err := c.checkOverwrite(ctx, repo, repo.LatestVersion, []int64{u.ID}, nil); err != nil {
			return err
		}
	}
	return c.NewVersion(ctx, r, repository, meta.Change{Add: []int64{u.ID}})
}

// FetchURL downloads a URL into an artifact (content create with file_url).
func (c *Core) FetchURL(ctx context.Context, url string) (meta.Artifact, error) {
	d, err := download.New(download.Config{URL: url, TLSValidation: true})
	if err != nil {
		return meta.Artifact{}, fmt.Errorf("file_url %s: %w", url, err)
	}
	dg, err := FetchBlob(ctx, c.Store, d, url, download.Expect{Size: -1})
	if err != nil {
		return meta.Artifact{}, err
	}
	a, _, err := meta.PutArtifact(ctx, c.DB, meta.ArtifactOf(dg))
	return a, err
}
