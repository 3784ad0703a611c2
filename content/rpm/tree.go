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
	"maps"
	"net/http"
	"net/url"
	"slices"
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

// syncedTree is the distribution tree a sync stored.
type syncedTree struct {
	unit meta.Content
	sum  string // sha256 of the .treeinfo
	// subs are the repositories of variants and addons in other directories.
	subs []treeinfo.Ref
}

// tree syncs the distribution tree: .treeinfo (or treeinfo), and the images and files
// it names, each of which must exist upstream (checked when the tree is new). It
// returns nil when the repository has none.
func (s *syncRun) tree(ctx context.Context) (*syncedTree, error) {
	var raw []byte
	var name string
	for _, n := range []string{".treeinfo", "treeinfo"} {
		f, _, err := s.fetchTemp(ctx, s.base+n, "sha256", download.Expect{Size: -1})
		var de *download.Error
		if errors.As(err, &de) && de.Status == http.StatusNotFound {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		raw, err = io.ReadAll(io.LimitReader(f, treeinfo.MaxSize+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		name = n
		break
	}
	if raw == nil {
		return nil, nil
	}
	t, err := treeinfo.Parse(bytes.NewReader(raw), name)
	if errors.Is(err, treeinfo.ErrHTML) {
		return nil, nil // a server's page where no tree is, as Pulp treats it
	}
	if err != nil {
		return nil, err
	}
	st := &syncedTree{sum: sha256Hex(raw)}
	for _, ref := range t.Files() {
		if ref.Kind == treeinfo.KindRepository && ref.Local != treeinfo.Main && ref.Local != "" {
			st.subs = append(st.subs, ref)
		}
	}
	if s.mirror != nil {
		// Variants elsewhere are served from their own directories here, so the tree
		// is served as publish writes it, with their local paths.
		kept := raw
		if len(st.subs) > 0 {
			var buf bytes.Buffer
			if err := treeinfo.Write(&buf, t, nil); err != nil {
				return nil, err
			}
			kept = buf.Bytes()
		}
		if err := s.keep(ctx, bytes.NewReader(kept), name); err != nil {
			return nil, err
		}
	}
	// A tree stored before had its files checked then; only the artifacts it lacks are
	// fetched again.
	stored := map[string]bool{} // relative path → has an artifact
	old, err := meta.ContentByKey(ctx, s.p.db, DistributionTreeType, st.sum)
	known := err == nil
	if err != nil && !errors.Is(err, meta.ErrNotFound) {
		return nil, err
	}
	if known {
		refs, err := meta.ContentFiles(ctx, s.p.db, old.ID)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			stored[r.RelativePath] = r.Artifact != nil
		}
	}
	p := s.r.Progress("sync.parsing.distribution_tree", "Parsing Distribution Tree", 1)
	var files []meta.ContentFile
	for _, ref := range t.Files() {
		if ref.Kind == treeinfo.KindRepository {
			continue
		}
		u := content.JoinURL(s.base, ref.Path)
		f := meta.ContentFile{RelativePath: ref.Local, RemoteID: &s.remote.ID, URL: u}
		if typ, sum, ok := strings.Cut(ref.Checksum, ":"); ok && typ == "sha256" {
			f.SHA256 = sum
		}
		// The file must be there, even when it is fetched only on demand.
		if !known {
			resp, err := s.d.Get(ctx, u)
			if err != nil {
				return nil, fmt.Errorf("%s: %s names %s, which the remote does not serve: %w", name, ref, ref.Path, err)
			}
			resp.Body.Close()
		}
		if s.remote.Policy == "immediate" && !stored[ref.Local] {
			dg, err := content.FetchBlob(ctx, s.p.store, s.d, u, download.Expect{Size: -1, SHA256: f.SHA256})
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", name, ref, err)
			}
			art, _, err := meta.PutArtifact(ctx, s.p.db, meta.ArtifactOf(dg))
			if err != nil {
				return nil, err
			}
			f.ArtifactID = &art.ID
		}
		files = append(files, f)
	}
	attrs, err := json.Marshal(treeAttrs{DistributionTree: t, Treeinfo: string(raw)})
	if err != nil {
		return nil, err
	}
	err = s.p.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		st.unit, _, err = meta.PutContent(ctx, tx, meta.Content{Type: DistributionTreeType, NaturalKey: st.sum, RepoKey: "distribution_tree", Digest: st.sum, Attrs: attrs}, files)
		return err
	})
	p.Add(1)
	p.Finish(err)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// syncSub syncs the repository of a variant or addon in another directory into the
// tree's sub-repository for it, with the main sync's remote and settings. Upstream
// not having it is not an error (Pulp warns and goes on): the task reports it.
func (s *syncRun) syncSub(ctx context.Context, tree *syncedTree, ref treeinfo.Ref) error {
	repo, err := meta.SubRepository(ctx, s.p.db, tree.unit.ID, ref.Local, RepoType, ref.Local+"-"+tree.sum)
	if err != nil {
		return err
	}
	base, err := url.Parse(s.base)
	if err != nil {
		return err
	}
	sub := &syncRun{p: s.p, r: s.r, d: s.d, remote: s.remote, args: s.args}
	sub.base = base.ResolveReference(&url.URL{Path: strings.TrimSuffix(ref.Path, "/") + "/"}).String()
	sub.url = sub.base
	if s.mirror != nil {
		sub.mirror = newMirror()
	}
	v, _, err := sub.sync(ctx, repo)
	var de *download.Error
	if errors.As(err, &de) && de.Status == http.StatusNotFound && de.URL == sub.base+"repodata/repomd.xml" {
		s.r.Progress("sync.skipped", fmt.Sprintf("Skipping %s: the remote has no repository at %s", ref, sub.base), 0).Finish(nil)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	if s.mirror != nil { // a mirror is never skipped, so v is set
		s.mirror.subs = append(s.mirror.subs, subMirror{path: ref.Local, repoID: repo.ID, version: v.Number, m: sub.mirror})
	}
	return nil
}

// tree publishes the version's distribution tree: its files at their paths, the
// .treeinfo written again with its variants' local paths, and the latest version of each
// of its sub-repositories under its path, as Pulp publishes them.
func (w *pubWriter) tree(repoID, n int64) ([]meta.PublishedFile, error) {
	rows, err := w.p.db.Query(w.ctx, `SELECT c.id, c.attrs FROM contents c WHERE c.type = ? AND `+inVersion, DistributionTreeType, repoID, n, n)
	if err != nil {
		return nil, err
	}
	var id int64
	var attrs string
	found := rows.Next()
	if found {
		err = rows.Scan(&id, &attrs)
	}
	rows.Close()
	if err != nil || !found {
		return nil, err
	}
	var ta struct {
		Treeinfo string `json:"treeinfo"`
	}
	if err := json.Unmarshal([]byte(attrs), &ta); err != nil {
		return nil, err
	}
	t, err := treeinfo.Parse(strings.NewReader(ta.Treeinfo), ".treeinfo")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := treeinfo.Write(&buf, t, nil); err != nil {
		return nil, err
	}
	art, err := w.put(&buf)
	if err != nil {
		return nil, err
	}
	files := []meta.PublishedFile{{RelativePath: ".treeinfo", ArtifactID: &art.ID}}
	refs, err := meta.ContentFiles(w.ctx, w.p.db, id)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		ca := ref.ContentArtifactID
		files = append(files, meta.PublishedFile{RelativePath: ref.RelativePath, ContentArtifactID: &ca})
	}
	subs, err := meta.SubRepositories(w.ctx, w.p.db, id)
	if err != nil {
		return nil, err
	}
	for _, dir := range slices.Sorted(maps.Keys(subs)) {
		sw := &pubWriter{p: w.p, ctx: w.ctx, a: w.a}
		sub, err := sw.repository(subs[dir].ID, subs[dir].LatestVersion)
		if err != nil {
			return nil, fmt.Errorf("sub-repository %s: %w", dir, err)
		}
		for i := range sub {
			sub[i].RelativePath = dir + "/" + sub[i].RelativePath
		}
		files = append(files, sub...)
	}
	return files, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
