package content

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrPathNotAllowed is a path outside the allowed export or import directories.
var ErrPathNotAllowed = errors.New("not an allowed path")

// AllowedPath resolves p as Python's realpath does (symbolic links of the part that
// exists resolved, the rest cleaned) and checks it is one of the allowed directories or
// below one. Unlike Pulp's string prefix test, the comparison is by whole path
// components: /exports-evil is not below /exports. No allowed directories refuse every
// path.
func AllowedPath(allowed []string, p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", ErrPathNotAllowed
	}
	real, err := realPath(p)
	if err != nil {
		return "", ErrPathNotAllowed
	}
	for _, a := range allowed {
		ra, err := realPath(a)
		if err != nil {
			continue
		}
		if real == ra || strings.HasPrefix(real, strings.TrimSuffix(ra, string(filepath.Separator))+string(filepath.Separator)) {
			return real, nil
		}
	}
	return "", ErrPathNotAllowed
}

// realPath resolves the symbolic links of p, as far as they lead to something that
// exists, and appends the rest, cleaned; a dangling link is followed as a path.
func realPath(p string) (string, error) { return resolve(filepath.Clean(p), 0) }

func resolve(p string, depth int) (string, error) {
	if depth > 40 {
		return "", errors.New("too many symbolic links")
	}
	rest := ""
	for cur := p; ; {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if fi, lerr := os.Lstat(cur); lerr == nil {
			if fi.Mode()&fs.ModeSymlink == 0 {
				return "", err
			}
			target, rerr := os.Readlink(cur)
			if rerr != nil {
				return "", rerr
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			return resolve(filepath.Join(target, rest), depth+1)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
