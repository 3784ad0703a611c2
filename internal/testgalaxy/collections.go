package testgalaxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"pith/content/ansible/collection"
	"pith/sign"
)

// version is a collection version held by the server.
type version struct {
	*collection.Version
	artifact   []byte
	created    time.Time
	signatures []map[string]any
}

func (v *version) key() string { return v.Namespace + "." + v.Name + "-" + v.Version.Version }

// importTask is the result of a publish, as Galaxy's import task reports it.
type importTask struct {
	ID       string
	State    string // "completed" or "failed"
	Error    map[string]string
	Messages []map[string]any
	At       time.Time
}

// artifactPath is where the server serves artifacts, as a Pulp distribution does.
const artifactPath = "v3/plugin/ansible/content/testgalaxy/collections/artifacts/"

func (s *Server) collectionRoutes(mux *http.ServeMux, api string) {
	mux.HandleFunc("GET "+api+"v3/collections/{$}", s.collectionList)
	mux.HandleFunc("GET "+api+"v3/collections/{namespace}/{name}/{$}", s.collectionDetail)
	mux.HandleFunc("GET "+api+"v3/collections/{namespace}/{name}/versions/{$}", s.versionList)
	mux.HandleFunc("GET "+api+"v3/collections/{namespace}/{name}/versions/{version}/{$}", s.versionDetail)
	mux.HandleFunc("GET "+api+artifactPath+"{file}", s.artifact)
	mux.HandleFunc("GET /presigned/{file}", s.presigned)
	mux.HandleFunc("POST "+api+"v3/artifacts/collections/{$}", s.publish)
	mux.HandleFunc("GET "+api+"v3/imports/collections/{id}/{$}", s.importDetail)
}

// AddCollection holds a collection artifact (.tar.gz) as if it had been published and
// imported; the artifact is checked as an import checks it.
func (s *Server) AddCollection(artifact []byte) (*collection.Version, error) {
	v, err := collection.Read(bytes.NewReader(artifact), collection.Options{})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.hold(v, artifact); err != nil {
		return nil, err
	}
	return v, nil
}

// hold adds an imported version; s.mu is held.
func (s *Server) hold(v *collection.Version, artifact []byte) error {
	nv := &version{Version: v, artifact: artifact, created: time.Now().UTC()}
	if _, ok := s.collections[nv.key()]; ok {
		return fmt.Errorf("collection %s.%s version %s already exists", v.Namespace, v.Name, v.Version)
	}
	if len(s.collections) >= maxCollections || s.stored+int64(len(artifact)) > maxStored {
		return fmt.Errorf("collection %s.%s version %s: the fixture holds at most %d versions and %d bytes", v.Namespace, v.Name, v.Version, maxCollections, maxStored)
	}
	s.collections[nv.key()] = nv
	s.stored += int64(len(artifact))
	return nil
}

// Sign adds a signature by signer of the version's MANIFEST.json, which
// `ansible-galaxy collection verify` checks against its keyring.
func (s *Server) Sign(namespace, name, ver string, signer *sign.Signer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.collections[namespace+"."+name+"-"+ver]
	if v == nil {
		return fmt.Errorf("sign %s.%s %s: no such collection version", namespace, name, ver)
	}
	sig, err := signer.Detach(bytes.NewReader(v.Manifest))
	if err != nil {
		return fmt.Errorf("sign %s.%s %s: %w", namespace, name, ver, err)
	}
	v.signatures = append(v.signatures, map[string]any{
		"signature": string(sig), "pubkey_fingerprint": strings.ToLower(signer.Fingerprint()),
		"signing_service": "testgalaxy", "pulp_created": timestamp(time.Now()),
	})
	return nil
}

// versions returns the versions of namespace.name, highest first; s.mu is held.
func (s *Server) versions(namespace, name string) []*version {
	var out []*version
	for _, v := range s.collections {
		if v.Namespace == namespace && v.Name == name {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SemVer.Compare(out[j].SemVer) > 0 })
	return out
}

func (s *Server) collectionHref(namespace, name string) string {
	return fmt.Sprintf("%sapi/v3/collections/%s/%s/", s.prefix, namespace, name)
}

func (s *Server) collectionJSON(vs []*version) map[string]any {
	hi := vs[0]
	href := s.collectionHref(hi.Namespace, hi.Name)
	first := hi.created
	for _, v := range vs {
		if v.created.Before(first) {
			first = v.created
		}
	}
	return map[string]any{
		"href": href, "namespace": hi.Namespace, "name": hi.Name, "deprecated": false,
		"versions_url":    href + "versions/",
		"highest_version": map[string]string{"href": href + "versions/" + hi.Version.Version + "/", "version": hi.Version.Version},
		"created_at":      timestamp(first), "updated_at": timestamp(hi.created), "download_count": 0,
	}
}

// collectionList is /api/v3/collections/, paged by limit and offset.
func (s *Server) collectionList(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	names := map[[2]string]bool{}
	for _, v := range s.collections {
		names[[2]string{v.Namespace, v.Name}] = true
	}
	keys := make([][2]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"."+keys[i][1] < keys[j][0]+"."+keys[j][1] })
	items := make([]any, len(keys))
	for i, k := range keys {
		items[i] = s.collectionJSON(s.versions(k[0], k[1]))
	}
	s.mu.Unlock()
	s.v3Page(w, r, items)
}

func (s *Server) collectionDetail(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	vs := s.versions(r.PathValue("namespace"), r.PathValue("name"))
	var out map[string]any
	if len(vs) > 0 {
		out = s.collectionJSON(vs)
	}
	s.mu.Unlock()
	writeFound(w, out)
}

// writeFound writes out, or Galaxy's 404 when it is nil.
func writeFound(w http.ResponseWriter, out map[string]any) {
	if out == nil {
		v3Error(w, http.StatusNotFound, "not_found", "Not found.")
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// versionList is /api/v3/collections/<namespace>/<name>/versions/, highest first,
// paged by limit and offset.
func (s *Server) versionList(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	vs := s.versions(r.PathValue("namespace"), r.PathValue("name"))
	items := make([]any, len(vs))
	for i, v := range vs {
		items[i] = map[string]any{
			"version": v.Version.Version, "href": s.collectionHref(v.Namespace, v.Name) + "versions/" + v.Version.Version + "/",
			"created_at": timestamp(v.created), "updated_at": timestamp(v.created),
			"requires_ansible": v.RequiresAnsible, "marks": []any{},
		}
	}
	s.mu.Unlock()
	if len(vs) == 0 {
		v3Error(w, http.StatusNotFound, "not_found", "Not found.")
		return
	}
	s.v3Page(w, r, items)
}

// versionDetail is a version with what installing it needs: download_url, artifact
// (filename, sha256, size), metadata.dependencies and signatures.
func (s *Server) versionDetail(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	s.mu.Lock()
	v := s.collections[ns+"."+name+"-"+r.PathValue("version")]
	var out map[string]any
	if v != nil {
		href := s.collectionHref(ns, name)
		out = map[string]any{
			"href": href + "versions/" + v.Version.Version + "/", "version": v.Version.Version, "name": v.Name,
			"namespace":    map[string]any{"name": v.Namespace, "metadata_sha256": nil},
			"collection":   map[string]any{"id": v.Namespace + "." + v.Name, "name": v.Name, "href": href},
			"artifact":     map[string]any{"filename": v.RelativePath(), "sha256": v.SHA256, "size": v.Size},
			"download_url": s.API + artifactPath + v.RelativePath(),
			"metadata": map[string]any{
				"authors": v.Authors, "contents": v.Contents, "dependencies": v.Dependencies,
				"description": v.Description, "documentation": v.Documentation, "homepage": v.Homepage,
				"issues": v.Issues, "license": v.License, "repository": v.Repository, "tags": v.Tags,
			},
			"signatures":       append([]map[string]any{}, v.signatures...),
			"requires_ansible": v.RequiresAnsible, "marks": []any{},
			"created_at": timestamp(v.created), "updated_at": timestamp(v.created),
			"git_url": nil, "git_commit_sha": nil,
		}
	}
	s.mu.Unlock()
	writeFound(w, out)
}

// artifact serves a collection artifact by its file name, or redirects to it.
func (s *Server) artifact(w http.ResponseWriter, r *http.Request) {
	b := s.artifactBytes(r.PathValue("file"))
	if b == nil {
		http.NotFound(w, r)
		return
	}
	if s.cfg.RedirectDownloads {
		http.Redirect(w, r, s.URL+"/presigned/"+r.PathValue("file")+"?X-Amz-Signature=0", http.StatusFound)
		return
	}
	serveArtifact(w, b)
}

// presigned serves an artifact as object storage serves a presigned URL.
func (s *Server) presigned(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		http.Error(w, "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query string parameter or the Authorization header should be specified", http.StatusBadRequest)
		return
	}
	b := s.artifactBytes(r.PathValue("file"))
	if b == nil || !s.cfg.RedirectDownloads {
		http.NotFound(w, r)
		return
	}
	serveArtifact(w, b)
}

// artifactBytes is the artifact of that file name, or nil.
func (s *Server) artifactBytes(file string) []byte {
	f, err := collection.ParseFilename(file)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.collections[f.Namespace+"."+f.Name+"-"+f.Version]; v != nil {
		return v.artifact
	}
	return nil
}

func serveArtifact(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// v3Page writes one page of items as Pulp's Galaxy v3 API pages (limit, 100 unless
// asked, at most MaxPage; offset): meta.count, links as paths, data.
func (s *Server) v3Page(w http.ResponseWriter, r *http.Request, items []any) {
	limit, err := intParam(r, "limit", min(100, s.cfg.MaxPage), 1, s.cfg.MaxPage)
	var offset int
	if err == nil {
		offset, err = intParam(r, "offset", 0, 0, 0)
	}
	if err != nil {
		v3Error(w, http.StatusBadRequest, "invalid", err.Error())
		return
	}
	link := func(off int) any {
		q := r.URL.Query()
		q.Set("limit", strconv.Itoa(limit))
		q.Set("offset", strconv.Itoa(off))
		return r.URL.Path + "?" + q.Encode()
	}
	var next, prev any
	if offset+limit < len(items) {
		next = link(offset + limit)
	}
	if offset > 0 {
		prev = link(max(0, offset-limit))
	}
	lo := min(offset, len(items))
	hi := min(lo+limit, len(items))
	writeJSON(w, http.StatusOK, map[string]any{
		"meta":  map[string]int{"count": len(items)},
		"links": map[string]any{"first": link(0), "previous": prev, "next": next, "last": link(max(0, (len(items)-1)/limit*limit))},
		"data":  append([]any{}, items[lo:hi]...),
	})
}

// publish is POST /api/v3/artifacts/collections/: a multipart form whose "file" part is
// the artifact (ansible-galaxy sends it with Content-Transfer-Encoding: base64, which
// Go's mime/multipart does not decode) and whose "sha256" part is its digest. A
// malformed request is a 400; an artifact the import refuses is an import task that
// failed, as on Pulp, where the import runs as a task.
func (s *Server) publish(w http.ResponseWriter, r *http.Request) {
	if s.auth(r) != authOK {
		v3Error(w, http.StatusUnauthorized, "not_authenticated", "Authentication credentials were not provided.")
		return
	}
	filename, artifact, digest, err := readUpload(w, r)
	if err != nil {
		v3Error(w, http.StatusBadRequest, "invalid", err.Error())
		return
	}
	sum := sha256.Sum256(artifact)
	if digest != "" && !strings.EqualFold(digest, hex.EncodeToString(sum[:])) {
		v3Error(w, http.StatusBadRequest, "invalid", fmt.Sprintf("sha256: the file's digest is %x, not %s", sum, digest))
		return
	}
	expect, err := collection.ParseFilename(filename)
	if err != nil {
		v3Error(w, http.StatusBadRequest, "invalid", "file: "+err.Error())
		return
	}
	v, err := collection.Read(bytes.NewReader(artifact), collection.Options{Expect: expect})
	s.mu.Lock()
	defer s.mu.Unlock()
	// A task the client cannot read back would look unstarted to it forever.
	if len(s.imports) >= maxImports {
		v3Error(w, http.StatusServiceUnavailable, "too_many_imports", fmt.Sprintf("this fixture keeps at most %d import tasks", maxImports))
		return
	}
	s.nextID++
	task := &importTask{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", s.start.Unix(), s.nextID), State: "completed", At: time.Now().UTC(), Messages: []map[string]any{}}
	if err == nil {
		err = s.hold(v, artifact)
	}
	if err != nil {
		task.State, task.Error = "failed", map[string]string{"code": "", "description": err.Error(), "traceback": ""}
	} else {
		task.Messages = append(task.Messages, map[string]any{"level": "INFO", "message": "imported " + v.Namespace + "." + v.Name + " " + v.Version, "time": float64(task.At.Unix())})
	}
	s.imports[task.ID] = task
	writeJSON(w, http.StatusAccepted, map[string]string{"task": s.prefix + "api/v3/imports/collections/" + task.ID + "/"})
}

// readUpload reads the publish form: the file part's name and decoded bytes, and the
// sha256 part. It records the parts as sent.
func readUpload(w http.ResponseWriter, r *http.Request) (filename string, artifact []byte, digest string, err error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return "", nil, "", errors.New("the body must be multipart/form-data with a boundary")
	}
	rec := record(r)
	mr := multipart.NewReader(http.MaxBytesReader(w, r.Body, maxUpload), params["boundary"])
	for i := 0; ; i++ {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", nil, "", bodyError("the multipart body", err)
		}
		if i == maxParts {
			return "", nil, "", fmt.Errorf("more than %d parts", maxParts)
		}
		raw, err := io.ReadAll(p)
		if err != nil {
			return "", nil, "", bodyError(fmt.Sprintf("part %q", p.FormName()), err)
		}
		cte := p.Header.Get("Content-Transfer-Encoding")
		rec.Parts = append(rec.Parts, Part{Name: p.FormName(), Filename: p.FileName(), ContentType: p.Header.Get("Content-Type"), TransferEncoding: cte, Size: int64(len(raw))})
		body := raw
		switch strings.ToLower(cte) {
		case "", "binary", "8bit", "7bit":
		case "base64":
			// Python's email package wraps base64 at 76 columns.
			clean := bytes.Map(func(c rune) rune {
				if c == '\r' || c == '\n' || c == ' ' || c == '\t' {
					return -1
				}
				return c
			}, raw)
			if body, err = base64.StdEncoding.DecodeString(string(clean)); err != nil {
				return "", nil, "", fmt.Errorf("part %q: its base64 does not decode: %w", p.FormName(), err)
			}
		default:
			return "", nil, "", fmt.Errorf("part %q: Content-Transfer-Encoding %q is not supported", p.FormName(), cte)
		}
		switch p.FormName() {
		case "file":
			filename, artifact = p.FileName(), body
		case "sha256":
			digest = strings.TrimSpace(string(body))
		}
	}
	if artifact == nil {
		return "", nil, "", errors.New("file: no file part")
	}
	return filename, artifact, digest, nil
}

// bodyError says what went wrong reading what of the publish body.
func bodyError(what string, err error) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return fmt.Errorf("the body is larger than the %d bytes this server takes", maxUpload)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// importDetail is an import task: finished at once, completed or failed.
func (s *Server) importDetail(w http.ResponseWriter, r *http.Request) {
	if s.auth(r) != authOK {
		v3Error(w, http.StatusUnauthorized, "not_authenticated", "Authentication credentials were not provided.")
		return
	}
	s.mu.Lock()
	t := s.imports[r.PathValue("id")]
	s.mu.Unlock()
	if t == nil {
		v3Error(w, http.StatusNotFound, "not_found", "Not found.")
		return
	}
	var errDoc any
	if t.Error != nil {
		errDoc = t.Error
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": t.ID, "state": t.State, "created_at": timestamp(t.At), "updated_at": timestamp(t.At),
		"started_at": timestamp(t.At), "finished_at": timestamp(t.At), "error": errDoc, "messages": t.Messages,
	})
}
