package content

import (
	"strings"
	"testing"
)

func TestCleanRelativePath(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a", "a/b.iso", "Packages/a/x-1.0.rpm", "dir with space/ü.txt", "a..b", ".hidden"} {
		if got, err := CleanRelativePath(ok); err != nil || got != ok {
			t.Errorf("CleanRelativePath(%q) = %q, %v", ok, got, err)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "empty"}, {"/etc/passwd", "absolute"}, {"../x", `".."`}, {"a/../b", `".."`}, {"a/./b", `"."`},
		{"a//b", "empty segment"}, {"a/", "empty segment"}, {"a\\b", "backslash"}, {"a\x00b", "NUL"},
		{"a\nb", "control"}, {"\xff", "UTF-8"}, {strings.Repeat("a", 4097), "longer"},
	} {
		_, err := CleanRelativePath(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CleanRelativePath(%q) error = %v, want one mentioning %q", tc.in, err, tc.want)
		}
	}
}
