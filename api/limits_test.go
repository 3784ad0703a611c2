package api_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"pith/api/rest"
	"pith/content/contenttest"
)

// Filters beyond the bounds the databases and the q parser can take are a 400 naming the
// parameter, never a crash or a 500; at the bounds they work.
func TestFilterBounds(t *testing.T) {
	e := newEnv(t)
	_, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "r"})
	id := strings.TrimSuffix(repo["pulp_href"].(string), "/")
	id = id[strings.LastIndex(id, "/")+1:]
	deep := func(n int, open, close string) string {
		return strings.Repeat(open, n) + `name="r"` + strings.Repeat(close, n)
	}
	terms := func(n int) string {
		return strings.TrimSuffix(strings.Repeat(`name="r" OR `, n), " OR ")
	}
	repeat := func(param, v string, n int) string {
		return strings.TrimSuffix(strings.Repeat(param+"="+v+"&", n), "&")
	}
	// The repository's id and n-1 short ones, to stay within the server's 1 MB header limit.
	ids := func(n int) string {
		return "pulp_id__in=" + id + strings.Repeat(",x", n-1)
	}
	q := func(s string) string { return "q=" + url.QueryEscape(s) }
	for _, tc := range []struct {
		name  string
		query string
		bad   string // the parameter a 400 names; "" for a 200
	}{
		// Each level of parentheses was a level of recursion: 900,000 overflowed the stack.
		{"q nested 100,000 deep", q(deep(100_000, "(", ")")), "q"},
		{"q with 100,000 NOTs", q(deep(100_000, "NOT ", "")), "q"},
		{"q nested at the bound", q(deep(rest.MaxQDepth/2, "NOT (", ")")), ""},
		{"q with 1,001 terms", q(terms(1001)), "q"},
		{"q at the term bound", q(terms(rest.MaxFilterTerms)), ""},
		{"1,001 filter terms", repeat("name", "r", 1001), "name"},
		{"filter terms at the bound", repeat("name", "r", rest.MaxFilterTerms), ""},
		{"32,767 __in values", ids(32_767), "pulp_id__in"},
		{"__in values at the bound", ids(rest.MaxFilterValues), ""},
		{"invalid regex", "name__regex=" + url.QueryEscape("("), "name__regex"},
		{"invalid iregex in q", q(`name__iregex="a{2,1}"`), "name__iregex"},
		{"200 kB regex", "name__regex=" + strings.Repeat("a", 200_000), "name__regex"},
		{"ordering by 3,000 fields", "ordering=" + strings.TrimSuffix(strings.Repeat("name,", 3000), ","), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, m, _ := e.Do("GET", "/pulp/api/v3/repositories/?"+tc.query, "", nil)
			b, _ := json.Marshal(m)
			if tc.bad == "" {
				if code != 200 || m["count"] != float64(1) {
					t.Fatalf("status %d, want 200 and one repository: %.300s", code, b)
				}
				return
			}
			if code != 400 {
				t.Fatalf("status %d, want 400: %.300s", code, b)
			}
			if _, ok := m[tc.bad]; !ok {
				t.Errorf("error %.300s does not name %s", b, tc.bad)
			}
			if s := strings.ToLower(string(b)); strings.Contains(s, "sql") || strings.Contains(s, "select") {
				t.Errorf("error carries SQL: %.300s", b)
			}
		})
	}
}

// A publication's content__in takes as many units as any __in filter (it was a chain
// of ORs, which SQLite refuses past 1,000).
func TestPublicationContentIn(t *testing.T) {
	e := newEnv(t)
	ct, body := contenttest.Multipart(map[string]string{"relative_path": "a.txt"}, "file", "a.txt", []byte("a"))
	code, unit, _ := e.Do("POST", "/pulp/api/v3/content/file/files/upload/", ct, body)
	if code != 201 {
		t.Fatalf("upload: %d %v", code, unit)
	}
	_, repo := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "r"})
	code, m := e.JSON("POST", repo["pulp_href"].(string)+"modify/", map[string]any{"add_content_units": []any{unit["pulp_href"]}})
	e.Done("modify", code, m)
	code, m = e.JSON("POST", "/pulp/api/v3/publications/file/file/", map[string]any{"repository": repo["pulp_href"]})
	e.Done("publish", code, m)
	others := strings.Repeat(",/pulp/api/v3/content/file/files/00000000-0000-0000-0000-000000000000/", 1500)
	for _, tc := range []struct {
		units string
		want  float64
	}{{unit["pulp_href"].(string) + others, 1}, {others[1:], 0}} {
		code, page, _ := e.Do("GET", "/pulp/api/v3/publications/?content__in="+tc.units, "", nil)
		if code != 200 || page["count"] != tc.want {
			t.Errorf("content__in of %d units: %d %v, want %v publications", strings.Count(tc.units, ",")+1, code, page, tc.want)
		}
	}
}
