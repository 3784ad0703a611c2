package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"pith/meta"
)

// fuzzDB is a SQLite database with one repository, for the fuzz targets to run what
// they parse.
func fuzzDB(f *testing.F) *meta.DB {
	ctx := context.Background()
	db, err := meta.Open(ctx, filepath.Join(f.TempDir(), "pith.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		f.Fatal(err)
	}
	if _, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "r"}); err != nil {
		f.Fatal(err)
	}
	return db
}

// clientError fails t unless err is nil or answered with a 4xx.
func clientError(t *testing.T, input any, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if code, m := answer(err); code < 400 || code >= 500 {
		t.Fatalf("%q: answered %d %v", input, code, m)
	}
}

// fuzzList parses query as a repository list request and runs it on db: whatever the
// query, the answer is a page or a 4xx.
func fuzzList(t *testing.T, db *meta.DB, query string) {
	r := (&http.Request{Method: "GET", URL: &url.URL{Path: "/pulp/api/v3/repositories/", RawQuery: query}}).WithContext(t.Context())
	q, err := ParseList(r, db.Dialect(), repoSpec)
	if err == nil {
		_, _, err = meta.ListRepositories(t.Context(), db, q.List)
		err = q.Explain(err)
	}
	clientError(t, query, err)
}

// FuzzQ: any q expression is a page or a 4xx, never a panic, a crash or a 500.
func FuzzQ(f *testing.F) {
	for _, s := range []string{
		`name="r"`, `name="r" OR name__startswith="x"`, `NOT (name__in="a,b" AND pulp_label_select="env=test,!x")`,
		`(name__regex="^r" or name__iregex="R$") and not retain_repo_versions__gt=3`, `name="a\"b"`, `((name=r)`,
		`pulp_created__range="2020-01-01,2030-01-01"`, `name__contains=r OR`, strings.Repeat("(", 40) + `name=r`,
	} {
		f.Add(s)
	}
	db := fuzzDB(f)
	f.Fuzz(func(t *testing.T, expr string) {
		fuzzList(t, db, url.Values{"q": {expr}}.Encode())
	})
}

// FuzzParseList: any query string is a page or a 4xx.
func FuzzParseList(f *testing.F) {
	for _, s := range []string{
		"name=r&limit=10&offset=1&ordering=-name,pulp_created&fields=name", "name__in=a,b,,c&retain_repo_versions__range=1,5",
		"pulp_label_select=a%3Db,!c,d~e", "retain_repo_versions__isnull=true&pulp_created__gt=2020-01-01T00:00:00Z",
		"name__regex=%28&name__iregex=[z-a]", "pulp_id__in=x,y&pulp_href__in=/pulp/api/v3/repositories/file/file/x/&prn__in=prn:a:b",
		"limit=-1", "colour=red", "name=%00", "name=%ff", "q=name%3D%22r%22",
	} {
		f.Add(s)
	}
	db := fuzzDB(f)
	f.Fuzz(func(t *testing.T, query string) {
		fuzzList(t, db, query)
	})
}

// fuzzShape has a field of every kind a form value converts to.
type fuzzShape struct {
	Name   string            `json:"name"`
	Flag   bool              `json:"flag"`
	Count  *int64            `json:"count"`
	Ratio  float64           `json:"ratio"`
	Tags   []string          `json:"tags"`
	Labels map[string]string `json:"labels"`
}

// FuzzReadBody: any multipart body is read into valid JSON members or answered with a
// 4xx.
func FuzzReadBody(f *testing.F) {
	for _, parts := range [][][3]string{
		{{"name", "", "r"}, {"flag", "", "true"}, {"count", "", "3"}, {"file", "a.txt", "hello"}},
		{{"tags", "", "a"}, {"tags", "", "b"}, {"labels", "", `{"a":"b"}`}, {"ratio", "", "0.5"}},
		{{"name", `we"ird\name.txt`, "x"}, {"count", "", "many"}},
	} {
		var b bytes.Buffer
		for _, p := range parts {
			disp := `form-data; name="` + p[0] + `"`
			if p[1] != "" {
				disp += `; filename="` + strings.ReplaceAll(p[1], `"`, `\"`) + `"`
			}
			b.WriteString("--" + boundary + "\r\nContent-Disposition: " + disp + "\r\n\r\n" + p[2] + "\r\n")
		}
		b.WriteString("--" + boundary + "--\r\n")
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/pulp/api/v3/x/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		raw, err := readBody(r, &fuzzShape{}, func(_, _ string, body io.Reader) error {
			_, err := io.Copy(io.Discard, body)
			return err
		})
		clientError(t, body, err)
		for k, v := range raw {
			if !json.Valid(v) {
				t.Fatalf("%q: member %q is not JSON: %s", body, k, v)
			}
		}
	})
}
