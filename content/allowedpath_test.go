package content

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestAllowedPath(t *testing.T) {
	root := t.TempDir()
	exports := filepath.Join(root, "exports")
	if err := os.MkdirAll(filepath.Join(exports, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(exports, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exports, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	allowed := []string{exports}
	for _, c := range []struct {
		path string
		want string // "" = refused
	}{
		{exports, exports},
		{exports + "/", exports},
		{filepath.Join(exports, "a"), filepath.Join(exports, "a")},
		{filepath.Join(exports, "new", "deeper"), filepath.Join(exports, "new", "deeper")},
		{filepath.Join(root, "link", "a"), filepath.Join(exports, "a")},
		{filepath.Join(exports, "..", "exports", "a"), filepath.Join(exports, "a")},
		{filepath.Join(exports, "..", "x"), ""},
		{exports + "-evil", ""},
		{filepath.Join(exports, "out", "x"), ""}, // a link inside that leads outside
		{"relative/path", ""},
		{"/", ""},
	} {
		got, err := AllowedPath(allowed, c.path)
		if c.want == "" {
			if !errors.Is(err, ErrPathNotAllowed) {
				t.Errorf("AllowedPath(%q) = %q, %v; want refused", c.path, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("AllowedPath(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
	if _, err := AllowedPath(nil, exports); !errors.Is(err, ErrPathNotAllowed) {
		t.Errorf("no allowed paths: %v, want refused", err)
	}
}
