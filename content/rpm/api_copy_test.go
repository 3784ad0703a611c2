package rpm_test

import (
	"fmt"
	"testing"
)

// A copy takes what the source version and the content list have in common, as Pulp's:
// a unit the source version lacks is not copied and fails nothing; an empty list copies
// nothing.
func TestRpmCopyIntersection(t *testing.T) {
	e := apiEnv(t)
	walrus := uploadPackage(e, "walrus-5.21-1.noarch.rpm")
	lion := uploadPackage(e, "lion-0.3-0.8.noarch.rpm")
	src := map[string]any{}
	for _, name := range []string{"copy-src", "copy-dst"} {
		code, m := e.JSON("POST", "/pulp/api/v3/repositories/rpm/rpm/", map[string]any{"name": name})
		if code != 201 {
			t.Fatalf("create %s: %d %v", name, code, m)
		}
		src[name] = m["pulp_href"]
	}
	code, m := e.JSON("POST", src["copy-src"].(string)+"modify/", map[string]any{"add_content_units": []string{walrus}})
	e.Done("modify", code, m)
	srcVersion := src["copy-src"].(string) + "versions/1/"
	for _, tc := range []struct {
		content []string
		want    string
	}{
		{[]string{walrus, lion}, fmt.Sprint(map[string]float64{"rpm.package": 1})},
		{[]string{lion}, fmt.Sprint(map[string]float64{"rpm.package": 1})}, // nothing new: no version
		{[]string{}, fmt.Sprint(map[string]float64{"rpm.package": 1})},
	} {
		code, m := e.JSON("POST", "/pulp/api/v3/rpm/copy/", map[string]any{"dependency_solving": false,
			"config": []map[string]any{{"source_repo_version": srcVersion, "dest_repo": src["copy-dst"], "content": tc.content}}})
		e.Done(fmt.Sprint("copy ", tc.content), code, m)
		if got := fmt.Sprint(versionPresent(e, src["copy-dst"].(string))); got != tc.want {
			t.Errorf("copy %v: destination holds %s, want %s", tc.content, got, tc.want)
		}
	}
	if _, page := e.JSON("GET", src["copy-dst"].(string)+"versions/", nil); page["count"] != float64(2) {
		t.Errorf("destination versions: %v, want 0 and 1 (copies that add nothing make none)", page["count"])
	}
}
