package ansible

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"

	"pith/content/ansible/collection"
	"pith/content/download"
)

// Reading a Galaxy's API as pulp_ansible's sync does: the API root found from the
// remote's url (tried as it is, then with "api/" appended), v3 preferred to v2, lists
// paged 100 at a time, a version's detail and docs blob at its href.

// Bounds of what a sync reads from a Galaxy.
const (
	// maxAnswer bounds one API answer: a page, a version's detail, a docs blob. The
	// unpaginated list of every version is bounded by max-metadata-mib instead.
	maxAnswer = 64 << 20
	// maxSmallValue bounds a value decoded into memory: a list entry, a version's
	// metadata but its contents, a signature.
	maxSmallValue = 1 << 20
	// maxDocument bounds a document kept as it is: a version's files or contents, a
	// docs blob (FILES.json's bound in an artifact).
	maxDocument = 32 << 20
	// pageSize is pulp_ansible's PAGE_SIZE.
	pageSize = 100
	// maxPages bounds one paged list.
	maxPages = 100000
)

// errNotFound is a 404 from the upstream.
var errNotFound = errors.New("not found")

// galaxy is one upstream Galaxy API: the remote's or a requirement's source.
type galaxy struct {
	url string // as configured
	api string // the versioned root without its slash, ".../api/v3" (pulp_ansible's endpoint)
	v   int    // 3 or 2
}

// galaxies finds each upstream's API once per sync.
type galaxies struct {
	mu    sync.Mutex
	found map[string]*galaxy
}

// galaxy finds the API of the Galaxy at root (pulp_ansible's _get_root_api).
func (s *syncRun) galaxy(ctx context.Context, root string) (*galaxy, error) {
	s.apis.mu.Lock()
	defer s.apis.mu.Unlock()
	if g, ok := s.apis.found[root]; ok {
		return g, nil
	}
	u := root
	if u == "https://galaxy.ansible.com" || u == "https://galaxy.ansible.com/" {
		u = "https://galaxy.ansible.com/api/"
	}
	var versions map[string]any
	err := s.getSmall(ctx, u, &versions)
	if err != nil && !strings.HasSuffix(u, "/api/") && !isTransport(err) {
		u = resolve(u, "api/")
		err = s.getSmall(ctx, u, &versions)
	}
	if err != nil {
		return nil, fmt.Errorf("find the Galaxy API at %s: %w", root, err)
	}
	var avail map[string]any
	if m, ok := versions["available_versions"].(map[string]any); ok {
		avail = m
	} else {
		return nil, fmt.Errorf("%s is not a Galaxy API: it lists no available_versions", u)
	}
	g := &galaxy{url: root}
	switch {
	case avail["v3"] != nil:
		g.v = 3
	case avail["v2"] != nil:
		g.v = 2
	default:
		return nil, fmt.Errorf("the Galaxy API at %s offers neither v3 nor v2", u)
	}
	g.api = fmt.Sprintf("%sv%d", u, g.v)
	if s.apis.found == nil {
		s.apis.found = map[string]*galaxy{}
	}
	s.apis.found[root] = g
	return g, nil
}

// isTransport reports an error that trying another URL of the same host cannot fix.
func isTransport(err error) bool {
	var de *download.Error
	return errors.As(err, &de) && de.Status == 0 && !errors.Is(err, errMalformed)
}

// errMalformed is an answer that is not the JSON expected.
var errMalformed = errors.New("malformed answer")

// resolve is ref relative to base, as urljoin does.
func resolve(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	return b.ResolveReference(r).String()
}

// fetch stages an answer of at most limit bytes; a 404 is errNotFound.
func (s *syncRun) fetch(ctx context.Context, u string, limit int64) (*os.File, int64, error) {
	f, _, err := s.p.core.FetchTempUpTo(ctx, s.d, u, download.Expect{Size: -1}, sha256.New, limit)
	if err != nil {
		var de *download.Error
		if errors.As(err, &de) && de.Status == http.StatusNotFound {
			return nil, 0, fmt.Errorf("GET %s: %w", u, errNotFound)
		}
		return nil, 0, err
	}
	n, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, n, nil
}

// walk fetches an answer and walks it with fn; an answer fn cannot read is errMalformed,
// naming the URL.
func (s *syncRun) walk(ctx context.Context, u string, limit int64, fn func(w *walker) error) error {
	f, n, err := s.fetch(ctx, u, limit)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := fn(newWalker(f, 0, n)); err != nil {
		return malformed(u, err)
	}
	return nil
}

// malformed says that the answer at u is not what a Galaxy answers, unless err already
// says what went wrong elsewhere (a requirement not found, a bound of the sync).
func malformed(u string, err error) error {
	var keep *syncError
	if errors.As(err, &keep) {
		return err
	}
	return fmt.Errorf("GET %s: %w: %v", u, errMalformed, err)
}

// syncError is an error of the sync's own making inside a walk (not the answer's
// fault).
type syncError struct{ err error }

func (e *syncError) Error() string { return e.err.Error() }
func (e *syncError) Unwrap() error { return e.err }

// getSmall decodes a small answer whole.
func (s *syncRun) getSmall(ctx context.Context, u string, v any) error {
	return s.walk(ctx, u, maxSmallValue, func(w *walker) error { return w.decode(v, maxSmallValue) })
}

// pages walks a paged list from u (v3: data and links.next; v2: results and next),
// calling fn for each element, which fn must read. Pages follow the answer's next link.
func (s *syncRun) pages(ctx context.Context, u string, fn func(w *walker) error) error {
	seen := map[string]bool{}
	for n := 0; u != ""; n++ {
		if n == maxPages || seen[u] {
			return fmt.Errorf("GET %s: the list goes on past %d pages, or comes back to a page", u, n)
		}
		seen[u] = true
		var next *string
		err := s.walk(ctx, u, maxAnswer, func(w *walker) error {
			return w.object(func(key string) error {
				switch key {
				case "data", "results":
					return w.array(func() error { return fn(w) })
				case "links":
					return w.object(func(key string) error {
						if key == "next" {
							return w.decode(&next, maxSmallValue)
						}
						_, err := w.skip(maxSmallValue)
						return err
					})
				case "next":
					return w.decode(&next, maxSmallValue)
				}
				_, err := w.skip(maxAnswer)
				return err
			})
		})
		if err != nil {
			return err
		}
		cur := u
		u = ""
		if next != nil && *next != "" {
			u = resolve(cur, *next)
		}
	}
	return nil
}

// withQuery adds the first page's size to a list URL.
func (g *galaxy) firstPage(list string) string {
	if g.v == 2 {
		return fmt.Sprintf("%s?page_size=%d", list, pageSize)
	}
	return fmt.Sprintf("%s?limit=%d&offset=0", list, pageSize)
}

// upstreamVersion is a collection version as a Galaxy lists it: a version's detail, or
// an entry of the unpaginated list of every version.
type upstreamVersion struct {
	Namespace, Name, Version string
	Href                     string // the version's detail, resolved
	DownloadURL              string // resolved
	SHA256                   string
	Size                     int64
	Dependencies             map[string]string
	// Signatures and Marks are the upstream's, stored with the version as they come.
	Signatures      []upstreamSignature
	Marks           []string
	RequiresAnsible *string
	GitURL          string
	meta            upstreamMetadata
	// Large members, kept where they were read: the metadata's contents, and a detail's
	// manifest and files (detail tells whether this was a detail).
	contents, manifest, files span
	detail                    bool
	api                       int // 3 or 2: the docs blob is v3's
	// sem is Version parsed; label is "namespace.name version".
	sem   collection.SemVer
	label string
}

// upstreamSignature is a signature a Galaxy lists for a version.
type upstreamSignature struct {
	Signature         string  `json:"signature"`
	PubkeyFingerprint string  `json:"pubkey_fingerprint"`
	SigningService    *string `json:"signing_service"`
}

// upstreamMetadata are the small members of a version's metadata.
type upstreamMetadata struct {
	Authors       []string `json:"authors"`
	Description   *string  `json:"description"`
	Documentation *string  `json:"documentation"`
	Homepage      *string  `json:"homepage"`
	Issues        *string  `json:"issues"`
	License       []string `json:"license"`
	Repository    *string  `json:"repository"`
	Tags          []string `json:"tags"`
}

// readVersion reads a version from w (its detail when detail is set); base resolves its
// relative links. The version's names and artifact are checked.
func readVersion(w *walker, base string, api int, detail bool) (*upstreamVersion, error) {
	v := &upstreamVersion{detail: detail, api: api}
	var collName, downloadURL, href, gitURL *string
	var artifact *struct {
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	named := func(dst *string) error {
		return w.object(func(key string) error {
			if key == "name" {
				return w.decode(dst, maxSmallValue)
			}
			_, err := w.skip(maxSmallValue)
			return err
		})
	}
	var topName string
	err := w.object(func(key string) error {
		switch key {
		case "namespace":
			return named(&v.Namespace)
		case "collection":
			collName = new(string)
			return named(collName)
		case "name":
			return w.decode(&topName, maxSmallValue)
		case "version":
			return w.decode(&v.Version, maxSmallValue)
		case "href":
			return w.decode(&href, maxSmallValue)
		case "download_url":
			return w.decode(&downloadURL, maxSmallValue)
		case "artifact":
			return w.decode(&artifact, maxSmallValue)
		case "requires_ansible":
			return w.decode(&v.RequiresAnsible, maxSmallValue)
		case "git_url":
			return w.decode(&gitURL, maxSmallValue)
		case "signatures":
			return w.array(func() error {
				var sig upstreamSignature
				err := w.decode(&sig, maxSmallValue)
				v.Signatures = append(v.Signatures, sig)
				return err
			})
		case "marks":
			return w.array(func() error {
				var mark string
				if err := w.decode(&mark, maxSmallValue); err != nil {
					return err
				}
				if !slug.MatchString(mark) || len(mark) > maxMark {
					return fmt.Errorf("mark %.60q is not a slug of at most %d characters", mark, maxMark)
				}
				v.Marks = append(v.Marks, mark)
				return nil
			})
		case "metadata":
			return w.object(func(key string) error {
				var err error
				switch key {
				case "contents":
					v.contents, err = w.skip(maxDocument)
				case "dependencies":
					err = w.decode(&v.Dependencies, maxSmallValue)
				case "authors":
					err = w.decode(&v.meta.Authors, maxSmallValue)
				case "description":
					err = w.decode(&v.meta.Description, maxSmallValue)
				case "documentation":
					err = w.decode(&v.meta.Documentation, maxSmallValue)
				case "homepage":
					err = w.decode(&v.meta.Homepage, maxSmallValue)
				case "issues":
					err = w.decode(&v.meta.Issues, maxSmallValue)
				case "license":
					err = w.decode(&v.meta.License, maxSmallValue)
				case "repository":
					err = w.decode(&v.meta.Repository, maxSmallValue)
				case "tags":
					err = w.decode(&v.meta.Tags, maxSmallValue)
				default:
					_, err = w.skip(maxAnswer)
				}
				return err
			})
		case "manifest":
			var err error
			v.manifest, err = w.skip(collection.DefaultLimits().Manifest)
			return err
		case "files":
			var err error
			v.files, err = w.skip(maxDocument)
			return err
		}
		_, err := w.skip(maxAnswer)
		return err
	})
	if err != nil {
		return nil, err
	}
	v.Name = topName
	if collName != nil && *collName != "" {
		v.Name = *collName
	}
	v.label = v.Namespace + "." + v.Name + " " + v.Version
	for _, p := range []struct{ what, s string }{{"namespace", v.Namespace}, {"name", v.Name}} {
		if err := collection.ValidName(p.s); err != nil {
			return nil, fmt.Errorf("a collection version's %s %v", p.what, err)
		}
	}
	if v.sem, err = collection.ParseVersion(v.Version); err != nil {
		return nil, fmt.Errorf("collection %s.%s: version %q: %v", v.Namespace, v.Name, v.Version, err)
	}
	if href != nil {
		v.Href = resolve(base, *href)
	}
	if gitURL != nil && *gitURL != "" {
		v.GitURL = *gitURL
		return v, nil
	}
	if downloadURL == nil || *downloadURL == "" || artifact == nil {
		return nil, fmt.Errorf("collection %s: no download_url and artifact", v.label)
	}
	v.DownloadURL = resolve(base, *downloadURL)
	v.SHA256, v.Size = strings.ToLower(artifact.SHA256), artifact.Size
	if len(v.SHA256) != 64 || strings.Trim(v.SHA256, "0123456789abcdef") != "" || v.Size < 0 {
		return nil, fmt.Errorf("collection %s: the artifact's sha256 %q or size %d is not one", v.label, artifact.SHA256, artifact.Size)
	}
	return v, nil
}

// versionEntry is an entry of a collection's versions list.
type versionEntry struct {
	Version string `json:"version"`
	Href    string `json:"href"`
}
