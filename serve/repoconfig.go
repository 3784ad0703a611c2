package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"pith/meta"
)

// repoConfig answers config.repo for an rpm distribution with generate_repo_config:
// a dnf/yum repository definition pointing at the distribution, with repo_gpgcheck and
// the key when the served publication is signed. It reports whether it answered.
func (s *Server) repoConfig(w http.ResponseWriter, r *http.Request, t *distTable, d meta.Distribution, rel string) bool {
	if rel != "config.repo" || d.Type != "rpm.rpm" {
		return false
	}
	var attrs struct {
		GenerateRepoConfig bool `json:"generate_repo_config"`
	}
	json.Unmarshal(d.Attrs, &attrs)
	if !attrs.GenerateRepoConfig {
		return false
	}
	origin := s.opt.ContentOrigin
	if origin == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		origin = scheme + "://" + r.Host
	}
	base := strings.TrimSuffix(origin, "/") + s.opt.Prefix + d.BasePath + "/"
	var b strings.Builder
	fmt.Fprintf(&b, "[%s]\nname=%s\nenabled=1\nbaseurl=%s\ngpgcheck=0\n", strings.ReplaceAll(d.BasePath, "/", "-"), d.Name, base)
	if s.signed(r.Context(), t, d) {
		fmt.Fprintf(&b, "repo_gpgcheck=1\ngpgkey=%srepodata/repomd.xml.key\n", base)
	} else {
		b.WriteString("repo_gpgcheck=0\n")
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Cache-Control", "no-cache")
	if r.Method != http.MethodHead {
		w.Write([]byte(b.String()))
	}
	return true
}

// signed reports whether what d serves has a signed repomd.xml.
func (s *Server) signed(ctx context.Context, t *distTable, d meta.Distribution) bool {
	res, err := s.resolve(ctx, t, d, "repodata/repomd.xml.key")
	return err == nil && res.kind == kindFile
}
