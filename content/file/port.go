package file

import (
	"context"
	"encoding/json"
	"fmt"

	"pith/blob"
	"pith/content"
	"pith/meta"
)

// Resource files of a file repository version in Pulp's export format.
const (
	contentResource    = "pulp_file.app.modelresource.FileContentResource.json"
	repositoryResource = "pulp_file.app.modelresource.FileRepositoryResource.json"
)

// importBatch is how many units an import stores per statement batch.
const importBatch = 500

// Port exports and imports file repository versions as pulp_file does.
func (p *Plugin) Port() content.Port {
	return content.Port{
		App:                "file",
		RepositoryResource: repositoryResource,
		RepositoryColumns:  []string{"manifest", "autopublish", "last_sync_details"},
		RepositoryRow: func(repo meta.Repository) ([]any, error) {
			var s repoSettings
			if err := json.Unmarshal(repo.Attrs, &s); err != nil {
				return nil, fmt.Errorf("repository %q: %w", repo.Name, err)
			}
			return []any{s.Manifest, s.Autopublish, content.JSON{}}, nil
		},
		RepositoryFields: func(row content.Row) (map[string]any, error) {
			f := map[string]any{}
			if m, err := row.Str("manifest"); err != nil {
				return nil, err
			} else if m != "" {
				f["manifest"] = m
			}
			if b, ok, err := row.Bool("autopublish"); err != nil {
				return nil, err
			} else if ok {
				f["autopublish"] = b
			}
			return f, nil
		},
		Export: p.export,
		Import: p.importVersion,
	}
}

func (p *Plugin) export(ctx context.Context, x content.PortOut) error {
	w, err := x.Resource(contentResource, "pulp_type", "upstream_id", "pulp_domain", "relative_path", "digest", "_pulp_domain")
	if err != nil {
		return err
	}
	err = x.Units(ctx, func(units []meta.Content) error {
		for _, c := range units {
			if err := w.Row(Type, c.PulpID, x.Domain(), c.RelativePath, c.Digest, x.Domain()); err != nil {
				return err
			}
		}
		return nil
	}, Type)
	if err != nil {
		return err
	}
	return w.Close()
}

func (p *Plugin) importVersion(ctx context.Context, x content.PortIn) error {
	var batch []meta.NewUnit
	var upstream []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		units, _, err := meta.PutContents(ctx, x.Tx(), batch)
		if err != nil {
			return err
		}
		for i, u := range units {
			x.Imported(upstream[i], u.ID)
		}
		batch, upstream = batch[:0], upstream[:0]
		return nil
	}
	err := x.Rows(contentResource, func(row content.Row) error {
		id, err := row.Str("upstream_id")
		if err != nil {
			return err
		}
		rel, err := row.Str("relative_path")
		if err != nil {
			return err
		}
		digest, err := row.Str("digest")
		if err != nil {
			return err
		}
		if id == "" {
			return fmt.Errorf("column upstream_id: empty")
		}
		if _, err := content.CleanRelativePath(rel); err != nil {
			return fmt.Errorf("column relative_path: %w", err)
		}
		if !blob.ValidDigest(digest) {
			return fmt.Errorf("column digest: %q is not a sha256", digest)
		}
		attrs, _ := json.Marshal(map[string]string{"relative_path": rel, "digest": digest})
		batch = append(batch, meta.NewUnit{Content: meta.Content{Type: Type, NaturalKey: digest + ":" + rel, RepoKey: rel,
			RelativePath: rel, Digest: digest, Attrs: attrs}, Files: x.Files(id)})
		upstream = append(upstream, id)
		if len(batch) == importBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}
