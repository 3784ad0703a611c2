package rest

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// X-Task-Diagnostics names profilers, comma-separated, in one header or several; blanks
// and repeats are dropped, and more or longer names than the bounds are ignored.
func TestDiagnostics(t *testing.T) {
	long := strings.Repeat("m", maxProfilerName+1)
	for _, tc := range []struct {
		headers []string
		want    []string
	}{
		{nil, nil},
		{[]string{""}, nil},
		{[]string{"memory"}, []string{"memory"}},
		{[]string{" memory , pprof,,memory"}, []string{"memory", "pprof"}},
		{[]string{"memory", "heap"}, []string{"memory", "heap"}},
		{[]string{long + ",heap"}, []string{"heap"}},
		{[]string{"a,b,c,d,e,f,g,h,i,j"}, []string{"a", "b", "c", "d", "e", "f", "g", "h"}},
	} {
		r := httptest.NewRequest("POST", "/pulp/api/v3/orphans/cleanup/", nil)
		for _, h := range tc.headers {
			r.Header.Add("X-Task-Diagnostics", h)
		}
		if got := Diagnostics(r); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.headers, got, tc.want)
		}
	}
}
