package rpm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"pith/content"
	"pith/content/rpm/repodata"
	"pith/meta"
)

// RepoMetadataFileType is the content type of a metadata file repomd.xml lists that pith
// does not parse (productid, say): synced, stored and published as it is.
const RepoMetadataFileType = "rpm.repo_metadata_file"

// repoMetadataFile is such a unit's attrs, its API fields.
type repoMetadataFile struct {
	DataType     string `json:"data_type"`
	ChecksumType string `json:"checksum_type"`
	Checksum     string `json:"checksum"`
	RelativePath string `json:"relative_path"`
}

// known are the metadata types pith parses or writes itself.
var known = []string{"primary", "filelists", "other", "primary_db", "filelists_db", "other_db", "updateinfo", "group", "modules"}

// isRepoMetadataFile reports whether a repomd.xml record is kept as a repo metadata file:
// not a type pith knows, not another compression of one (group_gz, primary_zck), and
// not delta rpms.
func isRepoMetadataFile(typ string) bool {
	if slices.Contains(known, typ) || slices.Contains(unmirrorable, typ) {
		return false
	}
	for _, s := range []string{"_zck", "_gz", "_xz"} {
		if strings.Contains(typ, s) {
			return false
		}
	}
	return true
}

// repoMetadataFile records a stored metadata file, checked against repomd.xml, as a repo
// metadata file unit of the sync. The file is always stored (Pulp downloads these
// whatever the policy).
func (s *syncRun) repoMetadataFile(ctx context.Context, rec *repodata.Record, art meta.Artifact) error {
	attrs, err := json.Marshal(repoMetadataFile{DataType: rec.Type, ChecksumType: rec.ChecksumType, Checksum: rec.Checksum, RelativePath: rec.LocationHref})
	if err != nil {
		return err
	}
	size := art.Size
	file := meta.ContentFile{RelativePath: rec.LocationHref, RemoteID: &s.remote.ID, URL: content.JoinURL(s.base, rec.LocationHref),
		Size: &size, SHA256: art.SHA256, ArtifactID: &art.ID}
	return s.p.db.Tx(ctx, func(tx *meta.Tx) error {
		c, _, err := meta.PutContent(ctx, tx, meta.Content{Type: RepoMetadataFileType, NaturalKey: rec.Type + " " + rec.Checksum + " " + rec.LocationHref,
			RepoKey: rec.Type, RelativePath: rec.LocationHref, Digest: art.SHA256, Attrs: attrs}, []meta.ContentFile{file})
		if err != nil {
			return err
		}
		s.units = append(s.units, c.ID)
		return nil
	})
}

// metadataFiles publishes the version's repo metadata files as they are, each listed in
// repomd.xml under its type and named by its checksum in the publication's type.
func (w *pubWriter) metadataFiles(repoID, n int64) error {
	rows, err := w.p.db.Query(w.ctx, `SELECT c.attrs, a.sha256 FROM contents c
		JOIN content_artifacts ca ON ca.content_id = c.id JOIN artifacts a ON a.id = ca.artifact_id
		WHERE c.type = ? AND `+inVersion+` ORDER BY c.repo_key`, RepoMetadataFileType, repoID, n, n)
	if err != nil {
		return err
	}
	type file struct {
		attrs  repoMetadataFile
		sha256 string
	}
	var files []file
	for rows.Next() {
		var attrs, sum string
		if err := rows.Scan(&attrs, &sum); err != nil {
			rows.Close()
			return err
		}
		f := file{sha256: sum}
		if err := json.Unmarshal([]byte(attrs), &f.attrs); err != nil {
			rows.Close()
			return err
		}
		files = append(files, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range files {
		name := path.Base(f.attrs.RelativePath)
		if before, after, ok := strings.Cut(name, "-"); ok && strings.Contains(before, f.attrs.Checksum) && after != "" {
			name = after // upstream's checksum prefix; the publication's own replaces it
		}
		err := w.metadata(f.attrs.DataType, name, false, func(out io.Writer) error {
			r, err := w.p.store.Open(w.ctx, f.sha256)
			if err != nil {
				return err
			}
			defer r.Close()
			_, err = io.Copy(out, r)
			return err
		})
		if err != nil {
			return fmt.Errorf("%s (%s): %w", f.attrs.RelativePath, f.attrs.DataType, err)
		}
	}
	return nil
}
