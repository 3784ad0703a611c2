package rpm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"pith/api/href"
	"pith/blob"
	"pith/content/rpm/comps"
	"pith/content/rpm/modulemd"
	"pith/content/rpm/repodata"
	"pith/content/rpm/updateinfo"
	"pith/meta"
	"pith/task"
)

// PublishArgs are the arguments of a publish task.
type PublishArgs struct {
	Repository   string `json:"repository"`
	Version      int64  `json:"version"`
	ChecksumType string `json:"checksum_type"`    // of the metadata; "sha256" by default
	Compression  string `json:"compression_type"` // "gz" (default), "zstd" or "none"
	Layout       string `json:"layout"`           // "nested_alphabetically" (default) or "flat"
	// SigningService is the pulp ID of the signing service that signs repomd.xml; empty:
	// unsigned.
	SigningService string `json:"signing_service,omitempty"`
	// RepoConfig is the config.repo settings the publication records (a JSON object).
	RepoConfig json.RawMessage `json:"repo_config,omitempty"`
	// Checkpoint makes a checkpoint publication.
	Checkpoint bool `json:"checkpoint,omitempty"`
}

// PubAttrs are what an rpm publication records (its attrs).
type PubAttrs struct {
	ChecksumType    string `json:"checksum_type"`
	CompressionType string `json:"compression_type"`
	Layout          string `json:"layout"`
	// RepoConfig is the config.repo settings of distributions serving the publication.
	RepoConfig json.RawMessage `json:"repo_config,omitempty"`
}

func (p *Plugin) runPublish(ctx context.Context, r *task.Run) error {
	var a PublishArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, p.db, a.Repository)
	if err != nil {
		return err
	}
	pub, err := p.Publish(ctx, r, repo, a)
	if err != nil {
		return err
	}
	r.Created(href.Publication(pub.Type, pub.PulpID))
	return nil
}

// inVersion is the SQL condition that unit c is in version ? of repository ?.
var inVersion = `EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = c.id AND rc.repository_id = ?
	AND ` + meta.InVersion("rc", "?") + `)`

// packagePath is where a publication serves a package.
func packagePath(layout, location string) string {
	name := path.Base(location)
	if layout == "flat" {
		return name
	}
	return "Packages/" + strings.ToLower(name[:1]) + "/" + name
}

// Publish writes a yum repository for version a.Version of repo: the packages at the
// paths of the layout, repodata assembled from the fragments stored at import, and
// repomd.xml last; then the distribution tree with a repository of the same shape for
// each of its sub-repositories. Nothing is served until the publication row exists.
func (p *Plugin) Publish(ctx context.Context, r *task.Run, repo meta.Repository, a PublishArgs) (meta.Publication, error) {
	if a.ChecksumType == "" {
		a.ChecksumType = "sha256"
	}
	if a.Compression == "" {
		a.Compression = string(repodata.Gzip)
	}
	if a.Layout == "" {
		a.Layout = "nested_alphabetically"
	}
	if _, err := meta.VersionByNumber(ctx, p.db, repo.ID, a.Version); err != nil {
		return meta.Publication{}, err
	}
	if a.SigningService != "" && (p.signer == nil || p.signerID != a.SigningService) {
		return meta.Publication{}, fmt.Errorf("signing service %s: this worker holds no key for it (give every worker the same --metadata-signing-key)", a.SigningService)
	}
	prog := r.Progress("publish.generating_metadata", "Generating repository metadata", -1)
	pw := &pubWriter{p: p, ctx: ctx, a: a}
	files, err := pw.repository(repo.ID, a.Version)
	if err == nil {
		var tree []meta.PublishedFile
		tree, err = pw.tree(repo.ID, a.Version)
		files = append(files, tree...)
	}
	if err == nil {
		err = uniquePaths(files)
	}
	prog.Finish(err)
	if err != nil {
		return meta.Publication{}, err
	}

	attrs, _ := json.Marshal(PubAttrs{ChecksumType: a.ChecksumType, CompressionType: a.Compression, Layout: a.Layout, RepoConfig: a.RepoConfig})
	var pub meta.Publication
	err = p.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		pub, err = meta.CreatePublication(ctx, tx, meta.Publication{Type: RepoType, RepositoryID: repo.ID, VersionNumber: a.Version, Checkpoint: a.Checkpoint, Attrs: attrs}, files)
		return err
	})
	if err != nil {
		return pub, err
	}
	p.core.Invalidate()
	return pub, nil
}

// repository writes the yum repository of version n of a repository: each package at
// its path in the layout, the repodata, and repomd.xml last (signed when asked).
func (w *pubWriter) repository(repoID, n int64) ([]meta.PublishedFile, error) {
	files, err := w.packages(repoID, n)
	if err != nil {
		return nil, err
	}
	for _, step := range []func(int64, int64) error{w.advisories, w.comps, w.modules, w.metadataFiles} {
		if err := step(repoID, n); err != nil {
			return nil, err
		}
	}
	md := repodata.Repomd{Revision: strconv.FormatInt(time.Now().Unix(), 10), Records: w.records}
	repomd := md.Bytes()
	art, err := w.put(bytes.NewReader(repomd))
	if err != nil {
		return nil, err
	}
	w.files = append(w.files, meta.PublishedFile{RelativePath: "repodata/repomd.xml", ArtifactID: &art.ID})
	if w.a.SigningService != "" {
		sig, err := w.p.signer.Detach(bytes.NewReader(repomd))
		if err != nil {
			return nil, fmt.Errorf("sign repomd.xml: %w", err)
		}
		for name, b := range map[string][]byte{"repodata/repomd.xml.asc": sig, "repodata/repomd.xml.key": []byte(w.p.signer.PublicKey())} {
			art, err := w.put(bytes.NewReader(b))
			if err != nil {
				return nil, err
			}
			w.files = append(w.files, meta.PublishedFile{RelativePath: name, ArtifactID: &art.ID})
		}
	}
	return append(files, w.files...), nil
}

// uniquePaths refuses a publication that would serve two files at one path (a
// sub-repository's directory that is also a file of the tree, say).
func uniquePaths(files []meta.PublishedFile) error {
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		if seen[f.RelativePath] {
			return fmt.Errorf("two files would be published at %s", f.RelativePath)
		}
		seen[f.RelativePath] = true
	}
	return nil
}

// pubWriter stores a publication's metadata files as they are written.
type pubWriter struct {
	p       *Plugin
	ctx     context.Context
	a       PublishArgs
	records []repodata.Record
	files   []meta.PublishedFile
}

// put stores r as an artifact.
func (w *pubWriter) put(r io.Reader) (meta.Artifact, error) {
	dg, err := w.p.store.Put(w.ctx, r, blob.Expect{Size: -1})
	if err != nil {
		return meta.Artifact{}, err
	}
	a, _, err := meta.PutArtifact(w.ctx, w.p.db, meta.ArtifactOf(dg))
	return a, err
}

// metadata writes one repodata file with write, compressed and measured in one pass, and
// records it in repomd.xml and the publication.
func (w *pubWriter) metadata(typ, name string, compress bool, write func(io.Writer) error) error {
	rec, f, err := w.metadataFile(typ, name, compress, write)
	if err != nil {
		return err
	}
	w.records = append(w.records, rec)
	w.files = append(w.files, f)
	return nil
}

// fileName is the name of the repodata file of a type, before its checksum and
// compression extension are added.
func fileName(typ string) string {
	if typ == "modules" {
		return "modules.yaml"
	}
	return typ + ".xml"
}

// metadataFile writes and stores one repodata file, published as
// repodata/<checksum>-<name><compression extension>; it may run alongside others.
func (w *pubWriter) metadataFile(typ, name string, compress bool, write func(io.Writer) error) (repodata.Record, meta.PublishedFile, error) {
	var rec repodata.Record
	var file meta.PublishedFile
	bw, err := w.p.store.NewWriter(w.ctx)
	if err != nil {
		return rec, file, err
	}
	defer bw.Cancel(w.ctx)
	c := repodata.Compression(w.a.Compression)
	if !compress {
		c = repodata.None
	}
	cw, err := repodata.NewCompressWriter(bw, c, w.a.ChecksumType)
	if err != nil {
		return rec, file, err
	}
	if err := write(cw); err != nil {
		return rec, file, fmt.Errorf("write %s: %w", typ, err)
	}
	if err := cw.Close(); err != nil {
		return rec, file, err
	}
	sums := cw.Sums()
	dg, err := bw.Commit(w.ctx, blob.Expect{Size: sums.Size})
	if err != nil {
		return rec, file, err
	}
	art, _, err := meta.PutArtifact(w.ctx, w.p.db, meta.ArtifactOf(dg))
	if err != nil {
		return rec, file, err
	}
	href := "repodata/" + sums.Checksum + "-" + name + c.Ext()
	return sums.Record(typ, href, time.Now().Unix()), meta.PublishedFile{RelativePath: href, ArtifactID: &art.ID}, nil
}

// packages writes primary, filelists and other from the stored fragments, and returns
// where each package is served.
func (w *pubWriter) packages(repoID, n int64) ([]meta.PublishedFile, error) {
	var count int
	if err := w.p.db.QueryRow(w.ctx, `SELECT count(*) FROM contents c WHERE c.type = ? AND `+inVersion,
		PackageType, repoID, n, n).Scan(&count); err != nil {
		return nil, err
	}
	kinds := []repodata.Kind{repodata.Primary, repodata.Filelists, repodata.Other}
	names := []string{"primary", "filelists", "other"}
	// One pass over the stored fragments feeds three writers, each compressing its file
	// on its own goroutine: a package's row is read once, not once per file (its three
	// fragments sit in one row, so reading a later one walks the earlier ones' pages).
	recs := make([]repodata.Record, len(kinds))
	stored := make([]meta.PublishedFile, len(kinds))
	errs := make([]error, len(kinds))
	feeds := make([]chan []byte, len(kinds))
	var aborted atomic.Bool
	var wg sync.WaitGroup
	for i, kind := range kinds {
		feeds[i] = make(chan []byte, 64)
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i], stored[i], errs[i] = w.metadataFile(names[i], fileName(names[i]), true, func(out io.Writer) error {
				dw := repodata.NewDocumentWriter(out, kind, count)
				var err error
				for frag := range feeds[i] { // drained to the end even after a failure
					if err == nil {
						err = dw.WriteFragment(frag)
					}
				}
				if err != nil {
					return err
				}
				if aborted.Load() {
					return errors.New("publication abandoned")
				}
				return dw.Close()
			})
		}()
	}
	files, err := w.feedFragments(repoID, n, feeds)
	if err != nil {
		aborted.Store(true)
	}
	for _, f := range feeds {
		close(f)
	}
	wg.Wait()
	if err := errors.Join(append([]error{err}, errs...)...); err != nil {
		return nil, err
	}
	w.records = append(w.records, recs...)
	w.files = append(w.files, stored...)
	return files, nil
}

// feedFragments reads each package's fragments once, in NEVRA order, and sends them to
// the primary, filelists and other writers; it returns where each package is served.
// The order is the one the (type, repo_key) index delivers: ordering by anything else
// made SQLite sort every row, fragments and all, through temporary files.
func (w *pubWriter) feedFragments(repoID, n int64, feeds []chan []byte) ([]meta.PublishedFile, error) {
	rows, err := w.p.db.Query(w.ctx, `SELECT c.relative_path, ca.id, f.primary_xml, f.filelists_xml, f.other_xml FROM contents c
		JOIN rpm_fragments f ON f.content_id = c.id
		JOIN content_artifacts ca ON ca.content_id = c.id
		WHERE c.type = ? AND `+inVersion+` ORDER BY c.repo_key, c.id`, PackageType, repoID, n, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var files []meta.PublishedFile
	paths := map[string]bool{}
	for rows.Next() {
		var location string
		var caID int64
		var frags [3][]byte
		if err := rows.Scan(&location, &caID, &frags[0], &frags[1], &frags[2]); err != nil {
			return nil, err
		}
		served := packagePath(w.a.Layout, location)
		if paths[served] {
			return nil, fmt.Errorf("two packages of version %d are named %s", n, path.Base(location))
		}
		paths[served] = true
		frags[0] = repodata.Relocate(frags[0], served)
		files = append(files, meta.PublishedFile{RelativePath: served, ContentArtifactID: &caID})
		for i, f := range frags {
			feeds[i] <- f
		}
	}
	return files, rows.Err()
}

// units reads the attrs of the units of a type in a version.
func (w *pubWriter) units(typ string, repoID, n int64, fn func(attrs []byte) error) (int, error) {
	rows, err := w.p.db.Query(w.ctx, `SELECT c.attrs FROM contents c WHERE c.type = ? AND `+inVersion+` ORDER BY c.repo_key, c.id`,
		typ, repoID, n, n)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	count := 0
	for rows.Next() {
		var attrs string
		if err := rows.Scan(&attrs); err != nil {
			return count, err
		}
		if err := fn([]byte(attrs)); err != nil {
			return count, err
		}
		count++
	}
	return count, rows.Err()
}

func (w *pubWriter) advisories(repoID, n int64) error {
	var us []*updateinfo.Update
	if _, err := w.units(AdvisoryType, repoID, n, func(b []byte) error {
		u := &updateinfo.Update{}
		us = append(us, u)
		return json.Unmarshal(b, u)
	}); err != nil || len(us) == 0 {
		return err
	}
	return w.metadata("updateinfo", fileName("updateinfo"), true, func(out io.Writer) error {
		uw := updateinfo.NewWriter(out)
		for _, u := range us {
			if err := uw.Write(u); err != nil {
				return err
			}
		}
		return uw.Close()
	})
}

func (w *pubWriter) comps(repoID, n int64) error {
	c := &comps.Comps{}
	total := 0
	for _, t := range []struct {
		typ string
		add func([]byte) error
	}{
		{GroupType, func(b []byte) error { return decodeAppend(b, &c.Groups) }},
		{CategoryType, func(b []byte) error { return decodeAppend(b, &c.Categories) }},
		{EnvironmentType, func(b []byte) error { return decodeAppend(b, &c.Environments) }},
		{LangpacksType, func(b []byte) error { c.Langpacks = &comps.Langpacks{}; return json.Unmarshal(b, c.Langpacks) }},
	} {
		k, err := w.units(t.typ, repoID, n, t.add)
		if err != nil {
			return err
		}
		total += k
	}
	if total == 0 {
		return nil
	}
	return w.metadata("group", fileName("group"), false, func(out io.Writer) error { return comps.Write(out, c) })
}

func (w *pubWriter) modules(repoID, n int64) error {
	var snippets []string
	for _, typ := range []string{ModulemdType, DefaultsType, ObsoleteType} {
		if _, err := w.units(typ, repoID, n, func(b []byte) error {
			var s struct {
				Snippet string `json:"snippet"`
			}
			if err := json.Unmarshal(b, &s); err != nil {
				return err
			}
			snippets = append(snippets, s.Snippet)
			return nil
		}); err != nil {
			return err
		}
	}
	if len(snippets) == 0 {
		return nil
	}
	return w.metadata("modules", fileName("modules"), true, func(out io.Writer) error {
		mw := modulemd.NewWriter(out)
		for _, s := range snippets {
			if err := mw.WriteSnippet(s); err != nil {
				return err
			}
		}
		return mw.Close()
	})
}

// decodeAppend decodes a JSON value and appends it to a slice.
func decodeAppend[T any](b []byte, to *[]T) error {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*to = append(*to, v)
	return nil
}
