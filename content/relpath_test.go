package content

import (
	"strings"
	"testing"
)

func TestCleanRelativePath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		err      string // "" for a valid path
	}{
		{"plain", "a", ""},
		{"nested", "Packages/a/x-1.0.rpm", ""},
		{"space and unicode", "dir with space/ü.txt", ""},
		{"dots inside a name", "a..b/c.", ""},
		{"hidden file", ".hidden/.x", ""},
		{"comma and quote", `a,b/"c".iso`, ""},
		{"longest", strings.Repeat("a", 4096), ""},

		{"empty", "", `relative path "": is empty`},
		{"absolute", "/etc/passwd", `relative path "/etc/passwd": is absolute`},
		{"leading dotdot", "../x", `relative path "../x": contains a ".." segment`},
		{"inner dotdot", "a/../b", `relative path "a/../b": contains a ".." segment`},
		{"trailing dotdot", "a/..", `contains a ".." segment`},
		{"only dotdot", "..", `contains a ".." segment`},
		{"dot segment", "a/./b", `relative path "a/./b": contains a "." segment`},
		{"leading dot", "./a", `contains a "." segment`},
		{"double slash", "a//b", `relative path "a//b": contains an empty segment`},
		{"trailing slash", "a/", "contains an empty segment"},
		{"backslash", `a\b`, `relative path "a\\b": contains a backslash at byte 1`},
		{"windows traversal", `..\x`, "contains a backslash"},
		{"nul", "a\x00b", "contains a NUL character at byte 1"},
		{"newline", "a\nb", "contains control character U+000A at byte 1"},
		{"delete", "a\x7f", "contains control character U+007F"},
		{"c1 control", "a\u0085", "contains control character U+0085"},
		{"bad utf-8", "a\xffb", "is not valid UTF-8"},
		{"too long", strings.Repeat("a", 4097), `relative path "` + strings.Repeat("a", 64) + `...": is 4097 bytes long, more than 4096`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := CleanRelativePath(tc.in)
			if tc.err == "" {
				if err != nil || got != tc.in {
					t.Errorf("CleanRelativePath(%q) = %q, %v; want it unchanged", tc.in, got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("CleanRelativePath(%q) error = %v, want one containing %q", tc.in, err, tc.err)
			}
			if got != "" {
				t.Errorf("CleanRelativePath(%q) returned %q with an error", tc.in, got)
			}
		})
	}
}
