package tempfile_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"pith/blob/driver/tempfile"
)

// kept holds the live writer's file.
var kept *tempfile.File

// TestMain lets the test binary play a writer in a process of its own: one that crashes
// (exits without finishing its file) or one that lives until killed.
func TestMain(m *testing.M) {
	if role := os.Getenv("TEMPFILE_WRITER"); role != "" {
		f, err := tempfile.Create(os.Getenv("TEMPFILE_DIR"), "blob-")
		if err != nil {
			panic(err)
		}
		f.Write([]byte("half a blob"))
		os.Stdout.WriteString(filepath.Base(f.Name()) + "\n")
		if role == "live" {
			kept = f                   // an unreachable file would be closed by its finalizer, dropping the lock
			time.Sleep(24 * time.Hour) // until killed (select{} would die as a deadlock)
		}
		os.Exit(0) // a crash: the file is neither renamed nor removed
	}
	os.Exit(m.Run())
}

// writer runs a writer process and returns its file's name; a live one runs until the
// test ends.
func writer(t *testing.T, dir, role string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TEMPFILE_WRITER="+role, "TEMPFILE_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	name, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s writer: %v", role, err)
	}
	if role == "crashed" {
		cmd.Wait()
	}
	return strings.TrimSpace(name)
}

func TestSweep(t *testing.T) {
	dir := t.TempDir()
	crashed := writer(t, dir, "crashed")
	live := writer(t, dir, "live")
	mine, err := tempfile.Create(dir, "blob-")
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	mine.Write([]byte("written by this process"))
	old := time.Now().Add(-2 * tempfile.StaleAfter)
	files := map[string]time.Time{
		"blob-123456":        {},  // an older version's or an unlocked writer's, recent
		"blob-654321":        old, // the same, stale
		"blob-0badc0de-1234": {},  // another host's, recent
		"blob-0badc0de-4321": old, // another host's, stale
		"other-123":          old, // not a temporary of this prefix
	}
	for name, mtime := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if !mtime.IsZero() {
			os.Chtimes(p, mtime, mtime)
		}
	}
	// Even stale, a file a live writer holds stays.
	os.Chtimes(filepath.Join(dir, live), old, old)

	n, err := tempfile.Sweep(dir, "blob-")
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		left = append(left, e.Name())
	}
	want := []string{"blob-0badc0de-1234", "blob-123456", live, filepath.Base(mine.Name()), "other-123"}
	sort.Strings(want)
	if diff := cmp.Diff(want, left); diff != "" || n != 3 {
		t.Errorf("after the sweep (removed %d, want the crashed writer's and the two stale ones) (-want +got):\n%s", n, diff)
	}
	if _, err := os.Stat(filepath.Join(dir, crashed)); !os.IsNotExist(err) {
		t.Errorf("the crashed writer's file: %v", err)
	}
	if n, err := tempfile.Sweep(filepath.Join(dir, "missing"), "blob-"); n != 0 || err != nil {
		t.Errorf("sweep of a missing directory: %d, %v", n, err)
	}
}
