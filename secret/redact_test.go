package secret

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"GET https://alice:hunter2@example.com/repo/: 404", "GET https://alice:xxxxx@example.com/repo/: 404"},
		{"proxy http://token123@proxy:3128 refused", "proxy http://xxxxx@proxy:3128 refused"},
		{"http://u:p@ss@host/x and https://v:w@h2/", "http://u:xxxxx@host/x and https://v:xxxxx@h2/"},
		{`"http://u:p%40ss@host"`, `"http://u:xxxxx@host"`},
		{"mail alice@example.com about http://example.com/a@b", "mail alice@example.com about http://example.com/a@b"},
		{"no url here", "no url here"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(Handler(slog.NewTextHandler(&buf, nil)))
	u := "https://alice:hunter2@example.com/"
	log.With("remote", u).Info("sync of "+u+" failed", "err", fmt.Errorf("GET %s: 401", u),
		slog.Group("g", "url", u), "n", 3)
	if out := buf.String(); strings.Contains(out, "hunter2") || !strings.Contains(out, "alice:xxxxx@example.com") || !strings.Contains(out, "n=3") {
		t.Errorf("log line: %s", out)
	}
}
