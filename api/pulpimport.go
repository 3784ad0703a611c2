package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"pith/api/href"
	"pith/blob"
	"pith/content"
	"pith/content/port"
	"pith/internal/spill"
	"pith/meta"
	"pith/task"
)

// The pulp import task (Pulp's pulp_import): an export in Pulp's format, read in place
// (chunks checked against the table of contents first), checked whole before anything
// is written (versions, repositories and their types, every artifact named present),
// then its artifacts stored, each verified against its sha256 and size, and their rows
// written once all are. A failure until then removes the blobs the import wrote. Then
// each repository's version is a task of the import's group (Pulp's
// import_repository_version) that holds the destination repository, as a sync or a
// modify of it does, and makes the version with the units the repository's type reads
// (content.Port). The repositories create_repositories makes are made before those
// tasks are dispatched.

// Bounds of the JSON files an import reads whole.
const (
	maxVersionsJSON = 1 << 20
	maxMappingJSON  = 1 << 30
)

// importedRepo is what the import makes of one repository of the export.
type importedRepo struct {
	src  string // the export's name
	typ  string // its pulp_type
	dir  string // its version's directory, "repository-<name>_<n>/"
	port content.Port
	dest *meta.Repository // nil: created by the import
}

func (c *crud) pulpImport(ctx context.Context, r *task.Run) error {
	var a pulpImportArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	db := c.core.DB
	x, err := meta.ImporterByPulpID(ctx, db, a.Importer)
	if err != nil {
		return err
	}
	real, err := content.AllowedPath(c.core.ImportPaths, a.Path)
	if err != nil {
		return fmt.Errorf("path '%s' is not an allowed import path", a.Path)
	}
	paths := []string{real}
	if a.TOC {
		toc, chunks, err := port.ReadTOC(real)
		if err != nil {
			return err
		}
		prog := r.Progress("validate.chunks", "Validating Chunks", int64(len(chunks)))
		err = port.CheckChunks(toc, chunks, func() { prog.Add(1) })
		prog.Finish(err)
		if err != nil {
			return err
		}
		paths = chunks
	}
	params, _ := json.Marshal(map[string]any{"params": map[string]string{"path": a.Path}})
	taskID := r.Task.PulpID
	m, err := meta.CreateImport(ctx, db, meta.Import{Owner: x.ID, Task: &taskID, Attrs: params})
	if err != nil {
		return err
	}
	r.Created(importHref(x.PulpID, m.PulpID))
	ar, err := port.Open(paths)
	if err != nil {
		return err
	}
	defer ar.Close()
	if err := c.checkVersions(ar); err != nil {
		return err
	}
	repos, err := c.importPlan(ctx, ar, x, a.CreateRepositories)
	if err != nil {
		return err
	}
	if err := c.importArtifacts(ctx, r, ar); err != nil {
		return err
	}
	for _, ir := range repos {
		dest := ir.dest
		if dest == nil {
			var repo meta.Repository
			err := db.Tx(ctx, func(tx *meta.Tx) error {
				var err error
				repo, err = c.createImported(ctx, tx, ar, ir)
				return err
			})
			if err != nil {
				return fmt.Errorf("repository %q of the export: %w", ir.src, err)
			}
			dest = &repo
		}
		_, err := r.Dispatch(ctx, task.Spec{Name: importRepoTask,
			Args:      importRepoArgs{Importer: x.PulpID, Paths: paths, Source: ir.src, Repository: dest.PulpID},
			Exclusive: []string{href.Repository(dest.Type, dest.PulpID)}, Shared: []string{importerHref(x.PulpID)}})
		if err != nil {
			return err
		}
	}
	return nil
}

// importRepoTask makes a repository's version of the export (Pulp's
// import_repository_version), its artifacts already stored by the pulp import that
// dispatched it.
func (c *crud) importRepoTask(ctx context.Context, r *task.Run) error {
	var a importRepoArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	dest, err := meta.RepositoryByPulpID(ctx, c.core.DB, a.Repository)
	if err != nil {
		return err
	}
	ir := importedRepo{src: a.Source, typ: dest.Type, dest: &dest}
	t, ok := c.core.TypeOf(dest.Type)
	p, ok2 := t.(content.Porter)
	if !ok || !ok2 {
		return fmt.Errorf("repository %q: %s repositories cannot be imported", dest.Name, dest.Type)
	}
	ir.port = p.Port()
	ar, err := port.Open(a.Paths)
	if err != nil {
		return err
	}
	defer ar.Close()
	if ir.dir = versionDir(ar, a.Source); ir.dir == "" {
		return fmt.Errorf("No RepositoryVersion found for %s", a.Source)
	}
	if err := c.importRepository(ctx, r, ar, ir); err != nil {
		return fmt.Errorf("repository %q of the export: %w", ir.src, err)
	}
	return nil
}

// checkVersions checks the components the export was made with, as Pulp does, but by
// format: Pulp's export format has not changed from core 3.38 (crc32 checksums) to
// the newest release, so any 3.x core from 3.38 is accepted (Pulp itself demands the
// same X.Y, which no two releases a year apart share), and each plugin component must
// be served here.
func (c *crud) checkVersions(ar *port.Archive) error {
	var comps []struct{ Component, Version string }
	ok, err := ar.DecodeJSON("versions.json", &comps, maxVersionsJSON)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("the export has no versions.json: it is not a Pulp export")
	}
	var msgs []string
	for _, cv := range comps {
		mine := c.componentVersion(cv.Component)
		if mine == "" {
			msgs = append(msgs, fmt.Sprintf("Export uses %s which is not installed.", cv.Component))
			continue
		}
		major, minor := splitVersion(cv.Version)
		myMajor, _ := splitVersion(mine)
		if major != myMajor || (cv.Component == "core" && minor < 38) {
			msgs = append(msgs, fmt.Sprintf("Export version %s of %s incompatible with installed version %s.", cv.Version, cv.Component, mine))
		}
	}
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, " "))
	}
	return nil
}

// splitVersion reads X and Y of "X.Y.Z"; -1 for what is not a number.
func splitVersion(v string) (int, int) {
	parts := strings.SplitN(v, ".", 3)
	num := func(i int) int {
		if i >= len(parts) {
			return -1
		}
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return -1
		}
		return n
	}
	return num(0), num(1)
}

// importPlan reads the export's repositories and decides, before anything is written,
// where each goes: the repository repo_mapping names, or the one of its name, or a new
// one (create_repositories), or nowhere (skipped, as Pulp skips it, with a warning). A
// destination of another type, a type not served here, or a repository without its
// version's directory fails the import.
func (c *crud) importPlan(ctx context.Context, ar *port.Archive, x meta.Importer, create bool) ([]importedRepo, error) {
	var out []importedRepo
	err := ar.Rows("pulpcore.app.modelresource.RepositoryResource.json", func(row content.Row) error {
		name, err := row.Str("name")
		if err != nil {
			return err
		}
		typ, err := row.Str("pulp_type")
		if err != nil {
			return err
		}
		if name == "" {
			return errors.New("column name: empty")
		}
		ir := importedRepo{src: name, typ: typ}
		t, ok := c.core.TypeOf(typ)
		if !ok {
			return fmt.Errorf("repository %q: its type %s is not served here", name, typ)
		}
		p, ok := t.(content.Porter)
		if !ok {
			return fmt.Errorf("repository %q: %s repositories cannot be imported", name, typ)
		}
		ir.port = p.Port()
		if ir.dir = versionDir(ar, name); ir.dir == "" {
			return fmt.Errorf("No RepositoryVersion found for %s", name)
		}
		var dest meta.Repository
		if id, ok := x.Mapping[name]; ok {
			if dest, err = meta.RepositoryByID(ctx, c.core.DB, id); err != nil {
				return err
			}
		} else {
			found, _, err := meta.ListRepositories(ctx, c.core.DB, meta.List{Where: []string{"r.name = ?", "r.sub_of IS NULL"}, Args: []any{name}})
			if err != nil {
				return err
			}
			if len(found) == 0 {
				if !create {
					c.core.Log.Warn("import: no repository to import into; skipped (create_repositories makes it)", "repository", name)
					return nil
				}
				out = append(out, ir)
				return nil
			}
			dest = found[0]
		}
		if dest.Type != typ {
			return fmt.Errorf("repository %q is a %s repository; the export's repository %q is %s", dest.Name, dest.Type, name, typ)
		}
		ir.dest = &dest
		out = append(out, ir)
		return nil
	})
	return out, err
}

// versionDir is the directory of a repository's version in the export; the last one
// when there are several, as Pulp takes it.
func versionDir(ar *port.Archive, name string) string {
	re := regexp.MustCompile(`^(repository-` + regexp.QuoteMeta(name) + `_[0-9]+/)`)
	dir := ""
	for _, n := range ar.Names() {
		if m := re.FindStringSubmatch(n); m != nil {
			dir = m[1]
		}
	}
	return dir
}

// importArtifacts stores the export's artifacts that are not here yet, each verified
// against its row's size and digests, then records them all in one transaction. On
// failure the blobs it stored are removed again. What it stored is listed in a
// temporary file until then, not in memory: 40,000 artifacts' digests are 30 MB.
func (c *crud) importArtifacts(ctx context.Context, r *task.Run, ar *port.Archive) (err error) {
	prog := r.Progress("import.artifacts", "Importing Artifacts", -1)
	defer func() { prog.Finish(err) }()
	stored := newDigestSpool()
	defer stored.close()
	defer func() {
		if err != nil {
			c.forgetBlobs(stored)
		}
	}()
	err = ar.Rows("pulpcore.app.modelresource.ArtifactResource.json", func(row content.Row) error {
		a, member, err := artifactRow(row, ar)
		if err != nil {
			return err
		}
		if existing, err := meta.ArtifactBySHA256(ctx, c.core.DB, a.SHA256); err == nil {
			if _, err := c.core.Store.Stat(ctx, existing.SHA256); err == nil {
				prog.Add(1)
				return nil
			}
		}
		rd, ok, err := ar.Member(member)
		if err != nil {
			return fmt.Errorf("artifact %s: %w", a.SHA256, err)
		} else if !ok {
			return fmt.Errorf("artifact %s: %s is not in the export", a.SHA256, member)
		}
		want := blob.Expect{Size: a.Size, SHA256: a.SHA256, Digests: map[string]string{}}
		for name, v := range map[string]*string{"md5": a.MD5, "sha1": a.SHA1, "sha224": a.SHA224, "sha384": a.SHA384, "sha512": a.SHA512} {
			if v != nil {
				want.Digests[name] = *v
			}
		}
		d, err := c.core.Store.Put(ctx, rd, want)
		var mm *blob.MismatchError
		if errors.As(err, &mm) {
			return fmt.Errorf("artifact %s: its %s in the export is %s, not %s", member, mm.What, mm.Got, mm.Want)
		}
		if err != nil {
			return fmt.Errorf("artifact %s: %w", member, err)
		}
		if err := stored.add(d); err != nil {
			return err
		}
		prog.Add(1)
		return nil
	})
	if err != nil {
		return err
	}
	return c.core.DB.Tx(ctx, func(tx *meta.Tx) error {
		return stored.each(func(d blob.Digests) error {
			_, _, err := meta.PutArtifact(ctx, tx, meta.ArtifactOf(d))
			return err
		})
	})
}

// forgetBlobs removes the blobs an import stored when no artifact row has come to name
// them since (another task may have stored the same file meanwhile).
func (c *crud) forgetBlobs(stored *digestSpool) {
	ctx := context.Background()
	err := stored.each(func(d blob.Digests) error {
		if _, err := meta.ArtifactBySHA256(ctx, c.core.DB, d.SHA256); err == nil {
			return nil
		}
		if err := c.core.Store.Delete(ctx, d.SHA256); err != nil && !errors.Is(err, blob.ErrNotFound) {
			c.core.Log.Warn("import: remove a blob of a failed import", "sha256", d.SHA256, "err", err)
		}
		return nil
	})
	if err != nil {
		c.core.Log.Warn("import: read the list of the blobs of a failed import", "err", err)
	}
}

// digestSpool is a list of blobs' digests in a temporary file (spill), by sha256.
type digestSpool struct{ t *spill.Table }

func newDigestSpool() *digestSpool { return &digestSpool{spill.New("", sha256.Size)} }

func (s *digestSpool) add(d blob.Digests) error {
	key, err := hex.DecodeString(d.SHA256)
	if err != nil || len(key) != sha256.Size {
		return fmt.Errorf("import: a blob's sha256 %q", d.SHA256)
	}
	v, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := s.t.Add(key, v); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return nil
}

// each calls fn with every digest added, by sha256 (after the last add).
func (s *digestSpool) each(fn func(blob.Digests) error) error {
	if err := s.t.Sort(); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	return s.t.Each(nil, func(_, v []byte) error {
		var d blob.Digests
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("import: a blob's digests: %w", err)
		}
		return fn(d)
	})
}

func (s *digestSpool) close() { s.t.Close() }

// artifactRow reads an artifact row and finds its member: the row's file, or the name
// Pulp gives it from its sha256 (with or without a domain).
func artifactRow(row content.Row, ar *port.Archive) (meta.Artifact, string, error) {
	var a meta.Artifact
	sum, err := row.Str("sha256")
	if err != nil {
		return a, "", err
	}
	if !blob.ValidDigest(sum) {
		return a, "", fmt.Errorf("column sha256: %q is not a sha256", sum)
	}
	a.SHA256 = sum
	size, ok, err := row.Int("size")
	if err != nil {
		return a, "", err
	}
	if !ok || size < 0 {
		return a, "", errors.New("column size: missing")
	}
	a.Size = size
	for name, dst := range map[string]**string{"md5": &a.MD5, "sha1": &a.SHA1, "sha224": &a.SHA224, "sha384": &a.SHA384, "sha512": &a.SHA512} {
		v, err := row.Str(name)
		if err != nil {
			return a, "", err
		}
		if v != "" {
			*dst = &v
		}
	}
	file, err := row.Str("file")
	if err != nil {
		return a, "", err
	}
	for _, m := range []string{file, "artifact/" + sum[:2] + "/" + sum[2:], "artifact/DOMAIN/" + sum[:2] + "/" + sum[2:]} {
		if m == "" {
			continue
		}
		if ok, err := ar.Has(m); ok || err != nil {
			return a, m, err
		}
	}
	return a, "", fmt.Errorf("artifact %s is named in ArtifactResource.json but not in the export", sum)
}

// importRepository makes one repository's new version from its directory in the
// export: the units (its type's Port) and their files, in transactions of about two
// seconds, and in the last the version holding exactly what the export's version held.
func (c *crud) importRepository(ctx context.Context, r *task.Run, ar *port.Archive, ir importedRepo) error {
	files, err := c.importFiles(ctx, ar, ir.dir)
	if err != nil {
		return err
	}
	defer files.close()
	mapping, err := readMapping(ar, ir.dir+"content_mapping.json")
	if err != nil {
		return err
	}
	if mapping != nil {
		defer mapping.close()
	}
	dest := ir.dest
	var v meta.Version
	created := false
	pi := &portIn{ctx: ctx, ar: ar, dir: ir.dir, files: files, mapping: mapping, repo: *dest}
	prog := r.Progress("import.repo.version.content", "Importing content for "+ir.src, -1)
	var n int
	defer func() { pi.imported.close() }()
	err = c.core.DB.Tx(ctx, func(tx *meta.Tx) error {
		pi.tx, pi.rotated = tx, time.Now()
		// A retried transaction imports every unit again, and records each again.
		if pi.imported != nil {
			pi.imported.close()
		}
		pi.imported, pi.err = newLocalUnits(), nil
		if err := ir.port.Import(ctx, pi); err != nil {
			return err
		}
		if pi.rotateErr != nil {
			return pi.rotateErr
		}
		if pi.err != nil {
			return pi.err
		}
		ids, err := pi.versionUnits(ir.src)
		if err != nil {
			return err
		}
		n = len(ids)
		v, created, err = meta.NewVersion(ctx, tx, dest.ID, meta.Change{RemoveAll: true, Add: ids, Finalize: c.core.Finalize})
		return err
	})
	// Progress is saved on another connection: never while the transaction holds
	// SQLite's one write lock.
	prog.SetTotal(int64(n))
	prog.Add(int64(n))
	prog.Finish(err)
	if err != nil {
		return err
	}
	if !created {
		return nil
	}
	c.core.Invalidate()
	return c.core.VersionMade(ctx, r, *dest, v)
}

// createImported creates the destination of create_repositories under the export's
// name, with the fields of its rows.
func (c *crud) createImported(ctx context.Context, tx *meta.Tx, ar *port.Archive, ir importedRepo) (meta.Repository, error) {
	fields := map[string]any{"name": ir.src}
	found := false
	err := ar.Rows(ir.dir+ir.port.RepositoryResource, func(row content.Row) error {
		if found {
			return nil
		}
		found = true
		own, err := ir.port.RepositoryFields(row)
		if err != nil {
			return err
		}
		for k, v := range own {
			fields[k] = v
		}
		if d, err := row.Str("description"); err != nil {
			return err
		} else if d != "" {
			fields["description"] = d
		}
		for _, col := range []string{"retain_repo_versions", "retain_checkpoints"} {
			if n, ok, err := row.Int(col); err != nil {
				return err
			} else if ok {
				fields[col] = n
			}
		}
		return nil
	})
	if err != nil {
		return meta.Repository{}, err
	}
	k, ok := c.core.Table().RepoKind(ir.typ)
	if !ok {
		return meta.Repository{}, fmt.Errorf("no repository kind %s", ir.typ)
	}
	repo, err := applyRepo(ctx, tx, meta.Repository{}, k, body(fields), false)
	if err != nil {
		return meta.Repository{}, fmt.Errorf("create repository %q: %w", ir.src, err)
	}
	return meta.CreateRepository(ctx, tx, repo)
}

// importFiles reads a version's ContentArtifact rows: each unit's files by upstream id,
// their artifacts resolved to local ones by sha256.
func (c *crud) importFiles(ctx context.Context, ar *port.Archive, dir string) (*unitFiles, error) {
	type pending struct {
		unit string
		rel  string
		sum  string
	}
	out := newUnitFiles()
	var batch []pending
	flush := func() error {
		var sums []string
		for _, p := range batch {
			if p.sum != "" {
				sums = append(sums, p.sum)
			}
		}
		ids, err := meta.ArtifactIDsBySHA256(ctx, c.core.DB, sums)
		if err != nil {
			return err
		}
		for _, p := range batch {
			var artifact int64
			if p.sum != "" {
				id, ok := ids[p.sum]
				if !ok {
					return fmt.Errorf("the file %s of unit %s has artifact %s, which is neither in the export nor here", p.rel, p.unit, p.sum)
				}
				artifact = id
			}
			if err := out.add(keyOf(p.unit), p.rel, artifact); err != nil {
				return err
			}
		}
		batch = batch[:0]
		return nil
	}
	err := ar.Rows(dir+"pulpcore.app.modelresource.ContentArtifactResource.json", func(row content.Row) error {
		unit, err := row.Str("content")
		if err != nil {
			return err
		}
		rel, err := row.Str("relative_path")
		if err != nil {
			return err
		}
		sum, err := row.Str("artifact")
		if err != nil {
			return err
		}
		if unit == "" {
			return errors.New("column content: empty")
		}
		if _, err := content.CleanRelativePath(rel); err != nil {
			return fmt.Errorf("column relative_path: %w", err)
		}
		if sum != "" && !blob.ValidDigest(sum) {
			return fmt.Errorf("column artifact: %q is not a sha256", sum)
		}
		batch = append(batch, pending{unit: unit, rel: rel, sum: sum})
		if len(batch) == portBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = out.sort()
	}
	if err != nil {
		out.close()
		return nil, err
	}
	return out, nil
}

// rotateEvery is how long an import writes in one transaction before it commits what
// it has and goes on in another (meta.Tx.Rotate): a long write would keep SQLite's
// other writers (task leases, heartbeats, the API) waiting.
var rotateEvery = 2 * time.Second

// portIn is content.PortIn over an export being imported.
type portIn struct {
	ctx     context.Context
	rotated time.Time // when tx last began
	// rotateErr is a failed rotation, err a failure to keep or read the per-unit
	// state: the import fails with them.
	rotateErr, err error
	ar             *port.Archive
	dir            string
	tx             *meta.Tx
	repo           meta.Repository
	files          *unitFiles
	mapping        *unitMapping
	imported       *localUnits
}

// Tx is the import's transaction, rotated every rotateEvery: a Port asks for it for
// each batch it stores, and the units stored so far are whole units (their version
// comes last, in the final transaction).
func (p *portIn) Tx() *meta.Tx {
	// Not after a failure: a unit stored since the last rotation may lack its files.
	if p.rotateErr == nil && p.err == nil && time.Since(p.rotated) > rotateEvery {
		p.rotateErr = p.tx.Rotate(p.ctx)
		p.rotated = time.Now()
	}
	return p.tx
}
func (p *portIn) Repository() meta.Repository { return p.repo }
func (p *portIn) Imported(upstream string, id int64) {
	if err := p.imported.add(keyOf(upstream), id); err != nil && p.err == nil {
		p.err = fmt.Errorf("import: %w", err)
	}
}
func (p *portIn) Files(upstream string) []meta.ContentFile {
	files, err := p.files.of(keyOf(upstream))
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("import: %w", err)
	}
	return files
}
func (p *portIn) Mapped(repository string) ([]int64, error) {
	if p.mapping == nil {
		return nil, nil
	}
	return p.mapping.local(repository, p.imported)
}
func (p *portIn) Rows(name string, fn func(content.Row) error) error {
	return p.ar.Rows(p.dir+name, fn)
}

// versionUnits are the local units of the new version: those content_mapping lists
// under the source repository's name, or every unit imported when there is none.
func (p *portIn) versionUnits(src string) ([]int64, error) {
	if p.mapping == nil {
		return p.imported.all()
	}
	return p.mapping.local(src, p.imported)
}
