package rpm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"pith/content"
	"pith/content/download"
	"pith/content/rpm/treeinfo"
	"pith/meta"
)

// DistributionTreeType is the content type of a distribution tree (.treeinfo).
const DistributionTreeType = "rpm.distribution_tree"

// treeAttrs are a distribution tree unit's attrs: the parsed tree as the API shows it,
// and the file itself, which publish rewrites.
type treeAttrs struct {
	*treeinfo.DistributionTree
	Treeinfo string `json:"treeinfo"`
}

// tree syncs the distribution tree: .treeinfo (or treeinfo), and the images and files
// it names, each of which must exist upstream. A repository without one has none.
func (s *syncRun) tree(ctx context.Context) error {
	var raw []byte
	var name string
	for _, n := range []string{".treeinfo", "treeinfo"} {
		f, _, err := fetchTemp(ctx, s.d, s.base+n, "sha256", download.Expect{Size: -1})
		var de *download.Error
		if errors.As(err, &de) && de.Status == http.StatusNotFound {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		raw, err = io.ReadAll(io.LimitReader(f, treeinfo.MaxSize+1))
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		name = n
		break
	}
	if raw == nil {
		return nil
	}
	t, err := treeinfo.Parse(bytes.NewReader(raw), name)
	if errors.Is(err, treeinfo.ErrHTML) {
		return nil // a server's page where no tree is, as Pulp treats it
	}
	if err != nil {
		return err
	}
	if s.mirror != nil {
		if err := s.keep(ctx, bytes.NewReader(raw), name); err != nil {
			return err
		}
	}
	p := s.r.Progress("sync.parsing.distribution_tree", "Parsing Distribution Tree", 1)
	var files []meta.ContentFile
	for _, ref := range t.Files() {
		if ref.Kind == treeinfo.KindRepository {
			if ref.Local != treeinfo.Main && ref.Local != "" {
				return fmt.Errorf("%s: %s: repositories of variants and addons (%s) are not synced by this server yet", name, ref, ref.Path)
			}
			continue
		}
		url := content.JoinURL(s.base, ref.Path)
		f := meta.ContentFile{RelativePath: ref.Local, RemoteID: &s.remote.ID, URL: url}
		if typ, sum, ok := strings.Cut(ref.Checksum, ":"); ok && typ == "sha256" {
			f.SHA256 = sum
		}
		// The file must be there, even when it is fetched only on demand.
		resp, err := s.d.Get(ctx, url)
		if err != nil {
			return fmt.Errorf("%s: %s names %s, which the remote does not serve: %w", name, ref, ref.Path, err)
		}
		resp.Body.Close()
		if s.remote.Policy == "immediate" {
			dg, err := content.FetchBlob(ctx, s.p.store, s.d, url, download.Expect{Size: -1, SHA256: f.SHA256})
			if err != nil {
				return fmt.Errorf("%s: %s: %w", name, ref, err)
			}
			art, _, err := meta.PutArtifact(ctx, s.p.db, content.Artifact(dg))
			if err != nil {
				return err
			}
			f.ArtifactID = &art.ID
		}
		files = append(files, f)
	}
	attrs, err := json.Marshal(treeAttrs{DistributionTree: t, Treeinfo: string(raw)})
	if err != nil {
		return err
	}
	sum := sha256Hex(raw)
	err = s.p.db.Tx(ctx, func(tx *meta.Tx) error {
		c, _, err := meta.PutContent(ctx, tx, meta.Content{Type: DistributionTreeType, NaturalKey: sum, RepoKey: "distribution_tree", Digest: sum, Attrs: attrs}, files)
		if err != nil {
			return err
		}
		s.units = append(s.units, c.ID)
		return nil
	})
	p.Add(1)
	p.Finish(err)
	return err
}

// tree publishes the version's distribution tree: its files at their paths, and the
// .treeinfo written again.
func (w *pubWriter) tree(repoID, n int64) error {
	rows, err := w.p.db.Query(w.ctx, `SELECT c.id, c.attrs FROM contents c WHERE c.type = ? AND `+inVersion, DistributionTreeType, repoID, n, n)
	if err != nil {
		return err
	}
	var id int64
	var attrs string
	found := rows.Next()
	if found {
		err = rows.Scan(&id, &attrs)
	}
	rows.Close()
	if err != nil || !found {
		return err
	}
	var ta struct {
		Treeinfo string `json:"treeinfo"`
	}
	if err := json.Unmarshal([]byte(attrs), &ta); err != nil {
		return err
	}
	t, err := treeinfo.Parse(strings.NewReader(ta.Treeinfo), ".treeinfo")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := treeinfo.Write(&buf, t, nil); err != nil {
		return err
	}
	art, err := w.put(&buf)
	if err != nil {
		return err
	}
	w.files = append(w.files, meta.PublishedFile{RelativePath: ".treeinfo", ArtifactID: &art.ID})
	refs, err := meta.ContentFiles(w.ctx, w.p.db, id)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		ca := ref.ContentArtifactID
		w.files = append(w.files, meta.PublishedFile{RelativePath: ref.RelativePath, ContentArtifactID: &ca})
	}
	return nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
