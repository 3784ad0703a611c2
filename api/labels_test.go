package api_test

import (
	"fmt"
	"testing"
)

// Label keys and values are what newer Pulp accepts (keys of word characters, spaces,
// hyphens and dots; values without parentheses), on create and through set_label; what
// no release accepts is a 400 naming the field, and nothing is stored.
func TestLabelRules(t *testing.T) {
	e := newEnv(t)
	for i, tc := range []struct {
		key, value string
		ok         bool
	}{
		{"pith-e2e.x", "a,b", true},
		{"env 1", "test", true},
		{"a/b", "x", false},
		{"a\"b", "x", false},
		{"k", "x(y)", false},
	} {
		name := fmt.Sprint("labels-", i)
		code, m := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": name, "pulp_labels": map[string]string{tc.key: tc.value}})
		if tc.ok != (code == 201) {
			t.Errorf("create with %q=%q: %d %v", tc.key, tc.value, code, m)
		}
		if !tc.ok {
			if _, named := m["pulp_labels"]; code != 400 || !named {
				t.Errorf("create with %q=%q: %d %v, want a 400 naming pulp_labels", tc.key, tc.value, code, m)
			}
			if _, page := e.JSON("GET", "/pulp/api/v3/repositories/file/file/?name="+name, nil); page["count"] != float64(0) {
				t.Errorf("create with %q=%q stored a repository", tc.key, tc.value)
			}
			continue
		}
		href, _ := m["pulp_href"].(string)
		if code, m := e.JSON("POST", href+"set_label/", map[string]any{"key": tc.key + "2", "value": tc.value}); code != 201 {
			t.Errorf("set_label %q=%q: %d %v", tc.key+"2", tc.value, code, m)
		}
	}
	_, m := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "labels-set"})
	href, _ := m["pulp_href"].(string)
	for _, tc := range []struct{ key, value, field string }{{"a/b", "x", "key"}, {"k", "(x", "value"}} {
		if code, m := e.JSON("POST", href+"set_label/", map[string]any{"key": tc.key, "value": tc.value}); code != 400 || m[tc.field] == nil {
			t.Errorf("set_label %q=%q: %d %v, want a 400 naming %s", tc.key, tc.value, code, m, tc.field)
		}
	}
}
