package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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

// The pulp export task (Pulp's pulp_export): the versions of a pulp exporter's
// repositories written in Pulp's format below the exporter's path (package
// content/port), streamed into the tar or its chunks, with a table of contents.

// exportDomain is the pulp_domain of every row pith exports: pith has one domain, and
// an importer replaces the column with its own.
const exportDomain = "00000000-0000-0000-0000-000000000000"

// portBatch is how many units an export reads per query; artifactBatch how many
// artifacts (their query evaluates the versions' membership again for each page).
const (
	portBatch     = 500
	artifactBatch = 5000
)

// exporterHref and exportHref are the hrefs of an exporter of a kind and of its exports.
func exporterHref(kind, id string) string {
	return href.Root + "exporters/core/" + kind + "/" + id + "/"
}

func exportHref(kind, exporterID, id string) string {
	return exporterHref(kind, exporterID) + "exports/" + id + "/"
}

// versionExport is a version an export writes, with its repository and type.
type versionExport struct {
	repo meta.Repository
	n    int64
	port content.Port
}

// parseVersionRef reads "repository pulp_id/number".
func parseVersionRef(s string) (string, int64, error) {
	id, num, ok := strings.Cut(s, "/")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil {
		return "", 0, fmt.Errorf("version %q is not repository/number", s)
	}
	return id, n, nil
}

// portOf is the Port of a repository's type, or an error naming the repository.
func (c *crud) portOf(repo meta.Repository) (content.Port, error) {
	t, ok := c.core.TypeOf(repo.Type)
	if !ok {
		return content.Port{}, fmt.Errorf("repository %q: type %s is not served here", repo.Name, repo.Type)
	}
	p, ok := t.(content.Porter)
	if !ok {
		return content.Port{}, fmt.Errorf("repository %q: %s repositories cannot be exported", repo.Name, repo.Type)
	}
	return p.Port(), nil
}

// componentVersion is the version pith claims for a component (versions.json).
func (c *crud) componentVersion(name string) string {
	for _, v := range Versions(c.core.Types()) {
		if v.Component == name {
			return v.Version
		}
	}
	return ""
}

// exportState is what an export records of itself in its attrs.
type exportState struct {
	Params            json.RawMessage   `json:"params"`
	ExportedResources []string          `json:"exported_resources"`
	OutputFileInfo    map[string]string `json:"output_file_info"`
	TOCInfo           map[string]any    `json:"toc_info"`
	// Versions are the versions exported ("repository pulp_id/number"), the bases of
	// the next incremental export.
	Versions []string `json:"versions"`
}

func (c *crud) pulpExport(ctx context.Context, r *task.Run) error {
	var a pulpExportArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	db := c.core.DB
	x, err := meta.ExporterByPulpID(ctx, db, a.Exporter)
	if err != nil {
		return err
	}
	dir, err := content.AllowedPath(c.core.ExportPaths, x.Path)
	if err != nil {
		return fmt.Errorf("Path '%s' is not an allowed export path", x.Path)
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("Path '%s' must be a directory path", x.Path)
	}
	versions, err := c.exportVersions(ctx, a.Versions)
	if err != nil {
		return err
	}
	var base []meta.VersionKey
	if !a.Full {
		refs := a.StartVersions
		if len(refs) == 0 && x.LastExport != nil {
			last, err := meta.ExportByID(ctx, db, *x.LastExport)
			if err != nil {
				return err
			}
			var st exportState
			json.Unmarshal(last.Attrs, &st)
			refs = st.Versions
		}
		if base, err = baseVersions(ctx, db, versions, refs); err != nil {
			return err
		}
	}
	taskID := r.Task.PulpID
	st := exportState{Params: a.Params, OutputFileInfo: map[string]string{}}
	if len(st.Params) == 0 {
		st.Params = json.RawMessage("{}")
	}
	for _, v := range versions {
		st.ExportedResources = append(st.ExportedResources, href.Version(v.repo.Type, v.repo.PulpID, v.n))
		st.Versions = append(st.Versions, v.repo.PulpID+"/"+strconv.FormatInt(v.n, 10))
	}
	attrs, _ := json.Marshal(st)
	e, err := meta.CreateExport(ctx, db, meta.Export{Owner: x.ID, Task: &taskID, Attrs: attrs})
	if err != nil {
		return err
	}
	r.Created(pulpExporters.exportHref(x.PulpID, e.PulpID))
	keys := make([]meta.VersionKey, len(versions))
	for i, v := range versions {
		keys[i] = meta.VersionKey{RepositoryID: v.repo.ID, Number: v.n}
	}
	if path, err := meta.UnstoredFile(ctx, db, keys); err != nil {
		return err
	} else if path != "" {
		return fmt.Errorf("Remote artifacts cannot be exported. (%s is not downloaded)", path)
	}
	name := filepath.Join(dir, fmt.Sprintf("export-%s-%s.tar", e.PulpID, time.Now().UTC().Format("20060102_1504")))
	out, err := port.Create(name, a.ChunkSize)
	if err != nil {
		return fmt.Errorf("export to %s: %w", x.Path, err)
	}
	defer out.Abort()
	if err := c.writeExport(ctx, r, out, versions, keys, base); err != nil {
		return err
	}
	m := map[string]any{}
	if len(a.Meta) > 0 {
		if err := json.Unmarshal(a.Meta, &m); err != nil {
			return fmt.Errorf("meta: %w", err)
		}
	}
	res, err := out.Finish(ctx, m)
	if err != nil {
		return fmt.Errorf("export to %s: %w", x.Path, err)
	}
	for _, f := range res.Files {
		st.OutputFileInfo[f.Path] = f.CRC
	}
	st.OutputFileInfo[res.TOC] = res.TOCSHA256
	delete(m, "checksum_type")
	st.TOCInfo = map[string]any{"file": res.TOC, "sha256": res.TOCSHA256, "meta": m}
	e.Attrs, _ = json.Marshal(st)
	return meta.FinishExport(ctx, db, e)
}

// exportVersions reads the versions an export writes.
func (c *crud) exportVersions(ctx context.Context, refs []string) ([]versionExport, error) {
	var out []versionExport
	for _, ref := range refs {
		id, n, err := parseVersionRef(ref)
		if err != nil {
			return nil, err
		}
		repo, err := meta.RepositoryByPulpID(ctx, c.core.DB, id)
		if err != nil {
			return nil, err
		}
		if _, err := meta.VersionByNumber(ctx, c.core.DB, repo.ID, n); err != nil {
			return nil, err
		}
		p, err := c.portOf(repo)
		if err != nil {
			return nil, err
		}
		out = append(out, versionExport{repo: repo, n: n, port: p})
	}
	return out, nil
}

// baseVersions matches the base versions of an incremental export to the versions
// exported, by repository; a repository without a base fails, as in Pulp.
func baseVersions(ctx context.Context, q meta.Querier, versions []versionExport, refs []string) ([]meta.VersionKey, error) {
	byRepo := map[string]int64{}
	for _, ref := range refs {
		id, n, err := parseVersionRef(ref)
		if err != nil {
			return nil, err
		}
		byRepo[id] = n
	}
	var out []meta.VersionKey
	for _, v := range versions {
		n, ok := byRepo[v.repo.PulpID]
		if !ok {
			return nil, fmt.Errorf("repository %q has no version to start an incremental export from (it was not in the last export)", v.repo.Name)
		}
		if _, err := meta.VersionByNumber(ctx, q, v.repo.ID, n); err != nil {
			return nil, fmt.Errorf("the start version %d of repository %q: %w", n, v.repo.Name, err)
		}
		out = append(out, meta.VersionKey{RepositoryID: v.repo.ID, Number: n})
	}
	return out, nil
}

// writeExport writes the members of an export.
func (c *crud) writeExport(ctx context.Context, r *task.Run, out *port.Export, versions []versionExport, keys, base []meta.VersionKey) error {
	stamp := func(comp string) map[string]string {
		v := c.componentVersion(comp)
		if s, ok := c.core.ExportVersions[comp]; ok {
			v = s
		}
		return map[string]string{"component": comp, "version": v}
	}
	comps := []map[string]string{stamp("core")}
	seen := map[string]bool{}
	for _, v := range versions {
		if !seen[v.port.App] {
			seen[v.port.App] = true
			comps = append(comps, stamp(v.port.App))
		}
	}
	if err := out.JSON("versions.json", comps); err != nil {
		return err
	}
	// The artifacts go into the tar while the versions' resources are rendered into
	// their spools: the two share only the tar (port.Export serializes its members), so
	// on two cores an export takes about the longer of the two, not their sum. The
	// artifact rows (with every digest an importer requires: those the store did not
	// record are computed as the blob is written) are written last, after the files
	// the types added (portOut.AddFile). Pulp's importers read the tar whole, in any
	// order.
	arts, err := out.Resource("pulpcore.app.modelresource.ArtifactResource.json", "file", "size", "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "pulp_domain")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	artsDone := make(chan error, 1)
	prog := r.Progress("export.artifacts", "Exporting Artifacts", -1)
	go func() {
		err := c.exportArtifacts(ctx, prog, out, arts, keys, base)
		if err != nil {
			cancel()
		}
		artsDone <- err
	}()
	added, err := c.exportResources(ctx, r, out, versions)
	if err != nil {
		cancel()
	}
	if aerr := <-artsDone; aerr != nil {
		return aerr
	}
	if err != nil {
		return err
	}
	written := map[string]bool{}
	for _, f := range added {
		if written[f.digests.SHA256] {
			continue
		}
		written[f.digests.SHA256] = true
		d := f.digests
		name := "artifact/" + d.SHA256[:2] + "/" + d.SHA256[2:]
		if err := out.Member(name, int64(len(f.data)), bytes.NewReader(f.data)); err != nil {
			return err
		}
		if err := arts.Row(name, d.Size, d.MD5, d.SHA1, d.SHA224, d.SHA256, d.SHA384, d.SHA512, exportDomain); err != nil {
			return err
		}
	}
	return arts.Close()
}

// exportArtifacts writes the blobs and rows of the artifacts of the versions (keys)
// that the base versions lack.
func (c *crud) exportArtifacts(ctx context.Context, prog *task.Progress, out *port.Export, arts content.RowWriter, keys, base []meta.VersionKey) (err error) {
	defer func() { prog.Finish(err) }()
	var count int64
	for at := (meta.ExportCursor{}); at.Version < len(keys); {
		var page []meta.Artifact
		page, at, err = meta.ExportArtifacts(ctx, c.core.DB, keys, base, at, artifactBatch)
		if err != nil {
			return err
		}
		for _, a := range page {
			if err := c.exportArtifact(ctx, out, arts, a); err != nil {
				return err
			}
			count++
			prog.Add(1)
		}
	}
	prog.SetTotal(count)
	return nil
}

// exportResources writes the repositories' rows and every version's directory, and
// returns the files the types added to their units.
func (c *crud) exportResources(ctx context.Context, r *task.Run, out *port.Export, versions []versionExport) ([]addedFile, error) {
	repos, err := out.Resource("pulpcore.app.modelresource.RepositoryResource.json",
		"pulp_type", "name", "description", "retain_repo_versions", "retain_checkpoints", "user_hidden", "pulp_domain")
	if err != nil {
		return nil, err
	}
	for _, v := range versions {
		if err := repos.Row(v.repo.Type, v.repo.Name, v.repo.Description, v.repo.RetainVersions, meta.RetainCheckpointsOf(v.repo.Attrs), false, exportDomain); err != nil {
			repos.Close()
			return nil, err
		}
	}
	if err := repos.Close(); err != nil {
		return nil, err
	}
	var added []addedFile
	var counts []int64
	for _, v := range versions {
		n, files, err := c.exportVersion(ctx, out, v)
		if err != nil {
			return nil, fmt.Errorf("repository %q version %d: %w", v.repo.Name, v.n, err)
		}
		added = append(added, files...)
		counts = append(counts, n)
	}
	for i, v := range versions {
		p := r.Progress("export.repo.version.content", fmt.Sprintf("Exporting content for %s repository-version %s/%d", v.port.App, v.repo.Name, v.n), counts[i])
		p.Add(counts[i])
		p.Finish(nil)
	}
	return added, nil
}

// addedFile is a file a type added to a unit (portOut.AddFile), an artifact of the
// export written once the artifacts of the versions are.
type addedFile struct {
	data    []byte
	digests blob.Digests
}

// exportArtifact writes an artifact's blob and its row.
func (c *crud) exportArtifact(ctx context.Context, out *port.Export, rows content.RowWriter, a meta.Artifact) error {
	name := "artifact/" + a.SHA256[:2] + "/" + a.SHA256[2:]
	rd, err := c.core.Store.Open(ctx, a.SHA256)
	if err != nil {
		if errors.Is(err, blob.ErrNotFound) {
			return fmt.Errorf("artifact %s is missing from storage (repair finds and refetches it)", a.SHA256)
		}
		return err
	}
	defer rd.Close()
	var missing []string
	for _, m := range []struct {
		name string
		v    *string
	}{{"sha224", a.SHA224}, {"sha384", a.SHA384}, {"sha512", a.SHA512}} {
		if m.v == nil {
			missing = append(missing, m.name)
		}
	}
	hr := blob.NewHashReader(rd, missing)
	if err := out.Member(name, a.Size, hr); err != nil {
		return err
	}
	if err := hr.Check(a.SHA256); err != nil {
		return fmt.Errorf("artifact %s in storage: %w (repair refetches it)", a.SHA256, err)
	}
	d := hr.Digests()
	pick := func(have *string, computed string) any {
		if have != nil {
			return *have
		}
		return computed
	}
	return rows.Row(name, a.Size, a.MD5, a.SHA1, pick(a.SHA224, d.SHA224), a.SHA256, pick(a.SHA384, d.SHA384), pick(a.SHA512, d.SHA512), exportDomain)
}

// exportVersion writes a version's directory: the type's repository row, the type's
// resources, the files of its units and, when the type mapped units, content_mapping.
// It returns the number of units and the files the type added.
func (c *crud) exportVersion(ctx context.Context, out *port.Export, v versionExport) (int64, []addedFile, error) {
	dir := fmt.Sprintf("repository-%s_%d/", v.repo.Name, v.n)
	rw, err := out.Resource(dir+v.port.RepositoryResource, append([]string{"pulp_type", "name", "description", "retain_repo_versions",
		"retain_checkpoints", "user_hidden", "pulp_domain"}, v.port.RepositoryColumns...)...)
	if err != nil {
		return 0, nil, err
	}
	own, err := v.port.RepositoryRow(v.repo)
	if err != nil {
		return 0, nil, err
	}
	if err := rw.Row(append([]any{v.repo.Type, v.repo.Name, v.repo.Description, v.repo.RetainVersions, meta.RetainCheckpointsOf(v.repo.Attrs), false, exportDomain}, own...)...); err != nil {
		return 0, nil, err
	}
	if err := rw.Close(); err != nil {
		return 0, nil, err
	}
	version, err := meta.VersionByNumber(ctx, c.core.DB, v.repo.ID, v.n)
	if err != nil {
		return 0, nil, err
	}
	po := &portOut{c: c, out: out, dir: dir, repo: v.repo, version: version, key: meta.VersionKey{RepositoryID: v.repo.ID, Number: v.n}}
	defer func() { po.mapping.close() }() // made by the first Map
	if err := v.port.Export(ctx, po); err != nil {
		return 0, nil, err
	}
	if err := po.mapping.failed(); err != nil {
		return 0, nil, err
	}
	// The files of every unit of the version, and of units the type mapped besides.
	files, err := out.Resource(dir+"pulpcore.app.modelresource.ContentArtifactResource.json", "artifact", "content", "relative_path")
	if err != nil {
		return 0, nil, err
	}
	var n int64
	writeFiles := func(ids []int64) error {
		fs, err := meta.PortFiles(ctx, c.core.DB, ids)
		if err != nil {
			return err
		}
		for _, f := range fs {
			if err := files.Row(f.SHA256, f.ContentPulpID, f.RelativePath); err != nil {
				return err
			}
		}
		return nil
	}
	for after := int64(0); ; {
		ids, err := meta.VersionUnitIDs(ctx, c.core.DB, po.key, after, portBatch)
		if err != nil {
			return 0, nil, err
		}
		if len(ids) == 0 {
			break
		}
		n += int64(len(ids))
		if err := writeFiles(ids); err != nil {
			return 0, nil, err
		}
		after = ids[len(ids)-1]
	}
	versionIDs := func(after int64) ([]int64, error) {
		return meta.VersionUnitIDs(ctx, c.core.DB, po.key, after, portBatch)
	}
	if err := po.mapping.outside(versionIDs, writeFiles); err != nil {
		return 0, nil, err
	}
	for _, f := range po.files {
		if err := files.Row(f.SHA256, f.ContentPulpID, f.RelativePath); err != nil {
			return 0, nil, err
		}
	}
	if err := files.Close(); err != nil {
		return 0, nil, err
	}
	if po.mapping != nil {
		if err := out.Stream(dir+"content_mapping.json", po.mapping.write); err != nil {
			return 0, nil, err
		}
	}
	return n, po.added, nil
}

// portOut is content.PortOut over an export being written.
type portOut struct {
	c       *crud
	out     *port.Export
	dir     string
	repo    meta.Repository
	version meta.Version
	key     meta.VersionKey
	mapping *exportMapping
	// added are the files the type added (AddFile), files their rows of the version.
	added []addedFile
	files []meta.PortFile
}

// AddFile exports a file of a unit that pith does not store as one of its files (rpm:
// a distribution tree's .treeinfo, which pulp_rpm stores as a file of the tree and its
// publish needs): an artifact of the export, and a file of the unit in this version.
func (p *portOut) AddFile(u meta.Content, relativePath string, data []byte) error {
	if _, err := content.CleanRelativePath(relativePath); err != nil {
		return err
	}
	hr := blob.NewHashReader(bytes.NewReader(data), []string{"md5", "sha1", "sha224", "sha384", "sha512"})
	if _, err := io.Copy(io.Discard, hr); err != nil {
		return err
	}
	d := hr.Digests()
	p.added = append(p.added, addedFile{data: data, digests: d})
	p.files = append(p.files, meta.PortFile{ContentPulpID: u.PulpID, RelativePath: relativePath, SHA256: d.SHA256})
	return nil
}

func (p *portOut) Q() meta.Querier             { return p.c.core.DB }
func (p *portOut) Repository() meta.Repository { return p.repo }
func (p *portOut) Version() meta.Version       { return p.version }
func (p *portOut) Domain() string              { return exportDomain }

func (p *portOut) Units(ctx context.Context, fn func([]meta.Content) error, types ...string) error {
	// A type the version holds none of is not looked for: each look reads every unit of
	// the version (rpm asks for nine types; most versions hold two or three).
	if present := p.version.Summary.Present; present != nil && len(types) > 0 {
		held := false
		for _, t := range types {
			held = held || present[t] > 0
		}
		if !held {
			return nil
		}
	}
	for after := int64(0); ; {
		page, err := meta.VersionUnits(ctx, p.c.core.DB, p.key, after, portBatch, types...)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		if err := fn(page); err != nil {
			return err
		}
		after = page[len(page)-1].ID
	}
}

func (p *portOut) Resource(name string, columns ...string) (content.RowWriter, error) {
	return p.out.Resource(p.dir+name, columns...)
}

func (p *portOut) Map(repository string, units []meta.Content) {
	if p.mapping == nil {
		p.mapping = newExportMapping()
	}
	p.mapping.add(repository, units)
}

// exportMapping is what a type mapped (PortOut.Map) for content_mapping.json, kept in
// temporary files (spill) so that an export's memory does not grow with its version:
// each repository's units' pulp_ids, by the repository's index and the unit's id, and
// the units' ids, whose files are exported too when they are not of the version.
type exportMapping struct {
	repos []string
	units *spill.Table // repository index (4 bytes) and unit id (8): pulp_id
	ids   *spill.Table // unit id (8)
	err   error        // the first failure to keep them
}

func newExportMapping() *exportMapping {
	return &exportMapping{units: spill.New("", 12), ids: spill.New("", 8)}
}

func (m *exportMapping) add(repository string, units []meta.Content) {
	if len(units) == 0 {
		return
	}
	i := slices.Index(m.repos, repository)
	if i < 0 {
		i = len(m.repos)
		m.repos = append(m.repos, repository)
	}
	var key [12]byte
	binary.BigEndian.PutUint32(key[:4], uint32(i))
	for _, u := range units {
		binary.BigEndian.PutUint64(key[4:], uint64(u.ID))
		if err := m.units.Add(key[:], []byte(u.PulpID)); err != nil && m.err == nil {
			m.err = err
		}
		if err := m.ids.Add(key[4:], nil); err != nil && m.err == nil {
			m.err = err
		}
	}
}

// failed is the first failure to keep what was mapped.
func (m *exportMapping) failed() error {
	if m == nil || m.err == nil {
		return nil
	}
	return fmt.Errorf("export: %w", m.err)
}

// outside calls write with the ids of the units mapped that the version does not hold,
// a batch at a time: both are read in id order and merged. versionIDs pages through the
// version's unit ids in order, those after an id.
func (m *exportMapping) outside(versionIDs func(after int64) ([]int64, error), write func([]int64) error) error {
	if m == nil {
		return nil
	}
	if err := m.ids.Sort(); err != nil {
		return err
	}
	var page, out []int64
	after, last, done := int64(0), int64(-1), false
	err := m.ids.Each(nil, func(k, _ []byte) error {
		id := int64(binary.BigEndian.Uint64(k))
		if id == last {
			return nil // mapped under more than one repository
		}
		last = id
		for !done && (len(page) == 0 || page[0] < id) {
			if len(page) > 0 {
				page = page[1:]
				continue
			}
			var err error
			if page, err = versionIDs(after); err != nil {
				return err
			}
			if len(page) == 0 {
				done = true
				break
			}
			after = page[len(page)-1]
		}
		if !done && page[0] == id {
			return nil
		}
		out = append(out, id)
		if len(out) == portBatch {
			err := write(out)
			out = out[:0]
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return write(out)
}

// write writes content_mapping.json: {"repository": ["pulp_id", …], …}, the
// repositories by name and each one's units by id, as Python's json.dumps spaces it.
func (m *exportMapping) write(w *bufio.Writer) error {
	if err := m.units.Sort(); err != nil {
		return err
	}
	order := make([]int, len(m.repos))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(m.repos[a], m.repos[b]) })
	var buf []byte
	w.WriteByte('{')
	for n, i := range order {
		if n > 0 {
			w.WriteString(", ")
		}
		buf, _ = content.AppendJSON(buf[:0], m.repos[i])
		w.Write(buf)
		w.WriteString(": [")
		var prefix [4]byte
		binary.BigEndian.PutUint32(prefix[:], uint32(i))
		first := true
		err := m.units.Each(prefix[:], func(_, v []byte) error {
			if !first {
				w.WriteString(", ")
			}
			first = false
			buf, _ = content.AppendJSON(buf[:0], string(v))
			_, err := w.Write(buf)
			return err
		})
		if err != nil {
			return err
		}
		w.WriteByte(']')
	}
	return w.WriteByte('}')
}

func (m *exportMapping) close() {
	if m != nil {
		m.units.Close()
		m.ids.Close()
	}
}
