package ansible

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"

	"pith/api/href"
	"pith/api/rest"
	"pith/meta"
	"pith/serve/guard"
)

// The Galaxy API's reads: the API roots, collections, versions, their details and
// documentation, the download redirect and the client configuration.

// repoHref is the href of an ansible repository.
func repoHref(pulpID string) string { return href.Repository(RepoType, pulpID) }

// galaxyRoot is api/: the API versions, for any path (pulp_ansible answers it even for a
// path no distribution has).
func (p *Plugin) galaxyRoot(w http.ResponseWriter, r *http.Request) error {
	out := apiRoot{AvailableVersions: map[string]string{"v3": "v3/"}, CurrentVersion: "v3"}
	if r.PathValue("path") != "" {
		out.AvailableVersions["v1"] = "v1/"
	}
	return writeGalaxy(w, http.StatusOK, out)
}

// clientConfiguration names the distribution path the request came through (null
// through default/).
func (p *Plugin) clientConfiguration(w http.ResponseWriter, r *http.Request) error {
	var out clientConfiguration
	if path := r.PathValue("path"); path != "" {
		out.DefaultDistributionPath = &path
	}
	return writeGalaxy(w, http.StatusOK, out)
}

// servedRead resolves what a read's distribution serves: a distribution serving nothing
// is a 403, as pulp_ansible answers every read of it.
func (p *Plugin) servedRead(w http.ResponseWriter, r *http.Request) (dist, *vindex, bool, error) {
	d, ix, err := p.served(r)
	if err != nil {
		return d, nil, false, err
	}
	if d.Version == 0 {
		return d, nil, false, rest.ErrForbidden
	}
	return d, ix, p.galaxy.notModified(w, r, d), nil
}

// repoMetadata is content/<base>/collections/: when the served version was made.
func (p *Plugin) repoMetadata(w http.ResponseWriter, r *http.Request) error {
	d, _, done, err := p.servedRead(w, r)
	if err != nil || done {
		return err
	}
	return writeGalaxy(w, http.StatusOK, repoMetadataResponse{Published: rest.Time(d.Published)})
}

// renderCollection is a collection's Galaxy item.
func renderCollection(u galaxyURLs, c *icoll) galaxyCollection {
	return galaxyCollection{Href: u.collection(c.Namespace, c.Name), Namespace: c.Namespace, Name: c.Name, Deprecated: c.Deprecated,
		VersionsURL:    u.versions(c.Namespace, c.Name),
		HighestVersion: highestVersion{Href: u.version(c.Namespace, c.Name, c.Highest.Version), Version: c.Highest.Version},
		CreatedAt:      rest.Time(c.Created), UpdatedAt: rest.Time(c.Updated)}
}

// collectionOrder are the orderings of the collection lists, by the index's fields.
var collectionOrder = map[string]func(a, b *icoll) int{
	"name":              func(a, b *icoll) int { return compareStrings(a.Name, b.Name) },
	"namespace":         func(a, b *icoll) int { return compareStrings(a.Namespace, b.Namespace) },
	"pulp_created":      func(a, b *icoll) int { return compareInts(a.Created, b.Created) },
	"pulp_last_updated": func(a, b *icoll) int { return compareInts(a.Updated, b.Updated) },
	"pk":                func(a, b *icoll) int { return compareInts(a.Created, b.Created) },
	"pulp_id": func(a, b *icoll) int {
		return compareStrings(collectionID(a.Namespace, a.Name), collectionID(b.Namespace, b.Name))
	},
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareInts(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// filterCollections applies the collection lists' filters (namespace, name,
// deprecated) and ordering (default -pulp_created).
func filterCollections(r *http.Request, ix *vindex) ([]*icoll, error) {
	q := r.URL.Query()
	var out []*icoll
	for _, c := range ix.colls {
		if ns, ok := q["namespace"]; ok && c.Namespace != ns[0] {
			continue
		}
		if n, ok := q["name"]; ok && c.Name != n[0] {
			continue
		}
		if d, ok := q["deprecated"]; ok {
			want, err := strconv.ParseBool(d[0])
			if err != nil {
				return nil, rest.BadField("deprecated", "Enter a valid boolean.")
			}
			if c.Deprecated != want {
				continue
			}
		}
		out = append(out, c)
	}
	keys := q["ordering"]
	if len(keys) == 0 {
		keys = []string{"-pulp_created"}
	}
	var cmps []func(a, b *icoll) int
	for _, k := range keys {
		desc := len(k) > 0 && k[0] == '-'
		name := k
		if desc {
			name = k[1:]
		}
		cmp, ok := collectionOrder[name]
		if !ok {
			return nil, rest.BadField("ordering", "Select a valid choice. %s is not one of the available choices.", k)
		}
		if desc {
			asc := cmp
			cmp = func(a, b *icoll) int { return -asc(a, b) }
		}
		cmps = append(cmps, cmp)
	}
	slices.SortStableFunc(out, func(a, b *icoll) int {
		for _, c := range cmps {
			if n := c(a, b); n != 0 {
				return n
			}
		}
		return 0
	})
	return out, nil
}

// collectionsList is collections/index/: the served collections, paged.
func (p *Plugin) collectionsList(w http.ResponseWriter, r *http.Request) error {
	d, ix, done, err := p.servedRead(w, r)
	if err != nil || done {
		return err
	}
	colls, err := filterCollections(r, ix)
	if err != nil {
		return err
	}
	u, pg := urlsOf(r, d.BasePath), pagingOf(r)
	from, to := pg.window(len(colls))
	data := make([]any, 0, to-from)
	for _, c := range colls[from:to] {
		data = append(data, renderCollection(u, c))
	}
	return writeGalaxy(w, http.StatusOK, pg.page(r, len(colls), data))
}

// allCollections is collections/all-collections/: every served collection, unpaged.
func (p *Plugin) allCollections(w http.ResponseWriter, r *http.Request) error {
	d, ix, done, err := p.servedRead(w, r)
	if err != nil || done {
		return err
	}
	colls, err := filterCollections(r, ix)
	if err != nil {
		return err
	}
	u := urlsOf(r, d.BasePath)
	out := make([]galaxyCollection, 0, len(colls))
	for _, c := range colls {
		out = append(out, renderCollection(u, c))
	}
	return writeGalaxy(w, http.StatusOK, out)
}

// collectionDetail is collections/index/<ns>/<name>/.
func (p *Plugin) collectionDetail(w http.ResponseWriter, r *http.Request) error {
	d, ix, done, err := p.servedRead(w, r)
	if err != nil || done {
		return err
	}
	c := ix.collection(r.PathValue("namespace"), r.PathValue("name"))
	if c == nil {
		return rest.ErrNotFound
	}
	return writeGalaxy(w, http.StatusOK, renderCollection(urlsOf(r, d.BasePath), c))
}

// versionsList is …/versions/: a collection's served versions, newest first, paged; an
// unknown collection has none (200, as pulp_ansible answers). Asked for no more than a
// page, it answers from the index; filters and orderings go through the database.
func (p *Plugin) versionsList(w http.ResponseWriter, r *http.Request) error {
	d, ix, done, err := p.servedRead(w, r)
	if err != nil || done {
		return err
	}
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	u, pg := urlsOf(r, d.BasePath), pagingOf(r)
	var vs []*icv
	count := 0
	if pagingOnly(r) {
		if c := ix.collection(ns, name); c != nil {
			vs = c.Versions
		}
		count = len(vs)
		from, to := pg.window(len(vs))
		vs = vs[from:to]
	} else {
		q, err := rest.ParseList(r, p.db.Dialect(), galaxyVersionSpec())
		if err != nil {
			return err
		}
		inServed(&q.List, d, CollectionVersionType)
		dia := p.db.Dialect()
		q.List.And(dia.JSONText("c.attrs", "namespace")+" = ? AND "+dia.JSONText("c.attrs", "name")+" = ?", ns, name)
		if q.List.OrderBy == "" {
			q.List.OrderBy = "c.created DESC, c.id DESC"
		}
		q.List.Limit, q.List.Offset = pg.limit, pg.offset
		cs, total, err := meta.ListContent(r.Context(), p.db, q.List)
		if err != nil {
			return q.Explain(err)
		}
		count = int(total)
		for _, c := range cs {
			if v := ix.byID[c.ID]; v != nil {
				vs = append(vs, v)
			}
		}
	}
	data := make([]any, 0, len(vs))
	for _, v := range vs {
		data = append(data, renderVersionItem(u, v))
	}
	return writeGalaxy(w, http.StatusOK, pg.page(r, count, data))
}

// pagingOnly reports whether a list request asks nothing but a page.
func pagingOnly(r *http.Request) bool {
	for k := range r.URL.Query() {
		if k != "limit" && k != "offset" {
			return false
		}
	}
	return true
}

func renderVersionItem(u galaxyURLs, v *icv) galaxyVersionItem {
	return galaxyVersionItem{Version: v.Version, Href: u.version(v.Coll.Namespace, v.Coll.Name, v.Version), CreatedAt: rest.Time(v.Created),
		UpdatedAt: rest.Time(v.Updated), RequiresAnsible: v.RequiresAnsible, Marks: nonNil(v.Marks)}
}

// servedVersion finds the collection version a detail route names in what is served.
func (p *Plugin) servedVersion(w http.ResponseWriter, r *http.Request) (dist, *vindex, *icv, bool, error) {
	d, ix, done, err := p.servedRead(w, r)
	if err != nil || done {
		return d, ix, nil, done, err
	}
	v := ix.version(r.PathValue("namespace"), r.PathValue("name"), r.PathValue("version"))
	if v == nil {
		return d, ix, nil, false, rest.ErrNotFound
	}
	return d, ix, v, false, nil
}

// versionDetail is …/versions/<v>/: everything ansible-galaxy installs and verifies
// from (download_url, the artifact's sha256, signatures, dependencies).
func (p *Plugin) versionDetail(w http.ResponseWriter, r *http.Request) error {
	d, ix, v, done, err := p.servedVersion(w, r)
	if err != nil || done {
		return err
	}
	u := urlsOf(r, d.BasePath)
	key := ix.key + "\x00" + v.PulpID + "\x00" + u.base + "\x00" + rest.OriginOf(r.Context())
	if b, ok := p.galaxy.details.Get(key); ok {
		return writeRaw(w, b)
	}
	c, err := meta.ContentByPulpID(r.Context(), p.db, v.PulpID)
	if err != nil {
		return err
	}
	arts, err := meta.UnitArtifacts(r.Context(), p.db, []meta.Content{c})
	if err != nil {
		return err
	}
	out, err := p.renderVersion(r, d, ix, v, c, arts[0], true)
	if err != nil {
		return err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	p.galaxy.details.Put(key, b)
	return writeRaw(w, b)
}

func writeRaw(w http.ResponseWriter, b []byte) error {
	w.Header()["Content-Type"] = []string{"application/json"}
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}

// renderVersion is the detail of v (its unit c, its artifact art, nil for none); docs
// adds its manifest and file list.
func (p *Plugin) renderVersion(r *http.Request, d dist, ix *vindex, v *icv, c meta.Content, art *meta.Artifact, docs bool) (galaxyVersion, error) {
	ctx := r.Context()
	a := decodeAttrs[cvAttrs](c.Attrs)
	u := urlsOf(r, d.BasePath)
	out := galaxyVersion{galaxyVersionItem: renderVersionItem(u, v),
		Collection: collectionRef{ID: collectionID(a.Namespace, a.Name), Name: a.Name, Href: u.collection(a.Namespace, a.Name)},
		Name:       a.Name, Namespace: versionNamespace{Name: a.Namespace}, Signatures: []galaxySignature{},
		Metadata: collectionMetadata{Authors: nonNil(a.Authors), Contents: a.Contents, Dependencies: a.Dependencies, Description: a.Description,
			Documentation: a.Documentation, Homepage: a.Homepage, Issues: a.Issues, License: nonNil(a.License), Repository: a.Repository, Tags: nonNil(a.Tags)}}
	if out.Metadata.Dependencies == nil {
		out.Metadata.Dependencies = map[string]string{}
	}
	if len(out.Metadata.Contents) == 0 {
		out.Metadata.Contents = json.RawMessage("[]")
	}
	if ns, ok := ix.namespaces[a.Namespace]; ok {
		out.Namespace.MetadataSHA256 = &ns.SHA256
	}
	if art != nil {
		out.Artifact = &artifactRef{Filename: c.RelativePath, SHA256: art.SHA256, Size: art.Size}
	} else if ref, err := p.onDemandArtifact(ctx, c); err != nil {
		return out, err
	} else {
		out.Artifact = ref
	}
	if out.Artifact != nil {
		dl := rest.OriginOf(ctx) + defaultRoot + "content/" + escapePath(d.BasePath) + "/collections/artifacts/" + escapePath(c.RelativePath)
		out.DownloadURL = &dl
	}
	for _, id := range v.Signatures {
		s, err := p.signatureOf(r, id)
		if err != nil {
			return out, err
		}
		out.Signatures = append(out.Signatures, s)
	}
	if docs {
		for _, doc := range []struct {
			name string
			dst  *json.RawMessage
		}{{manifestDoc, &out.Manifest}, {filesDoc, &out.Files}} {
			b, err := meta.Document(ctx, p.db, c.ID, doc.name)
			if err != nil && !errors.Is(err, meta.ErrNotFound) {
				return out, err
			}
			if len(b) == 0 {
				b = []byte("{}")
			}
			*doc.dst = b
		}
	}
	return out, nil
}

// onDemandArtifact is the artifact of a collection version synced on demand, as its
// remote declared it (the content app fetches it when it is first downloaded); nil when
// no remote declares its sha256 and size (a git sync's metadata only).
func (p *Plugin) onDemandArtifact(ctx context.Context, c meta.Content) (*artifactRef, error) {
	fs, err := meta.ContentFiles(ctx, p.db, c.ID)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		for _, src := range f.Remote {
			if f.Artifact == nil && f.RelativePath == c.RelativePath && src.SHA256 != nil && src.Size != nil {
				return &artifactRef{Filename: c.RelativePath, SHA256: *src.SHA256, Size: *src.Size}, nil
			}
		}
	}
	return nil, nil
}

// allVersions is collections/all-versions/: every served version's detail but its
// manifest and files, unpaged, its keys sorted as pulp_ansible writes them.
func (p *Plugin) allVersions(w http.ResponseWriter, r *http.Request) error {
	d, ix, done, err := p.servedRead(w, r)
	if err != nil || done {
		return err
	}
	l := meta.List{OrderBy: "c.id"}
	inServed(&l, d, CollectionVersionType)
	cs, _, err := meta.ListContent(r.Context(), p.db, l)
	if err != nil {
		return err
	}
	arts, err := meta.UnitArtifacts(r.Context(), p.db, cs)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(cs))
	for i, c := range cs {
		v := ix.byID[c.ID]
		if v == nil {
			continue
		}
		gv, err := p.renderVersion(r, d, ix, v, c, arts[i], false)
		if err != nil {
			return err
		}
		// Through a map, whose keys encoding/json sorts.
		var m map[string]any
		b, err := json.Marshal(gv)
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil {
			return err
		}
		out = append(out, m)
	}
	return writeGalaxy(w, http.StatusOK, out)
}

// signatureOf is a signature unit as the version detail shows it.
func (p *Plugin) signatureOf(r *http.Request, id int64) (galaxySignature, error) {
	var attrs string
	var created int64
	if err := p.db.QueryRow(r.Context(), `SELECT attrs, created FROM contents WHERE id = ?`, id).Scan(&attrs, &created); err != nil {
		return galaxySignature{}, err
	}
	a := decodeAttrs[sigAttrs](json.RawMessage(attrs))
	out := galaxySignature{Signature: a.Data, PubkeyFingerprint: a.PubkeyFingerprint, PulpCreated: rest.Time(created)}
	if a.SigningService != nil {
		var name string
		err := p.db.QueryRow(r.Context(), `SELECT name FROM signing_services WHERE pulp_id = ?`, *a.SigningService).Scan(&name)
		if err == nil {
			out.SigningService = &name
		}
	}
	return out, nil
}

// docsBlob is …/versions/<v>/docs-blob/.
func (p *Plugin) docsBlob(w http.ResponseWriter, r *http.Request) error {
	_, _, v, done, err := p.servedVersion(w, r)
	if err != nil || done {
		return err
	}
	b, err := meta.Document(r.Context(), p.db, v.ID, docsBlobDoc)
	if errors.Is(err, meta.ErrNotFound) || len(b) == 0 {
		b, err = []byte("{}"), nil
	}
	if err != nil {
		return err
	}
	return writeGalaxy(w, http.StatusOK, docsBlobResponse{DocsBlob: b})
}

// preauthenticate signs a content app URL of d for its content_redirect guard, as
// pulp_ansible's download redirect does, so that the client needs no credentials there;
// other guards are the client's to satisfy.
func (p *Plugin) preauthenticate(r *http.Request, d dist, u string) (string, error) {
	if d.Guard == "" {
		return u, nil
	}
	g, err := meta.GuardByPulpID(r.Context(), p.db, d.Guard)
	if err != nil || g.Type != "core.content_redirect" {
		return u, err
	}
	var attrs struct {
		SharedSecret string `json:"shared_secret"`
	}
	json.Unmarshal(g.Attrs, &attrs)
	salt := make([]byte, 8)
	rand.Read(salt)
	return guard.Preauthenticate(attrs.SharedSecret, u, salt, time.Now())
}

// artifactName is what the download route accepts (pulp_ansible's pattern).
var artifactName = regexp.MustCompile(`^(\w+)-(\w+)-([\w.-]+)\.tar\.gz$`)

// artifactDownload is collections/artifacts/<filename>: 302 to the content app, which
// serves the distribution's file (and redirects to object storage where blobs live
// there). As in pulp_ansible, the file's existence is the content app's business.
func (p *Plugin) artifactDownload(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("filename")
	if !artifactName.MatchString(name) {
		rest.WriteJSON(w, http.StatusNotFound, map[string]string{"detail": "Not found."})
		return nil
	}
	d, err := p.distribution(r.Context(), r.PathValue("distro_base_path"))
	if err != nil {
		return err
	}
	loc, err := p.preauthenticate(r, d, p.galaxy.contentURL(r, d.BasePath, name))
	if err != nil {
		return err
	}
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusFound)
	return nil
}
