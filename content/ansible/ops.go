package ansible

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/meta"
	"pith/sign"
	"pith/task"
)

// The operations of an ansible repository beyond the generic ones: copying and moving
// collection versions with what belongs to them, marking, signing, rebuilding metadata,
// and the copy of content between repository versions.

// Task names, as pulp_ansible names them.
const (
	CopyMoveTask    = "pulp_ansible.app.tasks.copy.copy_or_move_and_sign"
	CopyContentTask = "pulp_ansible.app.tasks.copy.copy_content"
	MarkTask        = "pulp_ansible.app.tasks.mark.mark"
	UnmarkTask      = "pulp_ansible.app.tasks.mark.unmark"
	SignTask        = "pulp_ansible.app.tasks.signature.sign"
	RebuildTask     = "pulp_ansible.app.tasks.collections.rebuild_repository_collection_versions_metadata"
)

// SetSigner gives the type the key of a signing service (the `sign` operation and
// signing on copy use it).
func (p *Plugin) SetSigner(serviceID string, s *sign.Signer) { p.signerID, p.signer = serviceID, s }

type copyMoveIn struct {
	CollectionVersions      []string `json:"collection_versions" openapi:"required,desc=A list of collection versions to move or copy."`
	DestinationRepositories []string `json:"destination_repositories" openapi:"required,desc=List of repository HREFs to put content in."`
	SigningService          *string  `json:"signing_service" openapi:"format=uri,optional,desc=HREF for a signing service. This will be used to sign the collection before moving putting it in any new repositories."`
}

type markIn2 struct {
	ContentUnits []any  `json:"content_units" openapi:"required,desc=List of collection version hrefs to mark, use * to mark all content in repository"`
	Value        string `json:"value" openapi:"minLength=1,desc=The string value of this mark."`
}

type signIn struct {
	ContentUnits   []any  `json:"content_units" openapi:"required,desc=List of collection version hrefs to sign, use * to sign all content in repository"`
	SigningService string `json:"signing_service" openapi:"format=uri,desc=A signing service to use to sign the collections"`
}

type rebuildIn struct {
	Namespace *string `json:"namespace" openapi:"nullable,minLength=1"`
	Name      *string `json:"name" openapi:"nullable,minLength=1"`
	Version   *string `json:"version" openapi:"nullable,minLength=1"`
}

type copyIn struct {
	Config json.RawMessage `json:"config" openapi:"type=object,required,desc=A JSON document describing sources, destinations, and content to be copied"`
}

// declareOps adds the repository operations and /pulp/api/v3/ansible/copy/.
func (p *Plugin) declareOps(t *rest.Table) {
	async := []openapi.Response{rest.Resp(202, t.Async())}
	const rh = "{ansible_ansible_repository_href}"
	rp := href.Root + "repositories/ansible/ansible/{id}/"
	vs := "repositories/ansible/ansible"
	tag := "Repositories: Ansible"
	for _, op := range []struct {
		action, body string
		in           any
		h            rest.HandlerFunc
	}{
		{"copy_collection_version", "CollectionVersionCopyMove", copyMoveIn{}, p.copyMove(false)},
		{"move_collection_version", "CollectionVersionCopyMove", copyMoveIn{}, p.copyMove(true)},
		{"mark", "AnsibleRepositoryMark", markIn2{}, p.markOp(true)},
		{"unmark", "AnsibleRepositoryMark", markIn2{}, p.markOp(false)},
		{"sign", "AnsibleRepositorySignature", signIn{}, p.signOp},
		{"rebuild_metadata", "AnsibleRepositoryRebuild", rebuildIn{}, p.rebuildOp(false)},
	} {
		t.Add(rest.Op{ID: "repositories_ansible_ansible_" + op.action, Viewset: vs, Action: op.action, Method: "POST",
			Path: rh + op.action + "/", Pattern: rp + op.action + "/{$}", Tag: tag, Body: op.in, BodyName: op.body, Media: rest.JSONForms,
			Responses: async, Handler: op.h})
	}
	t.Add(rest.Op{ID: "repositories_ansible_ansible_versions_rebuild_metadata", Viewset: vs + "/versions", Action: "rebuild_metadata", Method: "POST",
		Path: "{ansible_ansible_repository_version_href}rebuild_metadata/", Pattern: rp + "versions/{number}/rebuild_metadata/{$}",
		Tag: "Repositories: Ansible Versions", Body: rebuildIn{}, BodyName: "AnsibleRepositoryRebuild", Media: rest.JSONForms,
		Responses: async, Handler: p.rebuildOp(true)})
	cp := href.Root + "ansible/copy/"
	t.Add(rest.Op{ID: "copy_content", Viewset: "ansible/copy", Method: "POST", Path: cp, Pattern: cp + "{$}", Tag: "Ansible: Copy",
		Body: copyIn{}, BodyName: "Copy", Media: rest.JSONForms, Responses: async, Handler: p.copyContent})
}

// CopyMoveArgs are the arguments of a copy or move of collection versions.
type CopyMoveArgs struct {
	Source         string   `json:"source"`          // repository UUID
	Versions       []string `json:"versions"`        // collection version UUIDs
	Destinations   []string `json:"destinations"`    // repository UUIDs
	Move           bool     `json:"move"`            // remove them from the source too
	SigningService string   `json:"signing_service"` // sign them in the destinations first; "" for no signing
}

// maxHrefs bounds a list of hrefs in one request.
const maxHrefs = 10000

// cvHrefs resolves collection version hrefs to their UUIDs, refusing any that is not one.
func (p *Plugin) cvHrefs(ctx context.Context, field string, hrefs []string) ([]string, error) {
	if len(hrefs) > maxHrefs {
		return nil, rest.BadField(field, "At most %d items.", maxHrefs)
	}
	ids := make([]string, len(hrefs))
	for i, h := range hrefs {
		id, err := rest.HrefOf(field, h, "content/"+cvSegment+"/")
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	units, err := meta.ContentIDsByPulpID(ctx, p.db, ids)
	if err != nil || len(units) != len(ids) {
		return nil, rest.BadField(field, "Invalid hyperlink - Object does not exist.")
	}
	return ids, nil
}

// repoHrefs resolves ansible repository hrefs to their UUIDs.
func (p *Plugin) repoHrefs(ctx context.Context, field string, hrefs []string) ([]string, error) {
	if len(hrefs) > maxHrefs {
		return nil, rest.BadField(field, "At most %d items.", maxHrefs)
	}
	out := make([]string, 0, len(hrefs))
	seen := map[string]bool{}
	for _, h := range hrefs {
		repo, err := p.core.Env().Repository(ctx, field, h, RepoType)
		if err != nil {
			return nil, err
		}
		if !seen[repo.PulpID] {
			seen[repo.PulpID] = true
			out = append(out, repo.PulpID)
		}
	}
	return out, nil
}

// signingService checks that a signing service exists and that this process holds its
// key.
func (p *Plugin) signingService(ctx context.Context, field, h string) (string, error) {
	id, err := rest.HrefOf(field, h, "signing-services/")
	if err != nil {
		return "", err
	}
	if _, err := meta.SigningServiceByPulpID(ctx, p.db, id); err != nil {
		return "", rest.BadField(field, "Invalid hyperlink - Object does not exist.")
	}
	if p.signer == nil || id != p.signerID {
		return "", rest.BadField(field, "This server holds no key for that signing service (give every worker the same --metadata-signing-key).")
	}
	return id, nil
}

func (p *Plugin) copyMove(move bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		src, err := p.core.Env().RepoByPath(r)
		if err != nil {
			return err
		}
		var in copyMoveIn
		if err := decodeRequired(r, &in, "collection_versions", "destination_repositories"); err != nil {
			return err
		}
		a := CopyMoveArgs{Source: src.PulpID, Move: move}
		if a.Versions, err = p.cvHrefs(r.Context(), "collection_versions", in.CollectionVersions); err != nil {
			return err
		}
		if a.Destinations, err = p.repoHrefs(r.Context(), "destination_repositories", in.DestinationRepositories); err != nil {
			return err
		}
		if in.SigningService != nil {
			if a.SigningService, err = p.signingService(r.Context(), "signing_service", *in.SigningService); err != nil {
				return err
			}
		}
		spec := task.Spec{Name: CopyMoveTask, Args: a, Shared: []string{href.Repository(RepoType, src.PulpID)}}
		for _, d := range a.Destinations {
			spec.Exclusive = append(spec.Exclusive, href.Repository(RepoType, d))
		}
		if move {
			// The source gets a new version too.
			spec.Exclusive, spec.Shared = append(spec.Exclusive, spec.Shared...), nil
		}
		return p.core.Env().Dispatch(w, r, spec)
	}
}

// runCopyMove copies collection versions, with their signatures, marks, namespace
// metadata and deprecations in the source, into every destination at once (one
// set-based change), signs them there when asked, and removes them from the source for
// a move (what belonged to them follows by Finalize).
func (p *Plugin) runCopyMove(ctx context.Context, r *task.Run) error {
	var a CopyMoveArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	src, err := meta.RepositoryByPulpID(ctx, p.db, a.Source)
	if err != nil {
		return err
	}
	cvs, err := p.unitsByPulpID(ctx, a.Versions)
	if err != nil {
		return err
	}
	add, err := p.belonging(ctx, src, cvs)
	if err != nil {
		return err
	}
	if err := p.core.BulkChange(ctx, r, a.Destinations, meta.Change{Add: add}); err != nil {
		return err
	}
	if a.SigningService != "" {
		for _, d := range a.Destinations {
			if err := p.signIn(ctx, r, d, cvs, a.SigningService); err != nil {
				return err
			}
		}
	}
	if a.Move {
		ids := make([]int64, len(cvs))
		for i, c := range cvs {
			ids[i] = c.ID
		}
		return p.core.NewVersion(ctx, r, src.PulpID, meta.Change{Remove: ids})
	}
	return nil
}

// unitsByPulpID loads units by UUID.
func (p *Plugin) unitsByPulpID(ctx context.Context, ids []string) ([]meta.Content, error) {
	out := make([]meta.Content, 0, len(ids))
	for _, id := range ids {
		c, err := meta.ContentByPulpID(ctx, p.db, id)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// belonging are the collection versions and what belongs to them in a repository's
// latest version: their signatures and marks, their namespaces' metadata and their
// collections' deprecations.
func (p *Plugin) belonging(ctx context.Context, repo meta.Repository, cvs []meta.Content) ([]int64, error) {
	want := map[string]bool{}
	namespaces, collections := map[string]bool{}, map[string]bool{}
	var out []int64
	for _, c := range cvs {
		want[c.PulpID] = true
		coll, _, _ := strings.Cut(c.RepoKey, ":")
		ns, _, _ := strings.Cut(coll, ".")
		collections[coll], namespaces[ns] = true, true
		out = append(out, c.ID)
	}
	err := p.db.Tx(ctx, func(tx *meta.Tx) error {
		return scanUnits(ctx, tx, meta.InVersion("rc", "?")+` AND c.type IN (?, ?, ?, ?)`,
			[]any{repo.ID, repo.LatestVersion, repo.LatestVersion, SignatureType, MarkType, NamespaceType, DeprecationType}, func(c meta.Content) {
				var a struct {
					SignedCollection string `json:"signed_collection"`
					MarkedCollection string `json:"marked_collection"`
				}
				json.Unmarshal(c.Attrs, &a)
				switch {
				case c.Type == SignatureType && want[a.SignedCollection], c.Type == MarkType && want[a.MarkedCollection],
					c.Type == NamespaceType && namespaces[c.RepoKey], c.Type == DeprecationType && collections[c.RepoKey]:
					out = append(out, c.ID)
				}
			})
	})
	return out, err
}

// markOp is mark (on) or unmark.
func (p *Plugin) markOp(on bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		repo, err := p.core.Env().RepoByPath(r)
		if err != nil {
			return err
		}
		var in markIn2
		if err := decodeRequired(r, &in, "content_units", "value"); err != nil {
			return err
		}
		if err := checkSlug(in.Value); err != nil {
			return err
		}
		ids, err := p.contentUnits(r.Context(), in.ContentUnits)
		if err != nil {
			return err
		}
		name := MarkTask
		if !on {
			name = UnmarkTask
		}
		return p.core.Env().Dispatch(w, r, task.Spec{Name: name, Args: markArgs{Repository: repo.PulpID, Versions: ids, Value: in.Value},
			Exclusive: []string{href.Repository(RepoType, repo.PulpID)}})
	}
}

// contentUnits reads a content_units list: collection version hrefs, or ["*"] for all
// of the repository's (nil).
func (p *Plugin) contentUnits(ctx context.Context, units []any) ([]string, error) {
	hrefs := make([]string, len(units))
	for i, u := range units {
		s, ok := u.(string)
		if !ok {
			return nil, rest.BadField("content_units", "Item %d: not a string.", i)
		}
		hrefs[i] = s
	}
	if len(hrefs) > 1 && containsStar(hrefs) {
		return nil, rest.BadField("content_units", "Cannot supply content units and '*'.")
	}
	if len(hrefs) == 1 && hrefs[0] == "*" {
		return nil, nil
	}
	if len(hrefs) == 0 {
		return nil, rest.BadField("content_units", "This list may not be empty.")
	}
	return p.cvHrefs(ctx, "content_units", hrefs)
}

func containsStar(xs []string) bool {
	for _, x := range xs {
		if x == "*" {
			return true
		}
	}
	return false
}

type markArgs struct {
	Repository string   `json:"repository"`
	Versions   []string `json:"versions"` // nil: every collection version of the repository
	Value      string   `json:"value"`
}

// versionsIn are collection versions of a repository's latest version: those named, or
// all of them (ids nil).
func (p *Plugin) versionsIn(ctx context.Context, repo meta.Repository, ids []string) ([]meta.Content, error) {
	if ids != nil {
		return p.unitsByPulpID(ctx, ids)
	}
	var out []meta.Content
	err := p.db.Tx(ctx, func(tx *meta.Tx) error {
		return scanUnits(ctx, tx, meta.InVersion("rc", "?")+` AND c.type = ?`,
			[]any{repo.ID, repo.LatestVersion, repo.LatestVersion, CollectionVersionType}, func(c meta.Content) { out = append(out, c) })
	})
	return out, err
}

// runMark adds the repository's marks of the value to the collection versions (unmark:
// removes them).
func (p *Plugin) runMark(on bool) task.Func {
	return func(ctx context.Context, r *task.Run) error {
		var a markArgs
		if err := r.Args(&a); err != nil {
			return err
		}
		repo, err := meta.RepositoryByPulpID(ctx, p.db, a.Repository)
		if err != nil {
			return err
		}
		cvs, err := p.versionsIn(ctx, repo, a.Versions)
		if err != nil {
			return err
		}
		var ids []int64
		for _, cv := range cvs {
			u := markUnit(cv.PulpID, a.Value)
			if on {
				c, _, err := meta.PutContent(ctx, p.db, u, nil)
				if err != nil {
					return err
				}
				ids = append(ids, c.ID)
				continue
			}
			c, err := meta.ContentByKey(ctx, p.db, MarkType, u.NaturalKey)
			if err == nil {
				ids = append(ids, c.ID)
			} else if !isNotFound(err) {
				return err
			}
		}
		if on {
			return p.core.NewVersion(ctx, r, repo.PulpID, meta.Change{Add: ids})
		}
		return p.core.NewVersion(ctx, r, repo.PulpID, meta.Change{Remove: ids})
	}
}

type signArgs struct {
	Repository     string   `json:"repository"`
	Versions       []string `json:"versions"` // nil: all of the repository's
	SigningService string   `json:"signing_service"`
}

func (p *Plugin) signOp(w http.ResponseWriter, r *http.Request) error {
	repo, err := p.core.Env().RepoByPath(r)
	if err != nil {
		return err
	}
	var in signIn
	if err := decodeRequired(r, &in, "content_units", "signing_service"); err != nil {
		return err
	}
	ids, err := p.contentUnits(r.Context(), in.ContentUnits)
	if err != nil {
		return err
	}
	svc, err := p.signingService(r.Context(), "signing_service", in.SigningService)
	if err != nil {
		return err
	}
	return p.core.Env().Dispatch(w, r, task.Spec{Name: SignTask, Args: signArgs{Repository: repo.PulpID, Versions: ids, SigningService: svc},
		Exclusive: []string{href.Repository(RepoType, repo.PulpID)}})
}

func (p *Plugin) runSign(ctx context.Context, r *task.Run) error {
	var a signArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, p.db, a.Repository)
	if err != nil {
		return err
	}
	cvs, err := p.versionsIn(ctx, repo, a.Versions)
	if err != nil {
		return err
	}
	return p.signIn(ctx, r, repo.PulpID, cvs, a.SigningService)
}

// signIn signs collection versions' MANIFEST.json with the signing service's key and
// adds the signatures to a repository. A version already signed with that key anywhere
// is not signed again: its signature is added when the repository lacks it. The
// progress reports are pulp_ansible's: associating.content (what the version gained),
// sign.new.signature and sign.present.signature.
func (p *Plugin) signIn(ctx context.Context, r *task.Run, repoID string, cvs []meta.Content, service string) error {
	if p.signer == nil || service != p.signerID {
		return fmt.Errorf("signing service %s: this worker holds no key for it (give every worker the same --metadata-signing-key)", service)
	}
	held, err := p.signaturesIn(ctx, repoID)
	if err != nil {
		return err
	}
	var unsigned []meta.Content
	var present []int64
	for _, cv := range cvs {
		u := sigUnit(cv.PulpID, sigAttrs{PubkeyFingerprint: p.signer.Fingerprint()}, nil)
		c, err := meta.ContentByKey(ctx, p.db, SignatureType, u.NaturalKey)
		switch {
		case err == nil:
			if !held[c.ID] {
				present = append(present, c.ID)
			}
		case isNotFound(err):
			unsigned = append(unsigned, cv)
		default:
			return err
		}
	}
	pa := r.Progress("associating.content", "Associating Content", -1)
	pn := r.Progress("sign.new.signature", "Signing new CollectionVersions", int64(len(unsigned)))
	ids, err := p.signNew(ctx, pn, unsigned, service)
	pn.Finish(err)
	if err != nil {
		pa.Finish(err)
		return err
	}
	pp := r.Progress("sign.present.signature", "Adding present CollectionVersionSignatures", int64(len(present)))
	pp.Add(int64(len(present)))
	pp.Finish(nil)
	ids = append(ids, present...)
	pa.Add(int64(len(ids)))
	pa.Finish(nil)
	return p.core.NewVersion(ctx, r, repoID, meta.Change{Add: ids})
}

// signNew makes a signature by the service of each collection version and returns their ids.
func (p *Plugin) signNew(ctx context.Context, prog *task.Progress, cvs []meta.Content, service string) ([]int64, error) {
	var ids []int64
	for _, cv := range cvs {
		manifest, err := meta.Document(ctx, p.db, cv.ID, manifestDoc)
		if err != nil {
			return nil, fmt.Errorf("collection version %s: %w", cv.RelativePath, err)
		}
		sig, err := p.signer.Detach(bytes.NewReader(manifest))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(sig)
		svc := service
		u := sigUnit(cv.PulpID, sigAttrs{PubkeyFingerprint: p.signer.Fingerprint(), SigningService: &svc, Data: string(sig), Digest: hex.EncodeToString(sum[:])}, nil)
		c, _, err := meta.PutContent(ctx, p.db, u, nil)
		if err != nil {
			return nil, err
		}
		ids = append(ids, c.ID)
		prog.Add(1)
	}
	return ids, nil
}

// signaturesIn is the set of the signatures in a repository's latest version.
func (p *Plugin) signaturesIn(ctx context.Context, repoID string) (map[int64]bool, error) {
	repo, err := meta.RepositoryByPulpID(ctx, p.db, repoID)
	if err != nil {
		return nil, err
	}
	held := map[int64]bool{}
	err = p.db.Tx(ctx, func(tx *meta.Tx) error {
		return scanUnits(ctx, tx, meta.InVersion("rc", "?")+` AND c.type = ?`,
			[]any{repo.ID, repo.LatestVersion, repo.LatestVersion, SignatureType}, func(c meta.Content) { held[c.ID] = true })
	})
	return held, err
}

func isNotFound(err error) bool { return errors.Is(err, meta.ErrNotFound) }

type rebuildArgs struct {
	Repository string  `json:"repository"`
	Version    int64   `json:"version"`
	Namespace  *string `json:"namespace,omitempty"`
	Name       *string `json:"name,omitempty"`
	CVVersion  *string `json:"cv_version,omitempty"`
}

// rebuildOp is rebuild_metadata of a repository's latest version, or of the version the
// path names.
func (p *Plugin) rebuildOp(ofVersion bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		repo, err := p.core.Env().RepoByPath(r)
		if err != nil {
			return err
		}
		n := repo.LatestVersion
		if ofVersion {
			v, err := meta.VersionByNumber(r.Context(), p.db, repo.ID, parseNumber(r.PathValue("number")))
			if err != nil {
				return rest.Status(http.StatusNotFound, "No repository version matches the given query.")
			}
			n = v.Number
		}
		var in rebuildIn
		if _, err := rest.DecodeBody(r, &in); err != nil {
			return err
		}
		return p.core.Env().Dispatch(w, r, task.Spec{Name: RebuildTask,
			Args:   rebuildArgs{Repository: repo.PulpID, Version: n, Namespace: in.Namespace, Name: in.Name, CVVersion: in.Version},
			Shared: []string{href.Repository(RepoType, repo.PulpID)}})
	}
}

func parseNumber(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}

// runRebuild reads again the tarballs of a version's collection versions (those of a
// namespace, name and version when given) and rewrites their metadata, as this server's
// reader makes it now.
func (p *Plugin) runRebuild(ctx context.Context, r *task.Run) error {
	var a rebuildArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, p.db, a.Repository)
	if err != nil {
		return err
	}
	var cvs []meta.Content
	err = p.db.Tx(ctx, func(tx *meta.Tx) error {
		return scanUnits(ctx, tx, meta.InVersion("rc", "?")+` AND c.type = ?`, []any{repo.ID, a.Version, a.Version, CollectionVersionType},
			func(c meta.Content) { cvs = append(cvs, c) })
	})
	if err != nil {
		return err
	}
	prog := r.Progress("collection.rebuild_metadata", "Rebuilding collection metadata", int64(len(cvs)))
	for _, cv := range cvs {
		coll, version, _ := strings.Cut(cv.RepoKey, ":")
		ns, name, _ := strings.Cut(coll, ".")
		if a.Namespace != nil && *a.Namespace != ns || a.Name != nil && *a.Name != name || a.CVVersion != nil && *a.CVVersion != version {
			continue
		}
		if err := p.rebuild(ctx, cv); err != nil {
			prog.Finish(err)
			return fmt.Errorf("rebuilding %s.%s %s: %w", ns, name, version, err)
		}
		prog.Add(1)
	}
	prog.Finish(nil)
	return nil
}

// rebuild rewrites one collection version's metadata from its tarball; one served on
// demand (no artifact yet) keeps what it has.
func (p *Plugin) rebuild(ctx context.Context, cv meta.Content) error {
	arts, err := meta.UnitArtifacts(ctx, p.db, []meta.Content{cv})
	if err != nil || arts[0] == nil {
		return err
	}
	v, err := p.readArtifact(ctx, *arts[0])
	if err != nil {
		return err
	}
	c, docs, err := cvUnit(v, cv.Labels)
	if err != nil {
		return err
	}
	return p.db.Tx(ctx, func(tx *meta.Tx) error {
		if err := meta.UpdateContentAttrs(ctx, tx, cv.ID, c.Attrs); err != nil {
			return err
		}
		return meta.PutDocuments(ctx, tx, cv.ID, docs)
	})
}

// copyEntry is one entry of /pulp/api/v3/ansible/copy/'s config.
type copyEntry struct {
	SourceRepoVersion string   `json:"source_repo_version"`
	DestRepo          string   `json:"dest_repo"`
	DestBaseVersion   *int64   `json:"dest_base_version,omitempty"`
	Content           []string `json:"content,omitempty"`
}

// CopyEntry is a resolved copy entry: UUIDs and numbers.
type CopyEntry struct {
	SourceRepo    string   `json:"source_repo"`
	SourceVersion int64    `json:"source_version"`
	DestRepo      string   `json:"dest_repo"`
	DestBase      *int64   `json:"dest_base,omitempty"`
	Content       []string `json:"content,omitempty"` // unit UUIDs; nil: all
}

// maxCopyEntries bounds a copy's config.
const maxCopyEntries = 1000

func (p *Plugin) copyContent(w http.ResponseWriter, r *http.Request) error {
	var in copyIn
	if err := decodeRequired(r, &in, "config"); err != nil {
		return err
	}
	var entries []copyEntry
	dec := json.NewDecoder(bytes.NewReader(in.Config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entries); err != nil {
		return rest.BadField("config", "Provided copy criteria is invalid: %v", err)
	}
	if len(entries) == 0 || len(entries) > maxCopyEntries {
		return rest.BadField("config", "Provided copy criteria is invalid: give 1 to %d entries.", maxCopyEntries)
	}
	var out []CopyEntry
	spec := task.Spec{Name: CopyContentTask}
	for i, e := range entries {
		field := fmt.Sprintf("config[%d]", i)
		srcID, n, err := rest.VersionOf(field+".source_repo_version", e.SourceRepoVersion, "repositories/ansible/ansible/")
		if err != nil {
			return err
		}
		src, err := meta.RepositoryByPulpID(r.Context(), p.db, srcID)
		if err == nil {
			_, err = meta.VersionByNumber(r.Context(), p.db, src.ID, n)
		}
		if err != nil {
			return rest.BadField(field+".source_repo_version", "Invalid hyperlink - Object does not exist.")
		}
		dest, err := p.core.Env().Repository(r.Context(), field+".dest_repo", e.DestRepo, RepoType)
		if err != nil {
			return err
		}
		if e.DestBaseVersion != nil {
			if _, err := meta.VersionByNumber(r.Context(), p.db, dest.ID, *e.DestBaseVersion); err != nil {
				return rest.NonField("Version %d does not exist for repository '%s'.", *e.DestBaseVersion, dest.Name)
			}
		}
		ce := CopyEntry{SourceRepo: src.PulpID, SourceVersion: n, DestRepo: dest.PulpID, DestBase: e.DestBaseVersion}
		if e.Content != nil {
			if len(e.Content) > maxHrefs {
				return rest.BadField(field+".content", "At most %d items.", maxHrefs)
			}
			ce.Content = []string{}
			for _, h := range e.Content {
				pp, ok := href.Parse(h)
				if !ok || !strings.HasPrefix(pp.Collection, "content/ansible/") || pp.Rest != "" {
					return rest.BadField(field+".content", "Invalid hyperlink - No URL match for %q.", h)
				}
				ce.Content = append(ce.Content, pp.ID)
			}
		}
		out = append(out, ce)
		spec.Exclusive = append(spec.Exclusive, href.Repository(RepoType, dest.PulpID))
		spec.Shared = append(spec.Shared, href.Repository(RepoType, src.PulpID))
	}
	spec.Args = out
	return p.core.Env().Dispatch(w, r, spec)
}

// runCopyContent copies, per entry, the units of a source version (all, or those named
// that it holds) into a new version of the destination (from its base version when
// given).
func (p *Plugin) runCopyContent(ctx context.Context, r *task.Run) error {
	var entries []CopyEntry
	if err := r.Args(&entries); err != nil {
		return err
	}
	for _, e := range entries {
		src, err := meta.RepositoryByPulpID(ctx, p.db, e.SourceRepo)
		if err != nil {
			return err
		}
		var want map[string]bool
		if e.Content != nil {
			want = map[string]bool{}
			for _, id := range e.Content {
				want[id] = true
			}
		}
		var ids []int64
		err = p.db.Tx(ctx, func(tx *meta.Tx) error {
			return scanUnits(ctx, tx, meta.InVersion("rc", "?"), []any{src.ID, e.SourceVersion, e.SourceVersion}, func(c meta.Content) {
				if want == nil || want[c.PulpID] {
					ids = append(ids, c.ID)
				}
			})
		})
		if err != nil {
			return err
		}
		if err := p.core.NewVersion(ctx, r, e.DestRepo, meta.Change{Base: e.DestBase, Add: ids}); err != nil {
			return err
		}
	}
	return nil
}
