package ansible

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/content/ansible/collection"
	"pith/meta"
	"pith/sign"
	"pith/task"
)

// The unit kinds about collections (signatures, deprecations, marks), namespaces and
// legacy roles. Each keeps its fields in attrs; one that points at a collection version
// keeps that version's pulp_id.

// sigAttrs are a collection signature's fields.
type sigAttrs struct {
	SignedCollection  string  `json:"signed_collection"` // pulp_id
	PubkeyFingerprint string  `json:"pubkey_fingerprint"`
	SigningService    *string `json:"signing_service"` // pulp_id
	Data              string  `json:"data"`            // the armored signature
	Digest            string  `json:"digest"`          // its sha256
}

type sigResponse struct {
	rest.UnitHead
	SignedCollection  string  `json:"signed_collection" openapi:"format=uri,desc=The content this signature is pointing to."`
	PubkeyFingerprint string  `json:"pubkey_fingerprint" openapi:"readOnly,desc=The fingerprint of the public key."`
	SigningService    *string `json:"signing_service" openapi:"format=uri,readOnly,nullable,desc=The signing service used to create the signature."`
}

// sigUnit is the unit of a signature of collection version cv.
func sigUnit(cv string, a sigAttrs, labels meta.Labels) meta.Content {
	a.SignedCollection = cv
	attrs, _ := json.Marshal(a)
	key := cv + ":" + a.PubkeyFingerprint
	return meta.Content{Type: SignatureType, NaturalKey: key, RepoKey: key, Digest: a.Digest, Attrs: attrs, Labels: labels}
}

func renderSignature(c meta.Content) any {
	a := decodeAttrs[sigAttrs](c.Attrs)
	out := sigResponse{UnitHead: rest.NewUnitHead(c, signatureSegment, "ansible.collectionversionsignature"),
		SignedCollection: cvHref(a.SignedCollection), PubkeyFingerprint: a.PubkeyFingerprint}
	if a.SigningService != nil {
		h := href.SigningService(*a.SigningService)
		out.SigningService = &h
	}
	return out
}

// deprecationAttrs name a deprecated collection.
type deprecationAttrs struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

type deprecationResponse struct {
	rest.UnitHead
	Name      string `json:"name" openapi:"desc=The name of the Collection."`
	Namespace string `json:"namespace" openapi:"desc=The namespace of the Collection."`
}

// deprecationUnit is the unit that deprecates a collection in a repository (one per
// collection: pulp_ansible's uniqueness).
func deprecationUnit(namespace, name string, labels meta.Labels) meta.Content {
	attrs, _ := json.Marshal(deprecationAttrs{Namespace: namespace, Name: name})
	key := namespace + "." + name
	return meta.Content{Type: DeprecationType, NaturalKey: key, RepoKey: key, Attrs: attrs, Labels: labels}
}

func renderDeprecation(c meta.Content) any {
	a := decodeAttrs[deprecationAttrs](c.Attrs)
	return deprecationResponse{UnitHead: rest.NewUnitHead(c, deprecationSegment, "ansible.ansiblecollectiondeprecated"), Name: a.Name, Namespace: a.Namespace}
}

// markAttrs are a mark on a collection version.
type markAttrs struct {
	MarkedCollection string `json:"marked_collection"` // pulp_id
	Value            string `json:"value"`
}

type markResponse struct {
	PulpCreated      string `json:"pulp_created" openapi:"format=date-time,readOnly,desc=Timestamp of creation."`
	PulpHref         string `json:"pulp_href" openapi:"format=uri,readOnly"`
	MarkedCollection string `json:"marked_collection" openapi:"format=uri,desc=The content this mark is pointing to."`
	Value            string `json:"value" openapi:"desc=The string value of this mark."`
}

func markUnit(cv, value string) meta.Content {
	attrs, _ := json.Marshal(markAttrs{MarkedCollection: cv, Value: value})
	key := cv + ":" + value
	return meta.Content{Type: MarkType, NaturalKey: key, RepoKey: key, Attrs: attrs}
}

func renderMark(c meta.Content) any {
	a := decodeAttrs[markAttrs](c.Attrs)
	return markResponse{PulpCreated: rest.Time(c.Created), PulpHref: href.Content(markSegment, c.PulpID),
		MarkedCollection: cvHref(a.MarkedCollection), Value: a.Value}
}

// slug is Django's SlugField: what a mark's value may be, at most maxMark long (its
// column's length: longer is a database error on Pulp).
var slug = regexp.MustCompile(`^[-a-zA-Z0-9_]+$`)

const maxMark = 50

// checkSlug refuses a mark value that is not a slug.
func checkSlug(v string) error {
	if len(v) > maxMark {
		return rest.BadField("value", "Ensure this field has no more than %d characters.", maxMark)
	}
	if !slug.MatchString(v) {
		return rest.BadField("value", `Enter a valid "slug" consisting of letters, numbers, underscores or hyphens.`)
	}
	return nil
}

// decodeRequired reads a JSON or form body into v and refuses one without the fields.
func decodeRequired(r *http.Request, v any, fields ...string) error {
	raw, err := rest.DecodeBody(r, v)
	if err != nil {
		return err
	}
	return rest.Require(raw, fields...)
}

// namespaceAttrs are a namespace's metadata.
type namespaceAttrs struct {
	Name           string            `json:"name"`
	Company        string            `json:"company"`
	Email          string            `json:"email"`
	Description    string            `json:"description"`
	Resources      string            `json:"resources"`
	Links          map[string]string `json:"links"`
	AvatarSHA256   *string           `json:"avatar_sha256"`
	MetadataSHA256 string            `json:"metadata_sha256"`
}

// metadataSHA256 is pulp_ansible's digest of a namespace's metadata: sha256 of its
// fields as sorted-key JSON with Python's separators.
func (a namespaceAttrs) metadataSHA256() string {
	var b bytes.Buffer
	keys := make([]string, 0, len(a.Links))
	for k := range a.Links {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString(`{"avatar_sha256": `)
	if a.AvatarSHA256 == nil {
		b.WriteString("null")
	} else {
		b.WriteString(collection.PyString(*a.AvatarSHA256))
	}
	b.WriteString(`, "company": ` + collection.PyString(a.Company) + `, "description": ` + collection.PyString(a.Description) + `, "email": ` + collection.PyString(a.Email) + `, "links": {`)
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(collection.PyString(k) + ": " + collection.PyString(a.Links[k]))
	}
	b.WriteString(`}, "name": ` + collection.PyString(a.Name) + `, "resources": ` + collection.PyString(a.Resources) + `}`)
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// namespaceLink is one of a namespace's links as the API shows them.
type namespaceLink struct {
	Name string `json:"name" openapi:"maxLength=256,minLength=1"`
	URL  string `json:"url" openapi:"format=uri,maxLength=256,minLength=1"`
}

type namespaceResponse struct {
	PulpHref       string          `json:"pulp_href" openapi:"format=uri,readOnly"`
	Name           string          `json:"name" openapi:"minLength=3,maxLength=64,desc=Required named, only accepts lowercase, numbers and underscores."`
	Company        string          `json:"company" openapi:"maxLength=64,optional,desc=Optional namespace company owner."`
	Email          string          `json:"email" openapi:"maxLength=256,optional,desc=Optional namespace contact email."`
	Description    string          `json:"description" openapi:"maxLength=256,optional,desc=Optional short description."`
	Resources      string          `json:"resources" openapi:"optional,desc=Optional resource page in markdown format."`
	Links          []namespaceLink `json:"links" openapi:"optional,desc=Labeled related links."`
	AvatarSHA256   *string         `json:"avatar_sha256" openapi:"readOnly,maxLength=64,desc=SHA256 digest of avatar image if present."`
	AvatarURL      *string         `json:"avatar_url" openapi:"readOnly,desc=Download link for avatar image if present."`
	MetadataSHA256 string          `json:"metadata_sha256" openapi:"readOnly"`
}

// namespaceUnit is the unit of a namespace's metadata (its natural key the metadata's
// digest, its repo key the name: a repository holds one metadata per namespace).
func namespaceUnit(a namespaceAttrs, labels meta.Labels) meta.Content {
	if a.Links == nil {
		a.Links = map[string]string{}
	}
	a.MetadataSHA256 = a.metadataSHA256()
	attrs, _ := json.Marshal(a)
	return meta.Content{Type: NamespaceType, NaturalKey: a.MetadataSHA256, RepoKey: a.Name, Digest: a.MetadataSHA256, Attrs: attrs, Labels: labels}
}

func renderNamespace(c meta.Content, origin string) namespaceResponse {
	a := decodeAttrs[namespaceAttrs](c.Attrs)
	h := href.Content(namespaceSegment, c.PulpID)
	out := namespaceResponse{PulpHref: h, Name: a.Name, Company: a.Company, Email: a.Email, Description: a.Description,
		Resources: a.Resources, Links: []namespaceLink{}, AvatarSHA256: a.AvatarSHA256, MetadataSHA256: a.MetadataSHA256}
	keys := make([]string, 0, len(a.Links))
	for k := range a.Links {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out.Links = append(out.Links, namespaceLink{Name: k, URL: a.Links[k]})
	}
	if a.AvatarSHA256 != nil {
		u := origin + h + "avatar/"
		out.AvatarURL = &u
	}
	return out
}

// roleAttrs are a legacy role's name and version.
type roleAttrs struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Version   string `json:"version"`
}

type roleResponse struct {
	PulpHref        string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string            `json:"prn" openapi:"readOnly"`
	PulpCreated     string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	Artifact        string            `json:"artifact" openapi:"format=uri"`
	PulpLabels      map[string]string `json:"pulp_labels"`
	VulnReport      *string           `json:"vuln_report" openapi:"format=uri,readOnly"`
	PulpLastUpdated string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Version         string            `json:"version"`
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace"`
}

// roleUnit is the unit of a role version; its archive is served at
// namespace/name/version.tar.gz.
func roleUnit(a roleAttrs, labels meta.Labels) meta.Content {
	attrs, _ := json.Marshal(a)
	key := a.Namespace + "/" + a.Name + "/" + a.Version
	return meta.Content{Type: RoleType, NaturalKey: key, RepoKey: key, RelativePath: key + ".tar.gz", Attrs: attrs, Labels: labels}
}

func (p *Plugin) renderRoles(ctx context.Context, cs []meta.Content) ([]any, error) {
	arts, err := meta.UnitArtifacts(ctx, p.db, cs)
	if err != nil {
		return nil, err
	}
	items := make([]any, len(cs))
	for i, c := range cs {
		a := decodeAttrs[roleAttrs](c.Attrs)
		out := roleResponse{PulpHref: href.Content(roleSegment, c.PulpID), Prn: href.PRN("ansible.role", c.PulpID), PulpCreated: rest.Time(c.Created),
			PulpLabels: c.Labels, PulpLastUpdated: rest.Time(c.Updated), Version: a.Version, Name: a.Name, Namespace: a.Namespace}
		if arts[i] != nil {
			out.Artifact = href.Artifact(arts[i].PulpID)
		}
		items[i] = out
	}
	return items, nil
}

// renderEach renders units one at a time.
func renderEach(f func(meta.Content) any) func(context.Context, []meta.Content) ([]any, error) {
	return func(_ context.Context, cs []meta.Content) ([]any, error) {
		items := make([]any, len(cs))
		for i, c := range cs {
			items[i] = f(c)
		}
		return items, nil
	}
}

// hrefAttr is a filter matching an attrs member that holds a pulp_id against the href
// given (of a unit in collection, or a signing service).
func hrefAttr(name, attr, collection, desc string) rest.Filter {
	return rest.Filter{Name: name, Type: rest.Custom, Lookups: []string{"exact"}, Desc: desc, Apply: func(l *meta.List, d meta.Dialect, val string) error {
		id, err := rest.HrefOf(name, val, collection)
		if err != nil {
			return err
		}
		l.And(d.JSONText("c.attrs", attr)+" = ?", id)
		return nil
	}}
}

// declareOtherUnits adds the signature, deprecation, mark, namespace and role kinds and
// their create operations.
func (p *Plugin) declareOtherUnits(t *rest.Table) {
	async := t.Async()
	two := []string{"exact", "in"}
	order := func(extra ...string) map[string]string {
		out := unitOrdering()
		for _, k := range extra {
			out[k] = "attr:" + k
		}
		return out
	}
	t.Unit(rest.UnitKind{Type: SignatureType, Segment: signatureSegment, PRN: "ansible.collectionversionsignature", Href: "{ansible_collection_version_signature_href}",
		Tag: "Content: Collection_Signatures", Schema: "ansible.CollectionVersionSignatureResponse", View: sigResponse{},
		Filters: []rest.Filter{
			hrefAttr("signed_collection", "signed_collection", "content/"+cvSegment+"/", "Filter signatures for collection version"),
			{Name: "pubkey_fingerprint", Attr: "pubkey_fingerprint", Lookups: two},
			hrefAttr("signing_service", "signing_service", "signing-services/", "Filter signatures produced by signature service"),
		},
		Ordering: order("data", "digest", "pubkey_fingerprint"), Render: renderEach(renderSignature), LabelStatus: 201, Reclaimable: true})
	t.Unit(rest.UnitKind{Type: DeprecationType, Segment: deprecationSegment, PRN: "ansible.ansiblecollectiondeprecated", Href: "{ansible_ansible_collection_deprecated_href}",
		Tag: "Content: Collection_Deprecations", Schema: "ansible.AnsibleCollectionDeprecatedResponse", View: deprecationResponse{},
		Ordering: map[string]string{"pk": "c.id"}, Render: renderEach(renderDeprecation), LabelStatus: 201})
	t.Unit(rest.UnitKind{Type: MarkType, Segment: markSegment, PRN: "ansible.collectionversionmark", Href: "{ansible_collection_version_mark_href}",
		Tag: "Content: Collection_Marks", Schema: "ansible.CollectionVersionMarkResponse", View: markResponse{},
		Filters: []rest.Filter{
			hrefAttr("marked_collection", "marked_collection", "content/"+cvSegment+"/", "Filter marks for collection version"),
			{Name: "value", Attr: "value", Lookups: two},
		},
		Ordering: order("value"), Render: renderEach(renderMark), LabelStatus: 201, Reclaimable: true})
	t.Unit(rest.UnitKind{Type: NamespaceType, Segment: namespaceSegment, PRN: "ansible.ansiblenamespacemetadata", Href: "{ansible_ansible_namespace_metadata_href}",
		Tag: "Content: Namespaces", Schema: "ansible.AnsibleNamespaceMetadataResponse", View: namespaceResponse{},
		Filters: namespaceSpec().Filters, Ordering: namespaceSpec().Ordering, Render: p.renderNamespaces, LabelStatus: 200})
	t.Unit(rest.UnitKind{Type: RoleType, Segment: roleSegment, PRN: "ansible.role", Href: "{ansible_role_href}",
		Tag: "Content: Roles", Schema: "ansible.RoleResponse", View: roleResponse{},
		Filters: []rest.Filter{
			{Name: "name", Attr: "name", Lookups: []string{"exact"}},
			{Name: "namespace", Attr: "namespace", Lookups: []string{"exact"}},
			{Name: "version", Attr: "version", Lookups: []string{"exact"}},
		},
		Ordering: order("name", "namespace", "version"), Render: p.renderRoles, LabelStatus: 201})

	for _, op := range []struct {
		seg, id, tag, body string
		in                 any
		media              []string
		resp               openapi.Response
		h                  rest.HandlerFunc
	}{
		{signatureSegment, "content_ansible_collection_signatures_create", "Content: Collection_Signatures", "ansible.CollectionVersionSignature", sigIn{},
			rest.FileForms, rest.Resp(202, async), p.signatureCreate},
		{deprecationSegment, "content_ansible_collection_deprecations_create", "Content: Collection_Deprecations", "ansible.AnsibleCollectionDeprecated", deprecationIn{},
			rest.JSONForms, rest.Resp(202, async), p.deprecationCreate},
		{markSegment, "content_ansible_collection_marks_create", "Content: Collection_Marks", "ansible.CollectionVersionMark", markIn{},
			rest.JSONForms, rest.Resp(201, t.Schema("ansible.CollectionVersionMarkResponse", markResponse{})), p.markCreate},
		{roleSegment, "content_ansible_roles_create", "Content: Roles", "ansible.Role", roleIn{},
			rest.JSONForms, rest.Resp(201, t.Schema("ansible.RoleResponse", roleResponse{})), p.roleCreate},
	} {
		pat := href.Root + "content/" + op.seg + "/"
		t.Add(rest.Op{ID: op.id, Viewset: "content/" + op.seg, Method: "POST", Path: pat, Pattern: pat + "{$}", Tag: op.tag,
			Body: op.in, BodyName: op.body, Media: op.media, Responses: []openapi.Response{op.resp}, Handler: op.h})
	}
}

// namespaceSpec are the filters and orderings of namespace lists (pulp_ansible's
// AnsibleNamespaceFilter), the Pulp API's and Galaxy's.
func namespaceSpec() rest.ListSpec {
	out := unitOrdering()
	for _, k := range []string{"avatar_sha256", "company", "description", "email", "links", "metadata_sha256", "name", "resources"} {
		out[k] = "attr:" + k
	}
	return rest.ListSpec{Filters: []rest.Filter{
		{Name: "name", Attr: "name", Lookups: rest.NameLookups},
		{Name: "company", Attr: "company", Lookups: rest.NameLookups},
		{Name: "metadata_sha256", Attr: "metadata_sha256", Lookups: []string{"exact", "in"}},
	}, Ordering: out}
}

func (p *Plugin) renderNamespaces(ctx context.Context, cs []meta.Content) ([]any, error) {
	items := make([]any, len(cs))
	origin := rest.OriginOf(ctx)
	for i, c := range cs {
		items[i] = renderNamespace(c, origin)
	}
	return items, nil
}

// sigIn is the body of a signature upload.
type sigIn struct {
	Repository       *string       `json:"repository" openapi:"format=uri,writeOnly"`
	PulpLabels       rest.LabelsIn `json:"pulp_labels"`
	File             *string       `json:"file" openapi:"format=binary,writeOnly"`
	Upload           *string       `json:"upload" openapi:"format=uri,writeOnly"`
	FileURL          *string       `json:"file_url" openapi:"writeOnly,minLength=1"`
	Downloader       any           `json:"downloader_config" openapi:"writeOnly,nullable"`
	SignedCollection string        `json:"signed_collection" openapi:"format=uri,desc=The content this signature is pointing to."`
	Overwrite        *bool         `json:"overwrite" openapi:"newer"`
}

// maxSignature bounds an uploaded signature: an armored detached signature is a few
// hundred bytes, a few KiB with a large key.
const maxSignature = 64 << 10

// signatureCreate reads a detached signature of a collection version's MANIFEST.json,
// verifies it against the repository's gpgkey (pulp_ansible requires verification by
// default: without a key it is refused) and queues the task that stores it.
func (p *Plugin) signatureCreate(w http.ResponseWriter, r *http.Request) error {
	var in sigIn
	var data []byte
	raw, err := rest.ReadBody(r, &in, func(name, _ string, body io.Reader) error {
		if name != "file" {
			return rest.BadField(name, "Unexpected file field.")
		}
		b, err := io.ReadAll(io.LimitReader(body, maxSignature+1))
		if err != nil {
			return err
		}
		if len(b) > maxSignature {
			return rest.BadField("file", "A signature is at most %d bytes.", maxSignature)
		}
		data = b
		return nil
	})
	if err == nil {
		err = rest.Decode(raw, &in)
	}
	if err != nil {
		return err
	}
	if err := rest.Require(raw, "signed_collection"); err != nil {
		return err
	}
	if in.Upload != nil || in.FileURL != nil {
		return rest.NonField("Send the signature as 'file'; 'upload' and 'file_url' are not supported for signatures by this server yet.")
	}
	if data == nil {
		return rest.BadField("file", "No file was submitted.")
	}
	cv, err := p.cvByHref(r.Context(), "signed_collection", in.SignedCollection)
	if err != nil {
		return err
	}
	var repo *meta.Repository
	keyring := ""
	if in.Repository != nil {
		if repo, err = p.core.Env().Repository(r.Context(), "repository", *in.Repository, RepoType); err != nil {
			return err
		}
		if k := decodeAttrs[repoAttrs](repo.Attrs).Gpgkey; k != nil {
			keyring = *k
		}
	}
	if keyring == "" {
		return rest.NonField("Signature verification failed: No key available. Give a repository whose gpgkey holds the signing key.")
	}
	manifest, err := meta.Document(r.Context(), p.db, cv.ID, manifestDoc)
	if err != nil {
		return err
	}
	fp, err := sign.Verify(keyring, bytes.NewReader(manifest), bytes.NewReader(data))
	if err != nil {
		return rest.BadField("file", "Signature verification failed: %v.", err)
	}
	labels, err := rest.SetLabels(in.PulpLabels)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	u := sigUnit(cv.PulpID, sigAttrs{PubkeyFingerprint: fp, Data: string(data), Digest: hex.EncodeToString(sum[:])}, labels)
	return p.dispatchUnit(w, r, signatureSegment, u, repo, in.Overwrite)
}

type deprecationIn struct {
	Repository *string       `json:"repository" openapi:"format=uri,writeOnly"`
	PulpLabels rest.LabelsIn `json:"pulp_labels"`
	Name       string        `json:"name" openapi:"minLength=1,desc=The name of the Collection."`
	Namespace  string        `json:"namespace" openapi:"minLength=1,desc=The namespace of the Collection."`
	Overwrite  *bool         `json:"overwrite" openapi:"newer"`
}

// deprecationCreate queues the task that stores a deprecation (and adds it to the
// repository named).
func (p *Plugin) deprecationCreate(w http.ResponseWriter, r *http.Request) error {
	var in deprecationIn
	if err := decodeRequired(r, &in, "name", "namespace"); err != nil {
		return err
	}
	labels, err := rest.SetLabels(in.PulpLabels)
	if err != nil {
		return err
	}
	var repo *meta.Repository
	if in.Repository != nil {
		if repo, err = p.core.Env().Repository(r.Context(), "repository", *in.Repository, RepoType); err != nil {
			return err
		}
	}
	return p.dispatchUnit(w, r, deprecationSegment, deprecationUnit(in.Namespace, in.Name, labels), repo, in.Overwrite)
}

type markIn struct {
	MarkedCollection string `json:"marked_collection" openapi:"format=uri,desc=The content this mark is pointing to."`
	Value            string `json:"value" openapi:"minLength=1,desc=The string value of this mark."`
}

// markCreate stores a mark on a collection version (marks enter repositories through
// the repository's mark operation).
func (p *Plugin) markCreate(w http.ResponseWriter, r *http.Request) error {
	var in markIn
	if err := decodeRequired(r, &in, "marked_collection", "value"); err != nil {
		return err
	}
	if err := checkSlug(in.Value); err != nil {
		return err
	}
	cv, err := p.cvByHref(r.Context(), "marked_collection", in.MarkedCollection)
	if err != nil {
		return err
	}
	c, _, err := meta.PutContent(r.Context(), p.db, markUnit(cv.PulpID, in.Value), nil)
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusCreated, renderMark(c))
}

type roleIn struct {
	Repository *string       `json:"repository" openapi:"format=uri,writeOnly"`
	Artifact   string        `json:"artifact" openapi:"format=uri"`
	PulpLabels rest.LabelsIn `json:"pulp_labels"`
	Version    string        `json:"version" openapi:"minLength=1"`
	Name       string        `json:"name" openapi:"minLength=1"`
	Namespace  string        `json:"namespace" openapi:"minLength=1"`
	// Overwrite is accepted (Pulp 3.106+) and changes nothing: a role made here enters no
	// repository.
	Overwrite *bool `json:"overwrite" openapi:"newer"`
}

// roleCreate stores a role version from an artifact (its archive).
func (p *Plugin) roleCreate(w http.ResponseWriter, r *http.Request) error {
	var in roleIn
	if err := decodeRequired(r, &in, "artifact", "version", "name", "namespace"); err != nil {
		return err
	}
	if in.Repository != nil {
		return rest.BadField("repository", "Creating a role takes no repository on this server; add it with the repository's modify.")
	}
	for _, f := range []struct{ name, v string }{{"namespace", in.Namespace}, {"name", in.Name}, {"version", in.Version}} {
		if strings.ContainsAny(f.v, "/\\") || f.v == "." || f.v == ".." || len(f.v) > 128 {
			return rest.BadField(f.name, "Not a valid role %s.", f.name)
		}
	}
	id, err := rest.HrefOf("artifact", in.Artifact, "artifacts/")
	if err != nil {
		return err
	}
	art, err := meta.ArtifactByPulpID(r.Context(), p.db, id)
	if err != nil {
		return rest.BadField("artifact", "Invalid hyperlink - Object does not exist.")
	}
	labels, err := rest.SetLabels(in.PulpLabels)
	if err != nil {
		return err
	}
	u := roleUnit(roleAttrs{Namespace: in.Namespace, Name: in.Name, Version: in.Version}, labels)
	aid := art.ID
	c, created, err := meta.PutContent(r.Context(), p.db, u, []meta.ContentFile{{RelativePath: u.RelativePath, ArtifactID: &aid}})
	if err != nil {
		return err
	}
	if !created {
		return rest.NonField("The fields namespace, name, version must make a unique set.")
	}
	items, err := p.renderRoles(r.Context(), []meta.Content{c})
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusCreated, items[0])
}

// unitKind is the general_create kind of the units the API makes whole (signatures,
// deprecations): the task stores the unit and adds it to the repository.
const unitKind = "ansible_unit"

// unitArgs are the arguments of the task that stores a unit made in the API.
type unitArgs struct {
	Unit       meta.Content `json:"unit"`
	Repository string       `json:"repository,omitempty"`
	// Files are the unit's files (a namespace's avatar).
	Files []meta.ContentFile `json:"files,omitempty"`
	// NoOverwrite makes the task fail rather than replace a unit of the repository with
	// the same repository key (overwrite false).
	NoOverwrite bool `json:"no_overwrite,omitempty"`
}

func (p *Plugin) dispatchUnit(w http.ResponseWriter, r *http.Request, segment string, u meta.Content, repo *meta.Repository, overwrite *bool) error {
	a := unitArgs{Unit: u, NoOverwrite: overwrite != nil && !*overwrite}
	if repo != nil {
		a.Repository = repo.PulpID
	}
	return p.core.Env().DispatchCreate(w, r, unitKind, href.Root+"content/"+segment+"/", a, repo)
}

// runUnit is the task that stores a unit made in the API.
func (p *Plugin) runUnit(ctx context.Context, r *task.Run, body json.RawMessage) error {
	var a unitArgs
	if err := json.Unmarshal(body, &a); err != nil {
		return err
	}
	return p.core.CreateUnit(ctx, r, "", nil, a.Repository, !a.NoOverwrite, func() (meta.Content, error) {
		c, _, err := meta.PutContent(ctx, p.db, a.Unit, a.Files)
		return c, err
	})
}
