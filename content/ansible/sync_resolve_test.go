package ansible_test

import (
	"strings"
	"testing"
)

// A requirements file takes the versions its ranges match (string entries: every
// version); with sync_dependencies, their dependencies too, transitively, unless a
// version already taken matches; sync_highest_versions keeps the highest (releases
// first); signed_only leaves out what has no signature.
func TestSyncRequirements(t *testing.T) {
	e := newSyncEnv(t)
	g := e.g
	g.add("acme", "app", "1.0.0", map[string]string{"acme.lib": ">=1.0.0,<2.0.0"})
	g.add("acme", "app", "2.0.0", map[string]string{"acme.lib": ">=2.0.0"}).signed = true
	g.add("acme", "app", "3.0.0-rc.1", nil)
	g.add("acme", "lib", "1.0.0", map[string]string{"acme.base": "*"})
	g.add("acme", "lib", "1.5.0", map[string]string{"acme.base": "*"})
	g.add("acme", "lib", "2.0.0", map[string]string{"acme.base": "==1.0.0"}).signed = true
	g.add("acme", "base", "1.0.0", nil).signed = true
	g.add("acme", "base", "1.1.0", nil)
	g.add("acme", "other", "1.0.0", nil)
	g.add("acme", "tool", "0.1.0", nil)
	g.add("acme", "tool", "0.2.0", nil)

	for _, tc := range []struct {
		name   string
		fields map[string]any
		want   []string
	}{
		{"ranges", map[string]any{"sync_dependencies": false, "requirements_file": `
collections:
  - name: acme.app
    version: ">=2.0.0"
  - acme.tool
`}, []string{"acme.app 2.0.0", "acme.app 3.0.0-rc.1", "acme.tool 0.1.0", "acme.tool 0.2.0"}},
		// acme.app 1.0.0 needs acme.lib <2 (1.0.0 and 1.5.0), which need acme.base: every
		// version of it. acme.app 2.0.0's acme.lib >=2.0.0 is not met by them: 2.0.0 is
		// taken, and its acme.base ==1.0.0 is met by the base already taken.
		{"dependencies", map[string]any{"requirements_file": "collections:\n  - name: acme.app\n    version: '<3.0.0'\n"},
			[]string{"acme.app 1.0.0", "acme.app 2.0.0", "acme.base 1.0.0", "acme.base 1.1.0", "acme.lib 1.0.0", "acme.lib 1.5.0", "acme.lib 2.0.0"}},
		// The highest version a requirement or a dependency matches, a release before a
		// pre-release.
		{"highest", map[string]any{"sync_highest_versions": 1, "requirements_file": "collections:\n  - acme.app\n  - acme.tool\n  - acme.base\n"},
			[]string{"acme.app 2.0.0", "acme.lib 2.0.0", "acme.base 1.0.0", "acme.base 1.1.0", "acme.tool 0.2.0"}},
		{"signed only", map[string]any{"signed_only": true, "requirements_file": "collections:\n  - acme.app\n"},
			[]string{"acme.app 2.0.0", "acme.lib 2.0.0", "acme.base 1.0.0"}},
		{"signed only, whole upstream", map[string]any{"signed_only": true},
			[]string{"acme.app 2.0.0", "acme.lib 2.0.0", "acme.base 1.0.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "-")
			remote := e.remote(name, tc.fields)
			repo := e.repo(name, "")
			e.syncOK(repo, map[string]any{"remote": remote})
			want(t, tc.name, e.held(repo), tc.want...)
		})
	}
}

// A requirement may name another Galaxy (source): its versions come from there.
func TestSyncRequirementSource(t *testing.T) {
	e := newSyncEnv(t)
	e.g.add("acme", "here", "1.0.0", nil)
	other := newGalaxy(t)
	other.add("acme", "there", "1.0.0", map[string]string{"acme.here": "*"})
	remote := e.remote("up", map[string]any{"requirements_file": "collections:\n  - name: acme.there\n    source: " + other.URL() + "\n"})
	repo := e.repo("r", "")
	e.syncOK(repo, map[string]any{"remote": remote})
	want(t, "from two Galaxies", e.held(repo), "acme.there 1.0.0", "acme.here 1.0.0")
}
