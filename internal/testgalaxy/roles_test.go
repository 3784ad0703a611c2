package testgalaxy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// getJSON fetches url and decodes its JSON body into v; it returns the status.
func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %d, not JSON: %v\n%s", url, resp.StatusCode, err, b)
		}
	}
	return resp.StatusCode
}

type v1Page struct {
	Count    int    `json:"count"`
	Next     string `json:"next"`
	NextLink string `json:"next_link"`
	Results  []struct {
		ID            int    `json:"id"`
		Name          string `json:"name"`
		GitHubUser    string `json:"github_user"`
		GitHubRepo    string `json:"github_repo"`
		DownloadURL   string `json:"download_url"`
		SummaryFields struct {
			Namespace struct{ Name string }   `json:"namespace"`
			Versions  []struct{ Name string } `json:"versions"`
		} `json:"summary_fields"`
	} `json:"results"`
	Detail string `json:"detail"`
}

// A role remote sync of pulp_ansible 0.30.3 (tasks/roles.py) reads the remote's URL with
// page=1&page_size=100 added, takes count, fetches pages 2..ceil(count/100) the same way
// (never following next), and for each result and each of
// summary_fields.versions[].name downloads
// https://github.com/<github_user>/<github_repo>/archive/<name>.tar.gz. Done here
// against 150 roles, with Server.URL in place of GitHub, it finds every role and
// every archive.
func TestRoleSyncAsPulpAnsible(t *testing.T) {
	var roles []Role
	for i := range 150 {
		roles = append(roles, Role{Namespace: "many", Name: fmt.Sprintf("r%03d", i), Versions: []string{"1.0.0", "1.1.0"}})
	}
	roles = append(roles, Role{Namespace: "other", Name: "r000", Versions: []string{"2.0.0"}})
	s := New(t, Config{Roles: roles})
	remote := s.API + "v1/roles/?owner__username=many"
	page := func(n int) v1Page {
		u, _ := url.Parse(remote)
		q := u.Query()
		q.Set("page", fmt.Sprint(n))
		q.Set("page_size", "100")
		u.RawQuery = q.Encode()
		var p v1Page
		if code := getJSON(t, u.String(), &p); code != 200 {
			t.Fatalf("page %d: %d", n, code)
		}
		return p
	}
	first := page(1)
	pages := int(math.Ceil(float64(first.Count) / 100))
	if first.Count != 150 || pages != 2 {
		t.Fatalf("count %d", first.Count)
	}
	seen := map[string]bool{}
	for _, p := range []v1Page{first, page(2)} {
		for _, r := range p.Results {
			if r.SummaryFields.Namespace.Name != "many" || r.GitHubUser == "" || r.GitHubRepo == "" {
				t.Fatalf("role %+v", r)
			}
			for _, v := range r.SummaryFields.Versions {
				u := fmt.Sprintf("%s/%s/%s/archive/%s.tar.gz", s.URL, r.GitHubUser, r.GitHubRepo, v.Name)
				resp, err := http.Get(u)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("GET %s: %v %v", u, err, resp.Status)
				}
				resp.Body.Close()
				seen[r.SummaryFields.Namespace.Name+"."+r.Name+" "+v.Name] = true
			}
		}
	}
	if len(seen) != 300 {
		t.Fatalf("%d role versions found, want 300", len(seen))
	}
}

func TestRoleAPI(t *testing.T) {
	s := New(t, Config{MaxPage: 2, Roles: []Role{
		{Namespace: "Pith", Name: "hello", Versions: []string{"1.0.0", "1.1.0", "1.2.0"}},
		{Namespace: "pith", Name: "bye", Versions: []string{"0.1.0"}, GitHubUser: "someone", GitHubRepo: "bye-role"},
		{Namespace: "other", Name: "hello"},
	}})
	for _, c := range []struct {
		query string
		code  int
		names []string
		next  string
	}{
		{"", 200, []string{"hello", "bye"}, "page=2"},
		{"?page=2", 200, []string{"hello"}, ""},
		{"?page=3", 404, nil, ""},
		{"?owner__username=pith", 200, []string{"hello", "bye"}, ""}, // without regard to case
		{"?owner__username=PITH&name=HELLO", 200, []string{"hello"}, ""},
		{"?namespace__name=other", 200, []string{"hello"}, ""},
		{"?owner__username=nobody", 200, []string{}, ""},
		{"?id=2", 200, []string{"bye"}, ""},
		{"?unknown=1&page_size=1", 200, []string{"hello"}, "page=2&page_size=1&unknown=1"},
		{"?page_size=1000", 200, []string{"hello", "bye"}, "page=2"}, // capped at MaxPage
		{"?page_size=0", 400, nil, ""},
		{"?page=x", 400, nil, ""},
		{"?page=-1", 400, nil, ""},
	} {
		var p v1Page
		code := getJSON(t, s.API+"v1/roles/"+c.query, &p)
		var names []string
		for _, r := range p.Results {
			names = append(names, r.Name)
		}
		if code != c.code || c.names != nil && strings.Join(names, ",") != strings.Join(c.names, ",") ||
			c.next != "" && (!strings.Contains(p.NextLink, c.next) || p.Next != s.URL+p.NextLink) || c.next == "" && p.NextLink != "" {
			t.Errorf("%s: %d %v next %q %q, want %d %v next ...%s", c.query, code, names, p.Next, p.NextLink, c.code, c.names, c.next)
		}
		if code >= 400 && p.Detail == "" {
			t.Errorf("%s: error without detail", c.query)
		}
	}

	var vs v1Page
	if code := getJSON(t, s.API+"v1/roles/2/versions/", &vs); code != 200 || len(vs.Results) != 1 ||
		vs.Results[0].DownloadURL != s.URL+"/someone/bye-role/archive/0.1.0.tar.gz" {
		t.Fatalf("versions: %d %+v", code, vs)
	}
	for _, id := range []string{"0", "4", "x", "99999999999999999999"} {
		if code := getJSON(t, s.API+"v1/roles/"+id+"/versions/", nil); code != 404 {
			t.Errorf("versions of role %s: %d", id, code)
		}
	}
	if code := getJSON(t, s.API+"v1/roles/1/", &struct{}{}); code != 200 {
		t.Errorf("detail: %d", code)
	}

	resp, err := http.Get(s.URL + "/Pith/ansible-role-hello/archive/1.1.0.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(b, RoleArchive(Role{Namespace: "Pith", Name: "hello"}, "1.1.0")) {
		t.Fatalf("archive: %d", resp.StatusCode)
	}
	for _, p := range []string{"/Pith/ansible-role-hello/archive/9.9.9.tar.gz", "/Pith/ansible-role-hello/archive/1.1.0.zip", "/pith/bye-role/archive/0.1.0.tar.gz"} {
		if resp, err := http.Get(s.URL + p); err != nil || resp.StatusCode != 404 {
			t.Errorf("%s: %v %v", p, err, resp.Status)
		}
	}
}

// The archive is what GitHub makes of a tag: one top directory holding a role
// ansible-galaxy accepts (meta/main.yml, tasks/main.yml); the same bytes each time.
func TestRoleArchive(t *testing.T) {
	r := Role{Namespace: "pith", Name: "hello", Description: `says "hello"`}
	b := RoleArchive(r, "1.0.0")
	if !bytes.Equal(b, RoleArchive(r, "1.0.0")) || bytes.Equal(b, RoleArchive(r, "1.0.1")) {
		t.Fatal("the archive is not a function of role and version")
	}
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		files[h.Name] = string(body)
	}
	meta := files["ansible-role-hello-1.0.0/meta/main.yml"]
	if !strings.Contains(meta, "role_name: hello\n") || !strings.Contains(meta, `description: "says \"hello\""`) ||
		!strings.Contains(files["ansible-role-hello-1.0.0/tasks/main.yml"], `msg: "pith.hello 1.0.0"`) || len(files) != 6 {
		t.Fatalf("files: %v", files)
	}
}

func TestConfigRefused(t *testing.T) {
	for name, cfg := range map[string]Config{
		"prefix without slash":  {Prefix: "/pulp_ansible/galaxy/x"},
		"prefix with a pattern": {Prefix: "/{x}/"},
		"prefix with ..":        {Prefix: "/a/../"},
		"role name":             {Roles: []Role{{Namespace: "a b", Name: "x"}}},
		"role version":          {Roles: []Role{{Namespace: "a", Name: "x", Versions: []string{"../1"}}}},
		"role twice":            {Roles: []Role{{Namespace: "a", Name: "x"}, {Namespace: "A", Name: "X"}}},
	} {
		if _, err := newServer(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
