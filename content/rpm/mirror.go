package rpm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"

	"pith/blob"
	"pith/content"
	"pith/content/download"
	"pith/content/rpm/repodata"
	"pith/meta"
)

// A mirror_complete sync republishes the upstream repository as it is: its repomd.xml
// (and signature), every metadata file repomd.xml lists, extra_files.json and what it
// names, and each package at its upstream location. The publication is made by the sync,
// so clients see exactly the metadata upstream signed.

// errMirrorIncompatible starts the error of a repository whose metadata can't be served
// as it is from here (Pulp refuses the same repositories).
const errMirrorIncompatible = "this repository uses features which are incompatible with the 'mirror_complete' sync policy; sync it with mirror_content_only"

// unmirrorable are the metadata types pith does not serve (delta rpms).
var unmirrorable = []string{"prestodelta", "deltainfo"}

// mirror is what a mirror_complete sync collects for its publication.
type mirror struct {
	files     []meta.PublishedFile // metadata files, stored as artifacts
	locations map[int64][]string   // package unit → where upstream serves it
	subs      []subMirror          // the distribution tree's sub-repositories
}

// subMirror is a sub-repository's mirror, published under its path in the tree.
type subMirror struct {
	path    string
	repoID  int64
	version int64
	m       *mirror
}

func newMirror() *mirror { return &mirror{locations: map[int64][]string{}} }

// checkMirrorable refuses a repomd.xml whose records can't be republished as they are.
func checkMirrorable(md *repodata.Repomd) error {
	for _, rec := range md.Records {
		switch {
		case rec.LocationBase != "":
			return fmt.Errorf("repodata/repomd.xml: %s: the %s record points at xml:base %q, outside the repository", errMirrorIncompatible, rec.Type, rec.LocationBase)
		case slices.Contains(unmirrorable, rec.Type):
			return fmt.Errorf("repodata/repomd.xml: %s: it lists %s metadata (delta rpms), which this server does not serve", errMirrorIncompatible, rec.Type)
		}
		if _, err := content.CleanRelativePath(rec.LocationHref); err != nil {
			return fmt.Errorf("repodata/repomd.xml: %s: the %s record's location %q: %w", errMirrorIncompatible, rec.Type, rec.LocationHref, err)
		}
	}
	return nil
}

// checkMirrorablePackage refuses a package served from outside the repository.
func checkMirrorablePackage(pkg *repodata.Package, primary string) error {
	if pkg.LocationBase != "" {
		return fmt.Errorf("%s: %s: package %s is served from xml:base %q, outside the repository", primary, errMirrorIncompatible, pkg.NEVRA(), pkg.LocationBase)
	}
	return nil
}

// store puts a staged file, from its start, in the blob store as an artifact; name is
// what errors call it.
func (s *syncRun) store(ctx context.Context, f io.ReadSeeker, name string) (meta.Artifact, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return meta.Artifact{}, err
	}
	dg, err := s.p.store.Put(ctx, f, blob.Expect{Size: -1})
	if err != nil {
		return meta.Artifact{}, fmt.Errorf("store %s: %w", name, err)
	}
	art, _, err := meta.PutArtifact(ctx, s.p.db, meta.ArtifactOf(dg))
	return art, err
}

// keep stores a staged file and publishes it at href in the mirror's publication.
func (s *syncRun) keep(ctx context.Context, f io.ReadSeeker, href string) error {
	art, err := s.store(ctx, f, href)
	if err != nil {
		return err
	}
	s.mirror.add(href, art)
	return nil
}

// add publishes a stored artifact at href.
func (m *mirror) add(href string, art meta.Artifact) {
	m.files = append(m.files, meta.PublishedFile{RelativePath: href, ArtifactID: &art.ID})
}

// optional fetches a file upstream may not have: nil, nil when it answers 403 or 404.
func (s *syncRun) optional(ctx context.Context, href string) (*os.File, error) {
	f, _, err := s.fetchTemp(ctx, s.base+href, "sha256", download.Expect{Size: -1})
	var de *download.Error
	if errors.As(err, &de) && (de.Status == http.StatusNotFound || de.Status == http.StatusForbidden) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", href, err)
	}
	return f, nil
}

// mirrorExtras keeps repomd.xml's signature and key, and extra_files.json with the files
// it lists (checked against their sizes and sha256), when upstream has them.
func (s *syncRun) mirrorExtras(ctx context.Context) error {
	for _, href := range []string{"repodata/repomd.xml.asc", "repodata/repomd.xml.key", "extra_files.json"} {
		f, err := s.optional(ctx, href)
		if err != nil || f == nil {
			return err
		}
		err = s.keep(ctx, f, href)
		if err == nil && href == "extra_files.json" {
			err = s.extraFiles(ctx, f)
		}
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// extraFiles keeps the files extra_files.json lists (an EULA, a GPG key, ...).
func (s *syncRun) extraFiles(ctx context.Context, f *os.File) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	var ef struct {
		Data []struct {
			File      string            `json:"file"`
			Size      int64             `json:"size"`
			Checksums map[string]string `json:"checksums"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(f, 16<<20)).Decode(&ef); err != nil {
		return fmt.Errorf("extra_files.json: %w", err)
	}
	for i, e := range ef.Data {
		if _, err := content.CleanRelativePath(e.File); err != nil {
			return fmt.Errorf("extra_files.json: data[%d]: file %q: %w", i, e.File, err)
		}
		ff, sum, err := s.fetchTemp(ctx, content.JoinURL(s.base, e.File), "sha256", download.Expect{Size: e.Size})
		if err != nil {
			return fmt.Errorf("extra_files.json: %s: %w", e.File, err)
		}
		if want := e.Checksums["sha256"]; want != "" && !strings.EqualFold(want, sum) {
			ff.Close()
			return fmt.Errorf("extra_files.json: %s: sha256 mismatch: extra_files.json says %s, the file has %s", e.File, want, sum)
		}
		err = s.keep(ctx, ff, e.File)
		ff.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// mirrorPublication publishes version n of repo as upstream has it: the kept metadata
// (repo metadata files among it), each package at its upstream location, the
// distribution tree's files at theirs, and its sub-repositories under their paths.
func (p *Plugin) mirrorPublication(ctx context.Context, repo meta.Repository, n int64, m *mirror) (meta.Publication, error) {
	files, err := p.mirrorFiles(ctx, repo.ID, n, m, "")
	if err != nil {
		return meta.Publication{}, err
	}
	for _, sm := range m.subs {
		sub, err := p.mirrorFiles(ctx, sm.repoID, sm.version, sm.m, sm.path+"/")
		if err != nil {
			return meta.Publication{}, fmt.Errorf("%s: %w", sm.path, err)
		}
		files = append(files, sub...)
	}
	if err := uniquePaths(files); err != nil {
		return meta.Publication{}, err
	}
	// The checksum type of mirrored metadata is whatever upstream chose: "unknown", as
	// Pulp says.
	attrs, _ := json.Marshal(PubAttrs{ChecksumType: "unknown", CompressionType: "none", Layout: "nested_alphabetically"})
	var pub meta.Publication
	err = p.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		pub, err = meta.CreatePublication(ctx, tx, meta.Publication{Type: RepoType, RepositoryID: repo.ID, VersionNumber: n, Attrs: attrs}, files)
		return err
	})
	return pub, err
}

// mirrorFiles lists what the mirror of version n of a repository serves, each path
// under prefix.
func (p *Plugin) mirrorFiles(ctx context.Context, repoID, n int64, m *mirror, prefix string) ([]meta.PublishedFile, error) {
	var files []meta.PublishedFile
	add := func(rel string, f meta.PublishedFile) {
		f.RelativePath = prefix + rel
		files = append(files, f)
	}
	for _, f := range m.files {
		add(f.RelativePath, f)
	}
	rows, err := p.db.Query(ctx, `SELECT c.id, c.type, ca.id, ca.relative_path FROM contents c
		JOIN content_artifacts ca ON ca.content_id = c.id
		WHERE c.type <> ? AND `+inVersion+` ORDER BY c.id`, RepoMetadataFileType, repoID, n, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var cID, caID int64
		var typ, rel string
		if err := rows.Scan(&cID, &typ, &caID, &rel); err != nil {
			return nil, err
		}
		if typ != PackageType {
			add(rel, meta.PublishedFile{ContentArtifactID: &caID})
			continue
		}
		locs := m.locations[cID]
		if len(locs) == 0 {
			return nil, fmt.Errorf("package %s of version %d is not in the mirrored metadata", rel, n)
		}
		for _, loc := range locs {
			add(loc, meta.PublishedFile{ContentArtifactID: &caID})
		}
	}
	return files, rows.Err()
}
