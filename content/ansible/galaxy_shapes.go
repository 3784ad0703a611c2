package ansible

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"pith/api/rest"
)

// The Galaxy API's answers, as pulp_ansible's Galaxy serializers write them (field
// order included), and its paging.

// galaxyCollection is a collection (CollectionSerializer).
type galaxyCollection struct {
	Href           string         `json:"href" openapi:"readOnly,desc=Get href."`
	Namespace      string         `json:"namespace" openapi:"readOnly"`
	Name           string         `json:"name" openapi:"readOnly"`
	Deprecated     bool           `json:"deprecated"`
	VersionsURL    string         `json:"versions_url" openapi:"readOnly,desc=Get a link to a collection versions list."`
	HighestVersion highestVersion `json:"highest_version" openapi:"readOnly,desc=Get a highest version and its link."`
	CreatedAt      string         `json:"created_at" openapi:"format=date-time,readOnly"`
	UpdatedAt      string         `json:"updated_at" openapi:"format=date-time,readOnly"`
	DownloadCount  int            `json:"download_count" openapi:"readOnly"`
}

type highestVersion struct {
	Href    string `json:"href"`
	Version string `json:"version"`
}

// galaxyVersionItem is a collection version in a list (CollectionVersionListSerializer).
type galaxyVersionItem struct {
	Version         string   `json:"version" openapi:"maxLength=128"`
	Href            string   `json:"href" openapi:"readOnly,desc=Get href."`
	CreatedAt       string   `json:"created_at" openapi:"format=date-time"`
	UpdatedAt       string   `json:"updated_at" openapi:"format=date-time"`
	RequiresAnsible *string  `json:"requires_ansible" openapi:"nullable,maxLength=255"`
	Marks           []string `json:"marks" openapi:"readOnly"`
}

// galaxyVersion is a collection version's detail (CollectionVersionSerializer); the
// unpaginated list of every version has the same fields but the manifest and files.
type galaxyVersion struct {
	galaxyVersionItem
	Artifact     *artifactRef       `json:"artifact" openapi:"readOnly"`
	Collection   collectionRef      `json:"collection" openapi:"readOnly"`
	DownloadURL  *string            `json:"download_url" openapi:"readOnly"`
	Name         string             `json:"name" openapi:"readOnly"`
	Namespace    versionNamespace   `json:"namespace" openapi:"readOnly"`
	Signatures   []galaxySignature  `json:"signatures" openapi:"required"`
	Metadata     collectionMetadata `json:"metadata" openapi:"readOnly"`
	GitURL       *string            `json:"git_url" openapi:"readOnly"`
	GitCommitSHA *string            `json:"git_commit_sha" openapi:"readOnly"`
	Manifest     json.RawMessage    `json:"manifest,omitempty" openapi:"readOnly,type=object"`
	Files        json.RawMessage    `json:"files,omitempty" openapi:"readOnly,type=object"`
}

type artifactRef struct {
	Filename string `json:"filename"`
	SHA256   string `json:"sha256"`
	Size     int64  `json:"size"`
}

type collectionRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Href string `json:"href" openapi:"readOnly"`
}

type versionNamespace struct {
	Name           string  `json:"name"`
	MetadataSHA256 *string `json:"metadata_sha256" openapi:"required"`
}

type galaxySignature struct {
	Signature         string  `json:"signature" openapi:"readOnly"`
	PubkeyFingerprint string  `json:"pubkey_fingerprint" openapi:"maxLength=64"`
	SigningService    *string `json:"signing_service" openapi:"readOnly"`
	PulpCreated       string  `json:"pulp_created" openapi:"format=date-time,readOnly"`
}

type collectionMetadata struct {
	Authors       []string          `json:"authors" openapi:"readOnly"`
	Contents      json.RawMessage   `json:"contents" openapi:"readOnly"`
	Dependencies  map[string]string `json:"dependencies" openapi:"readOnly"`
	Description   string            `json:"description" openapi:"readOnly"`
	Documentation string            `json:"documentation" openapi:"readOnly"`
	Homepage      string            `json:"homepage" openapi:"readOnly"`
	Issues        string            `json:"issues" openapi:"readOnly"`
	License       []string          `json:"license" openapi:"readOnly"`
	Repository    string            `json:"repository" openapi:"readOnly"`
	Tags          []string          `json:"tags"`
}

type docsBlobResponse struct {
	DocsBlob json.RawMessage `json:"docs_blob" openapi:"type=object,required"`
}

type repoMetadataResponse struct {
	Published string `json:"published" openapi:"format=date-time"`
}

type clientConfiguration struct {
	DefaultDistributionPath *string `json:"default_distribution_path" openapi:"required"`
}

// apiRoot is what /api/ answers: the API versions a distribution speaks.
type apiRoot struct {
	AvailableVersions map[string]string `json:"available_versions"`
	CurrentVersion    string            `json:"current_version"`
}

// galaxyPage is pulp_ansible's Galaxy page: {meta: {count}, links, data}.
type galaxyPage struct {
	Meta  pageMeta  `json:"meta"`
	Links pageLinks `json:"links"`
	Data  []any     `json:"data"`
}

type pageMeta struct {
	Count int `json:"count"`
}

type pageLinks struct {
	First    *string `json:"first"`
	Previous *string `json:"previous"`
	Next     *string `json:"next"`
	Last     *string `json:"last"`
}

// Paging of the Galaxy lists: pulp_ansible's LimitOffsetPagination.
const (
	galaxyDefaultLimit = 10
	galaxyMaxLimit     = 100
)

// paging is a Galaxy list request's limit and offset, read as Django REST framework
// reads them: a limit that is not a positive integer is the default one, and one above
// the maximum the maximum; an offset that is not a non-negative integer is 0.
type paging struct{ limit, offset int }

func pagingOf(r *http.Request) paging {
	q := r.URL.Query()
	p := paging{limit: galaxyDefaultLimit}
	if n, err := strconv.Atoi(q.Get("limit")); err == nil && n > 0 {
		p.limit = min(n, galaxyMaxLimit)
	}
	if n, err := strconv.Atoi(q.Get("offset")); err == nil && n > 0 {
		p.offset = n
	}
	return p
}

// window is the part of n items the page holds.
func (p paging) window(n int) (from, to int) {
	from = min(p.offset, n)
	return from, min(from+p.limit, n)
}

// page is the Galaxy page of count items holding data. Its links are paths with the
// request's query, limit and offset set, sorted as Django REST framework writes them.
func (p paging) page(r *http.Request, count int, data []any) galaxyPage {
	link := func(offset int, keep bool) *string {
		q := r.URL.Query()
		q.Set("limit", strconv.Itoa(p.limit))
		if keep {
			q.Set("offset", strconv.Itoa(offset))
		} else {
			q.Del("offset")
		}
		s := (&url.URL{Path: r.URL.Path, RawQuery: q.Encode()}).String()
		return &s
	}
	if data == nil {
		data = []any{}
	}
	out := galaxyPage{Meta: pageMeta{Count: count}, Data: data}
	out.Links.First = link(0, true)
	out.Links.Last = link(max(count-p.limit, 0), true)
	if p.offset+p.limit < count {
		out.Links.Next = link(p.offset+p.limit, true)
	}
	if p.offset > 0 {
		out.Links.Previous = link(p.offset-p.limit, p.offset-p.limit > 0)
	}
	return out
}

// writeGalaxy sends a Galaxy answer.
func writeGalaxy(w http.ResponseWriter, status int, v any) error {
	rest.WriteJSON(w, status, v)
	return nil
}
