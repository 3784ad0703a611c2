package ansible

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"pith/content"
	"pith/content/download"
	"pith/meta"
	"pith/task"
)

// Role sync: a role remote's url is a Galaxy v1 roles list (https://galaxy.ansible.com/
// api/v1/roles/?namespace__name=elastic); every role of it, every version of each, with
// the archive GitHub makes of the version's tag, as pulp_ansible syncs them: pages of 100
// (page and page_size; offset and limit for a v3 url), the count of the first deciding how
// many more, each role's name, summary_fields.namespace.name, summary_fields.versions[].name,
// github_user and github_repo.

// RoleSyncTask is the task name of a role remote's sync, as pulp_ansible names it.
const RoleSyncTask = "pulp_ansible.app.tasks.roles.synchronize"

// DefaultRoleArchiveOrigin is where role archives come from: GitHub's archives of a
// repository's tags.
const DefaultRoleArchiveOrigin = "https://github.com"

// rolePageSize is pulp_ansible's PAGE_SIZE: the page size asked for.
const rolePageSize = 100

// maxRolePages bounds how many pages an upstream's count can make a sync fetch
// (galaxy.ansible.com had about 36,000 roles: 360 pages).
const maxRolePages = 10000

// SetRoleArchiveOrigin makes role syncs fetch archives from origin + /<github_user>/
// <github_repo>/archive/<version>.tar.gz instead of GitHub (a mirror or GitHub
// Enterprise; tests).
func (p *Plugin) SetRoleArchiveOrigin(origin string) { p.roleOrigin = strings.TrimSuffix(origin, "/") }

// RoleSyncArgs are the arguments of a role sync.
type RoleSyncArgs struct {
	Repository string `json:"repository"`
	Remote     string `json:"remote"`
	Mirror     bool   `json:"mirror"`
}

// v1Page is what a role sync reads of a page of Galaxy's v1 roles list.
type v1Page struct {
	Count   *int64 `json:"count"`
	Results []struct {
		Name          string `json:"name"`
		GitHubUser    string `json:"github_user"`
		GitHubRepo    string `json:"github_repo"`
		SummaryFields struct {
			Namespace struct {
				Name string `json:"name"`
			} `json:"namespace"`
			Versions []struct {
				Name string `json:"name"`
			} `json:"versions"`
		} `json:"summary_fields"`
	} `json:"results"`
}

var apiVersion = regexp.MustCompile(`/v(\d)/`)

// pageURL is page n of a roles list url whose pages hold size: page and page_size for
// v1 and v2, offset and limit for v3 (pulp_ansible's get_page_url).
func pageURL(u *url.URL, v, n, size int) string {
	q := u.Query()
	if v < 3 {
		q.Set("page", strconv.Itoa(n))
		q.Set("page_size", strconv.Itoa(rolePageSize))
	} else {
		q.Set("offset", strconv.Itoa((n-1)*size))
		q.Set("limit", strconv.Itoa(rolePageSize))
	}
	out := *u
	out.RawQuery = q.Encode()
	return out.String()
}

// roleName is a role's namespace, name or version as it may stand in a path: no
// separators, no dot names, bounded.
var roleName = regexp.MustCompile(`^[A-Za-z0-9_.+-]{1,128}$`)

func (p *Plugin) runRoleSync(ctx context.Context, r *task.Run) error {
	var a RoleSyncArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	remote, err := meta.RemoteByPulpID(ctx, p.db, a.Remote)
	if err != nil {
		return err
	}
	u, err := url.Parse(remote.URL)
	if err != nil {
		return fmt.Errorf("remote %q: %w", remote.Name, err)
	}
	m := apiVersion.FindStringSubmatch(u.Path)
	if m == nil {
		return fmt.Errorf("remote %q: the url %s names no API version (/v1/)", remote.Name, remote.URL)
	}
	v, _ := strconv.Atoi(m[1])
	d, err := content.Downloader(remote)
	if err != nil {
		return err
	}

	// 1. The pages: the first says how many there are.
	pp := r.Progress("sync.parsing.roles", "Parsing Pages from Galaxy Roles API", 1)
	first, err := p.rolePage(ctx, d, pageURL(u, v, 1, rolePageSize))
	if err != nil {
		pp.Finish(err)
		return err
	}
	// Pages hold what the first held: an upstream that serves fewer than asked (a smaller
	// maximum page size) still gets every page asked for (pulp_ansible assumes 100).
	size := max(len(first.Results), 1)
	pages := int(math.Ceil(float64(*first.Count) / float64(size)))
	if pages > maxRolePages {
		err := fmt.Errorf("remote %q: %d roles make %d pages, more than %d", remote.Name, *first.Count, pages, maxRolePages)
		pp.Finish(err)
		return err
	}
	all := []*v1Page{first}
	for n := 2; n <= pages; n++ {
		pg, err := p.rolePage(ctx, d, pageURL(u, v, n, size))
		if err != nil {
			pp.Finish(err)
			return err
		}
		all = append(all, pg)
	}
	pp.Add(1)
	pp.Finish(nil)

	// 2. The units, every file fetched (immediate) or left to fetch on demand.
	origin := p.roleOrigin
	if origin == "" {
		origin = DefaultRoleArchiveOrigin
	}
	type roleFile struct {
		unit meta.Content
		url  string
		art  *meta.Artifact
	}
	var files []*roleFile
	for _, pg := range all {
		for _, ro := range pg.Results {
			ns := ro.SummaryFields.Namespace.Name
			for _, ver := range ro.SummaryFields.Versions {
				for _, f := range []struct{ what, v string }{{"namespace", ns}, {"name", ro.Name}, {"version", ver.Name},
					{"github_user", ro.GitHubUser}, {"github_repo", ro.GitHubRepo}} {
					if !roleName.MatchString(f.v) || f.v == "." || f.v == ".." {
						return fmt.Errorf("remote %q: role %s.%s: not a valid %s: %q", remote.Name, ns, ro.Name, f.what, f.v)
					}
				}
				files = append(files, &roleFile{unit: roleUnit(roleAttrs{Namespace: ns, Name: ro.Name, Version: ver.Name}, nil),
					url: fmt.Sprintf("%s/%s/%s/archive/%s.tar.gz", origin, url.PathEscape(ro.GitHubUser), url.PathEscape(ro.GitHubRepo), url.PathEscape(ver.Name))})
			}
		}
	}
	if remote.Policy == "immediate" {
		pd := r.Progress("sync.downloading.artifacts", "Downloading Artifacts", int64(len(files)))
		conc := 10
		if n := decodeAttrs[struct {
			DownloadConcurrency *int `json:"download_concurrency"`
		}](remote.Attrs).DownloadConcurrency; n != nil && *n > 0 {
			conc = *n
		}
		err := content.Parallel(ctx, conc, func(yield func(*roleFile) bool) {
			for _, f := range files {
				if !yield(f) {
					return
				}
			}
		}, func(f *roleFile) string { return f.unit.RelativePath }, func(ctx context.Context, f *roleFile) error {
			dg, err := content.FetchBlob(ctx, p.core.Store, d, f.url, download.Expect{Size: -1})
			if err != nil {
				return err
			}
			art := meta.ArtifactOf(dg)
			f.art = &art
			pd.Add(1)
			return nil
		})
		pd.Finish(err)
		if err != nil {
			return err
		}
	}

	// 3. One new version.
	var ids []int64
	err = p.db.Tx(ctx, func(tx *meta.Tx) error {
		units := make([]meta.NewUnit, len(files))
		for i, f := range files {
			cf := meta.ContentFile{RelativePath: f.unit.RelativePath, RemoteID: &remote.ID, URL: f.url}
			if f.art != nil {
				art, _, err := meta.PutArtifact(ctx, tx, *f.art)
				if err != nil {
					return err
				}
				cf.ArtifactID = &art.ID
			}
			units[i] = meta.NewUnit{Content: f.unit, Files: []meta.ContentFile{cf}}
		}
		stored, _, err := meta.PutContents(ctx, tx, units)
		for _, c := range stored {
			ids = append(ids, c.ID)
		}
		return err
	})
	if err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, p.db, a.Repository)
	if err != nil {
		return err
	}
	return p.core.NewVersion(ctx, r, repo.PulpID, meta.Change{RemoveAll: a.Mirror, Add: ids})
}

// rolePage fetches and reads one page of a roles list (staged and bounded like every
// metadata file).
func (p *Plugin) rolePage(ctx context.Context, d *download.Downloader, u string) (*v1Page, error) {
	f, _, err := p.core.FetchTemp(ctx, d, u, download.Expect{Size: -1}, sha256.New)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pg v1Page
	if err := json.NewDecoder(f).Decode(&pg); err != nil {
		return nil, fmt.Errorf("roles page %s: not the JSON of a Galaxy roles list: %w", redactURL(u), err)
	}
	if pg.Count == nil {
		return nil, fmt.Errorf("roles page %s: no count", redactURL(u))
	}
	return &pg, nil
}

// redactURL is a URL without its query (an upstream's query may carry a token).
func redactURL(u string) string {
	s, _, _ := strings.Cut(u, "?")
	return s
}
