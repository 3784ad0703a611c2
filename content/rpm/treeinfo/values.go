package treeinfo

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"pith/content"
)

func (b *builder) addPlatforms(list string) {
	if b.platforms == nil {
		b.platforms = map[string]bool{}
	}
	for _, p := range splitList(list) {
		if validID(p) {
			b.platforms[p] = true
		}
	}
}

// treePath checks p, a path naming a file inside the tree, found at e in sec:
// relative, no "..".
func (b *builder) treePath(p string, e entry, sec string) error {
	switch {
	case p == "":
		return b.errf(e.line, sec, e.key, ErrUnsafePath, "empty path")
	case strings.HasPrefix(p, "/"):
		return b.errf(e.line, sec, e.key, ErrUnsafePath, "path %q is absolute", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		return b.errf(e.line, sec, e.key, ErrUnsafePath, "path %q escapes the tree", p)
	}
	if _, err := content.CleanRelativePath(p); err != nil {
		return b.errf(e.line, sec, e.key, ErrUnsafePath, "%v", err)
	}
	return nil
}

// remotePath checks a repository path: relative to the tree, perhaps climbing out of
// it, but never absolute or a URL. It returns the path without trailing slashes.
func (b *builder) remotePath(p string, e entry, sec string) (string, error) {
	bad := func(why string) (string, error) {
		return "", b.errf(e.line, sec, e.key, ErrUnsafePath, "path %q %s", p, why)
	}
	switch {
	case p == "":
		return bad("is empty")
	case strings.HasPrefix(p, "/"):
		return bad("is absolute")
	case strings.Contains(p, "\\"):
		return bad("contains a backslash")
	case strings.IndexFunc(p, unicode.IsControl) >= 0:
		return bad("contains a control character")
	}
	if i := strings.IndexAny(p, ":/"); i >= 0 && p[i] == ':' {
		return bad("is a URL, not a relative path")
	}
	if len(p) > content.MaxRelativePath {
		return bad("is too long")
	}
	if t := strings.TrimRight(p, "/"); t != "" {
		p = t
	}
	return p, nil
}

func isRepomd(p string) bool { return strings.Contains(p, "repodata/repomd.xml") }

var hexLen = map[string]int{"md5": 32, "sha1": 40, "sha224": 56, "sha256": 64, "sha384": 96, "sha512": 128}

// checksum reads a [checksums] value, "type:hex" or (old files) a bare hex digest
// whose length gives its type, and returns it as "type:hex".
func (b *builder) checksum(e entry) (string, error) {
	typ, sum, ok := strings.Cut(e.value, ":")
	if !ok {
		sum, typ = e.value, ""
		for t, n := range hexLen {
			if n == len(sum) && (t == "md5" || t == "sha1" || t == "sha256") {
				typ = t
			}
		}
		if typ == "" {
			return "", b.errf(e.line, "checksums", e.key, ErrInvalid, "%q is not TYPE:HEX", e.value)
		}
	}
	typ = strings.ToLower(typ)
	n, known := hexLen[typ]
	if !known {
		return "", b.errf(e.line, "checksums", e.key, ErrInvalid, "unknown checksum type %q", typ)
	}
	if len(sum) != n || strings.Trim(strings.ToLower(sum), "0123456789abcdef") != "" {
		return "", b.errf(e.line, "checksums", e.key, ErrInvalid, "%q is not a %s digest (%d hex digits)", sum, typ, n)
	}
	return typ + ":" + strings.ToLower(sum), nil
}

func (b *builder) timestamp(e entry, sec string) (float64, error) {
	v, err := strconv.ParseFloat(e.value, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, b.errf(e.line, sec, e.key, ErrInvalid, "%q is not a timestamp", e.value)
	}
	return v, nil
}

func (b *builder) integer(e entry, sec string) (int64, error) {
	v, err := strconv.ParseInt(e.value, 10, 64)
	if err != nil {
		return 0, b.errf(e.line, sec, e.key, ErrInvalid, "%q is not an integer", e.value)
	}
	return v, nil
}

// idPattern is Pulp's pattern for variant and addon IDs; it keeps them usable as a
// directory name.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func validID(s string) bool { return s != "." && s != ".." && idPattern.MatchString(s) }

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseBool reads a boolean as configparser's getboolean does.
func parseBool(s string) (v, ok bool) {
	switch strings.ToLower(s) {
	case "1", "yes", "true", "on":
		return true, true
	case "0", "no", "false", "off":
		return false, true
	}
	return false, false
}

// optionalPaths are the variant's paths Pulp keeps as the file states them, by key.
func (v *Variant) optionalPaths() []struct {
	key string
	dst **string
} {
	return []struct {
		key string
		dst **string
	}{{"debug_packages", &v.DebugPackages}, {"debug_repository", &v.DebugRepository},
		{"identity", &v.Identity}, {"source_packages", &v.SourcePackages},
		{"source_repository", &v.SourceRepository}}
}
