package rpm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"pith/meta"
)

// DistributionFile answers config.repo for a distribution with generate_repo_config: a
// dnf/yum repository definition pointing at the distribution, with repo_gpgcheck and
// the key when the served publication is signed.
func (p *Plugin) DistributionFile(ctx context.Context, d meta.Distribution, path, base string, has func(string) bool) ([]byte, string, bool) {
	if path != "config.repo" {
		return nil, "", false
	}
	var attrs rpmDistAttrs
	json.Unmarshal(d.Attrs, &attrs)
	if !attrs.GenerateRepoConfig {
		return nil, "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s]\nname=%s\nenabled=1\nbaseurl=%s\ngpgcheck=0\n", strings.ReplaceAll(d.BasePath, "/", "-"), d.Name, base)
	if has("repodata/repomd.xml.key") {
		fmt.Fprintf(&b, "repo_gpgcheck=1\ngpgkey=%srepodata/repomd.xml.key\n", base)
	} else {
		b.WriteString("repo_gpgcheck=0\n")
	}
	return []byte(b.String()), "text/plain", true
}
