package rpm

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"pith/meta"
)

// invalidRepoID are the characters a dnf repository id may not hold.
var invalidRepoID = regexp.MustCompile(`[^\w\-_.:]`)

// Generates reports whether path is config.repo, the one file an rpm distribution makes.
func (p *Plugin) Generates(path string) bool { return path == "config.repo" }

// DistributionFile answers config.repo for a distribution with generate_repo_config, as
// Pulp does: a dnf/yum repository definition named after the distribution, pointing at
// it, with the settings of the served publication's repo_config (name and baseurl
// aside) and defaults for enabled, gpgcheck and repo_gpgcheck. When what is served has
// a signed repomd.xml, repo_gpgcheck defaults to 1 and gpgkey names the key (Pulp
// leaves repo_gpgcheck at 0). There is no config.repo without a publication.
func (p *Plugin) DistributionFile(ctx context.Context, d meta.Distribution, pub *meta.Publication, path, base string, has func(string) bool) ([]byte, string, bool) {
	if path != "config.repo" || pub == nil {
		return nil, "", false
	}
	var attrs rpmDistAttrs
	json.Unmarshal(d.Attrs, &attrs)
	if !attrs.GenerateRepoConfig {
		return nil, "", false
	}
	var pa PubAttrs
	json.Unmarshal(pub.Attrs, &pa)
	var cfg map[string]any
	json.Unmarshal(pa.RepoConfig, &cfg)
	delete(cfg, "name")
	delete(cfg, "baseurl")
	var b strings.Builder
	fmt.Fprintf(&b, "[%s]\nname=%s\nbaseurl=%s\n", invalidRepoID.ReplaceAllString(d.Name, ""), d.Name, base)
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%v\n", k, cfg[k])
	}
	signed := has("repodata/repomd.xml.key")
	for _, def := range []struct{ key, value string }{{"repo_gpgcheck", map[bool]string{true: "1", false: "0"}[signed]}, {"gpgcheck", "0"}, {"enabled", "1"}} {
		if _, set := cfg[def.key]; !set {
			fmt.Fprintf(&b, "%s=%s\n", def.key, def.value)
		}
	}
	if signed {
		fmt.Fprintf(&b, "gpgkey=%srepodata/repomd.xml.key\n", base)
	}
	return []byte(b.String()), "text/plain", true
}
