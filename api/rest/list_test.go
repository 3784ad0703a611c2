package rest

import (
	"context"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"pith/internal/testpg"
	"pith/meta"
)

func TestMain(m *testing.M) { testpg.Main(m) }

// repoSpec is the repositories' list: a name with every string lookup, labels and the
// identity filters.
var repoSpec = ListSpec{
	Filters: append([]Filter{
		{Name: "name", Col: "r.name", Lookups: NameLookups},
		{Name: "retain_repo_versions", Col: "r.retain_repo_versions", Type: Int, Lookups: []string{"exact", "gt", "in", "isnull", "range"}},
		TimeFilter("pulp_created", "r.created"),
		LabelSelect("r.labels"),
	}, IdentityFilters("r.pulp_id")...),
	Ordering: Ordering("r", map[string]string{"name": "name", "pulp_created": "created"}),
}

// listRepos answers a repository list request over db as the API does: the filters
// parsed, the query run, its error explained.
func listRepos(db *meta.DB, query string) (int64, error) {
	r := httptest.NewRequest("GET", "/pulp/api/v3/repositories/?"+query, nil)
	q, err := ParseList(r, db.Dialect(), repoSpec)
	if err != nil {
		return 0, err
	}
	_, n, err := meta.ListRepositories(context.Background(), db, q.List)
	return n, q.Explain(err)
}

// The bounds on filters hold on both databases: within them every query runs, beyond them
// the request is a 400 naming the parameter before any query; and a pattern the database
// refuses is a 400 naming it too.
func TestFilterBoundsOnBothDatabases(t *testing.T) {
	ctx := context.Background()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dsn := filepath.Join(t.TempDir(), "pith.db")
			if engine == "postgres" {
				dsn = testpg.URL(t)
			}
			db, err := meta.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			repo, err := meta.CreateRepository(ctx, db, meta.Repository{Type: "file.file", Name: "r"})
			if err != nil {
				t.Fatal(err)
			}
			q := func(s string) string { return "q=" + url.QueryEscape(s) }
			terms := func(n int) string { return strings.TrimSuffix(strings.Repeat(`name="r" OR `, n), " OR ") }
			ids := func(n int) string { return "pulp_id__in=" + repo.PulpID + strings.Repeat(",x", n-1) }
			for _, tc := range []struct {
				name, query string
				bad         string // the parameter named by the 400; "" for one repository found
				pgOK        bool   // PostgreSQL takes it (its regular expressions are not RE2's)
			}{
				// Each NOT and each parenthesis is a level.
				{"deepest and longest q", q(strings.Repeat("NOT (", MaxQDepth/2) + terms(MaxFilterTerms) + strings.Repeat(")", MaxQDepth/2)), "", false},
				{"q too deep", q(strings.Repeat("NOT (", MaxQDepth/2) + `NOT name="r"` + strings.Repeat(")", MaxQDepth/2)), "q", false},
				{"q with too many terms", q(terms(MaxFilterTerms + 1)), "q", false},
				{"terms beside q", q(terms(MaxFilterTerms-1)) + "&name=r&name__startswith=r", "q", false},
				{"values at the bound", ids(MaxFilterValues), "", false},
				{"70,000 values", ids(70_000), "pulp_id__in", false},
				{"labels at the bound", "pulp_label_select=" + strings.TrimSuffix(strings.Repeat("!a,", MaxFilterTerms), ","), "", false},
				{"too many labels", "pulp_label_select=" + strings.TrimSuffix(strings.Repeat("!a,", MaxFilterTerms+1), ","), "pulp_label_select", false},
				{"label key with a quote", "pulp_label_select=" + url.QueryEscape(`a"b=c`), "pulp_label_select", false},
				{"label key absent with a bracket", "pulp_label_select=" + url.QueryEscape("!a[0]"), "pulp_label_select", false},
				{"label keys with hyphens and dots", "pulp_label_select=" + url.QueryEscape("!pith-e2e.x,!a b"), "", false},
				{"invalid regex", "name__regex=" + url.QueryEscape("("), "name__regex", false},
				{"invalid iregex", "name__iregex=" + url.QueryEscape("[z-a]"), "name__iregex", false},
				{"regex too long", "name__regex=" + strings.Repeat("r", meta.MaxPattern+1), "name__regex", false},
				{"regex at the bound", "name__regex=" + strings.Repeat("r?", meta.MaxPattern/2), "", false},
				{"lookahead, PostgreSQL's only", "name__regex=" + url.QueryEscape("^(?=r)"), "name__regex", true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					n, err := listRepos(db, tc.query)
					if tc.bad == "" || tc.pgOK && engine == "postgres" {
						if err != nil || n != 1 {
							t.Fatalf("%d found, error %v; want one repository", n, err)
						}
						return
					}
					if err == nil {
						t.Fatalf("%d found, want a 400 naming %s", n, tc.bad)
					}
					code, m := answer(err)
					if _, ok := m[tc.bad]; code != 400 || !ok {
						t.Fatalf("%d %v, want a 400 naming %s", code, m, tc.bad)
					}
				})
			}
		})
	}
}
