package ansible

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"pith/api/href"
	"pith/api/rest"
	"pith/content/ansible/collection"
	"pith/meta"
)

// The ansible unit kinds: how each is stored (meta.Content) and shown.
//
// A collection version keeps its small fields in attrs (cvAttrs) and its large
// documents (docs_blob, MANIFEST.json, FILES.json) apart (meta.PutDocuments), so that
// lists never load them; its natural key is the artifact's sha256 (pulp_ansible's
// uniqueness) and its repo key namespace.name:version (repo_key_fields), so a
// repository holds one of each version. Signatures, marks and deprecations hold the
// pulp_id of what they are about in attrs.

// Href segments of the unit kinds (/pulp/api/v3/content/<segment>/).
const (
	cvSegment          = "ansible/collection_versions"
	signatureSegment   = "ansible/collection_signatures"
	deprecationSegment = "ansible/collection_deprecations"
	markSegment        = "ansible/collection_marks"
	namespaceSegment   = "ansible/namespaces"
	roleSegment        = "ansible/roles"
)

// cvAttrs are what a collection version keeps in attrs: pulp_ansible's fields but the
// large documents.
type cvAttrs struct {
	Namespace         string            `json:"namespace"`
	Name              string            `json:"name"`
	Version           string            `json:"version"`
	VersionMajor      int64             `json:"version_major"`
	VersionMinor      int64             `json:"version_minor"`
	VersionPatch      int64             `json:"version_patch"`
	VersionPrerelease string            `json:"version_prerelease"`
	VersionKey        string            `json:"version_key"` // sorts as semver does
	Authors           []string          `json:"authors"`
	Dependencies      map[string]string `json:"dependencies"`
	Description       string            `json:"description"`
	Documentation     string            `json:"documentation"`
	Homepage          string            `json:"homepage"`
	Issues            string            `json:"issues"`
	License           []string          `json:"license"`
	Repository        string            `json:"repository"`
	RequiresAnsible   *string           `json:"requires_ansible"`
	Tags              []string          `json:"tags"`
	Contents          json.RawMessage   `json:"contents"`
	SHA256            string            `json:"sha256"`
}

// Names of a collection version's documents.
const (
	docsBlobDoc = "docs_blob"
	manifestDoc = "manifest"
	filesDoc    = "files"
)

// versionKey orders versions as SemVer precedence does, compared as text: numbers
// numerically, a release after its pre-releases, pre-release identifiers numeric ones
// numerically and before alphanumeric ones, a shorter list first.
func versionKey(v collection.SemVer) string {
	if len(v.Prerelease) == 0 {
		return fmt.Sprintf("%010d.%010d.%010d~", v.Major, v.Minor, v.Patch)
	}
	ids := make([]string, len(v.Prerelease))
	for i, id := range v.Prerelease {
		if n, err := strconv.ParseUint(id, 10, 64); err == nil {
			ids[i] = fmt.Sprintf("0%020d", n)
		} else {
			ids[i] = "1" + id
		}
	}
	return fmt.Sprintf("%010d.%010d.%010d-%s", v.Major, v.Minor, v.Patch, strings.Join(ids, "."))
}

// repoKey is a collection version's key in a repository: one of each version.
func repoKey(namespace, name, version string) string {
	return namespace + "." + name + ":" + version
}

// cvUnit makes the unit of a collection read from its artifact.
func cvUnit(v *collection.Version, labels meta.Labels) (meta.Content, map[string][]byte, error) {
	a := cvAttrs{Namespace: v.Namespace, Name: v.Name, Version: v.Version,
		VersionMajor: int64(v.SemVer.Major), VersionMinor: int64(v.SemVer.Minor), VersionPatch: int64(v.SemVer.Patch),
		VersionPrerelease: strings.Join(v.SemVer.Prerelease, "."),
		VersionKey:        versionKey(v.SemVer), Authors: nonNil(v.Authors), Dependencies: v.Dependencies, Description: v.Description,
		Documentation: v.Documentation, Homepage: v.Homepage, Issues: v.Issues, License: nonNil(v.License), Repository: v.Repository,
		Tags: nonNil(v.Tags), SHA256: v.SHA256}
	if a.Dependencies == nil {
		a.Dependencies = map[string]string{}
	}
	if v.RequiresAnsible != "" {
		a.RequiresAnsible = &v.RequiresAnsible
	}
	var err error
	if a.Contents, err = json.Marshal(nonNil(v.Contents)); err != nil {
		return meta.Content{}, nil, err
	}
	attrs, err := json.Marshal(a)
	if err != nil {
		return meta.Content{}, nil, err
	}
	docs, err := json.Marshal(v.DocsBlob)
	if err != nil {
		return meta.Content{}, nil, err
	}
	c := meta.Content{Type: CollectionVersionType, NaturalKey: v.SHA256, RepoKey: repoKey(v.Namespace, v.Name, v.Version),
		RelativePath: v.RelativePath(), Digest: v.SHA256, Attrs: attrs, Labels: labels}
	return c, map[string][]byte{docsBlobDoc: docs, manifestDoc: v.Manifest, filesDoc: v.Files}, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// cvResponse is a collection version as pulp_ansible's API shows it.
type cvResponse struct {
	rest.ArtifactUnit
	ID               string            `json:"id" openapi:"format=uuid,readOnly"`
	Authors          []string          `json:"authors" openapi:"readOnly"`
	Dependencies     map[string]string `json:"dependencies" openapi:"readOnly,type=object"`
	Description      string            `json:"description" openapi:"readOnly"`
	Documentation    string            `json:"documentation" openapi:"readOnly,maxLength=2000"`
	Homepage         string            `json:"homepage" openapi:"readOnly,maxLength=2000"`
	Issues           string            `json:"issues" openapi:"readOnly,maxLength=2000"`
	License          []string          `json:"license" openapi:"readOnly"`
	Name             string            `json:"name" openapi:"readOnly,maxLength=64"`
	Namespace        string            `json:"namespace" openapi:"readOnly,maxLength=64"`
	OriginRepository string            `json:"origin_repository" openapi:"readOnly,maxLength=2000"`
	Tags             []tagResponse     `json:"tags" openapi:"readOnly"`
	Version          string            `json:"version" openapi:"readOnly,maxLength=128"`
	RequiresAnsible  *string           `json:"requires_ansible" openapi:"readOnly,nullable,maxLength=255"`
}

// tagResponse is a tag of a collection version.
type tagResponse struct {
	Name string `json:"name" openapi:"readOnly"`
}

func (p *Plugin) renderCVs(ctx context.Context, cs []meta.Content) ([]any, error) {
	arts, err := meta.UnitArtifacts(ctx, p.db, cs)
	if err != nil {
		return nil, err
	}
	items := make([]any, len(cs))
	for i, c := range cs {
		items[i] = renderCV(c, arts[i])
	}
	return items, nil
}

func renderCV(c meta.Content, art *meta.Artifact) cvResponse {
	var a cvAttrs
	json.Unmarshal(c.Attrs, &a)
	out := cvResponse{ArtifactUnit: rest.NewArtifactUnit(c, cvSegment, "ansible.collectionversion", art), ID: c.PulpID,
		Authors: nonNil(a.Authors), Dependencies: a.Dependencies, Description: a.Description, Documentation: a.Documentation,
		Homepage: a.Homepage, Issues: a.Issues, License: nonNil(a.License), Name: a.Name, Namespace: a.Namespace,
		OriginRepository: a.Repository, Tags: []tagResponse{}, Version: a.Version, RequiresAnsible: a.RequiresAnsible}
	if out.Dependencies == nil {
		out.Dependencies = map[string]string{}
	}
	for _, t := range a.Tags {
		out.Tags = append(out.Tags, tagResponse{Name: t})
	}
	out.SHA256 = &c.Digest
	return out
}

// cvFilters are the collection version list's own filters (pulp_ansible's
// CollectionVersionFilter).
func cvFilters() []rest.Filter {
	return []rest.Filter{
		{Name: "name", Attr: "name", Lookups: []string{"exact"}},
		{Name: "namespace", Attr: "namespace", Lookups: []string{"exact"}},
		{Name: "version", Attr: "version", Lookups: []string{"exact"}},
		{Name: "tags", Type: rest.Custom, Lookups: []string{"exact"}, Desc: "Filter by comma separate list of tags that must all be matched", Apply: applyTags},
	}
}

// applyTags narrows to versions holding every tag of a comma-separated list.
func applyTags(l *meta.List, d meta.Dialect, val string) error {
	for t := range strings.SplitSeq(val, ",") {
		if t = strings.TrimSpace(t); t != "" {
			l.And(d.JSONArrayHas("c.attrs", "tags"), t)
		}
	}
	return nil
}

// cvOrdering orders collection versions by pulp_ansible's orderable fields.
func cvOrdering() map[string]string {
	out := unitOrdering()
	for _, k := range []string{"authors", "contents", "dependencies", "description", "documentation", "homepage", "issues", "license",
		"name", "namespace", "requires_ansible", "tags", "version_major", "version_minor", "version_patch", "version_prerelease"} {
		out[k] = "attr:" + k
	}
	out["version"] = "attr:version_key"
	out["repository"] = "attr:repository"
	out["sha256"] = "c.digest"
	// Documents kept apart order as pulp_ansible's JSON columns would not meaningfully;
	// they order by the unit's key like the search vector.
	for _, k := range []string{"docs_blob", "manifest", "files", "search_vector"} {
		out[k] = "c.id"
	}
	return out
}

// unitOrdering is the ordering every pulp_ansible unit list offers.
func unitOrdering() map[string]string {
	return map[string]string{"pk": "c.id", "pulp_id": "c.pulp_id", "pulp_created": "c.created", "pulp_last_updated": "c.updated",
		"pulp_type": "c.type", "timestamp_of_interest": "c.timestamp_of_interest", "pulp_labels": "c.labels", "upstream_id": "c.pulp_id"}
}

// cvByHref finds a collection version by its href (field names the request field).
func (p *Plugin) cvByHref(ctx context.Context, field, h string) (meta.Content, error) {
	id, err := rest.HrefOf(field, h, "content/"+cvSegment+"/")
	if err != nil {
		return meta.Content{}, err
	}
	c, err := meta.ContentByPulpID(ctx, p.db, id)
	if err != nil || c.Type != CollectionVersionType {
		return meta.Content{}, rest.BadField(field, "Invalid hyperlink - Object does not exist.")
	}
	return c, nil
}

// cvHref is the href of a collection version.
func cvHref(pulpID string) string { return href.Content(cvSegment, pulpID) }
