package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"pith/internal/testpg"
	"pith/internal/tests3"
)

// waitTask polls a task with the CLI until it reaches a final state.
func waitTask(t *testing.T, c *cli, href string, limit time.Duration) entity {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var task entity
		c.json(&task, "task", "show", "--href", href)
		switch task.str("state") {
		case "completed", "failed", "canceled":
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %s after %s", href, task.str("state"), limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A worker killed with SIGKILL in the middle of a sync: the task is failed once its
// lease runs out, its lock on the repository is freed, the task queued behind it runs,
// and no partial repository version is left.
func TestWorkerKilledDuringSync(t *testing.T) {
	fx := fixtures(t)
	s := startSplit(t, testpg.URL(t), "--task-lease-seconds", "3")
	c := newCLI(t, s)
	c.run("file", "remote", "create", "--name", "slow", "--url", fx+"/slow/PULP_MANIFEST")
	c.run("file", "repository", "create", "--name", "r", "--remote", "slow")
	c.run("-b", "file", "repository", "sync", "--name", "r")

	var running []entity
	deadline := time.Now().Add(15 * time.Second)
	for len(running) == 0 {
		c.json(&running, "task", "list", "--name-contains", "synchronize", "--state", "running")
		if time.Now().After(deadline) {
			t.Fatal("the sync never started")
		}
		time.Sleep(100 * time.Millisecond)
	}
	sync := running[0]
	// Queue a change of the same repository behind the sync.
	small := filepath.Join(t.TempDir(), "small.txt")
	os.WriteFile(small, []byte("queued behind the sync\n"), 0o644)
	c.run("-b", "file", "content", "upload", "--file", small, "--relative-path", "small.txt", "--repository", "r")

	// Kill the worker process that runs the sync.
	var worker entity
	c.json(&worker, "show", "--href", sync.str("worker"))
	pid, err := strconv.Atoi(strings.SplitN(worker.str("name"), "@", 2)[0])
	if err != nil {
		t.Fatalf("worker name %q", worker.str("name"))
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill worker %d: %v", pid, err)
	}

	failed := waitTask(t, c, sync.str("pulp_href"), 60*time.Second)
	if failed.str("state") != "failed" || !strings.Contains(toJSON(failed["error"]), "worker has gone missing") {
		t.Fatalf("killed sync: state %s, error %v", failed.str("state"), failed["error"])
	}
	var tasks []entity
	c.json(&tasks, "task", "list", "--name", "pulpcore.app.tasks.base.general_create")
	if len(tasks) != 1 {
		t.Fatalf("upload tasks: %v", tasks)
	}
	if done := waitTask(t, c, tasks[0].str("pulp_href"), 60*time.Second); done.str("state") != "completed" {
		t.Fatalf("the task queued behind the killed sync: %v", done)
	}
	var versions []entity
	c.json(&versions, "file", "repository", "version", "list", "--repository", "r")
	if len(versions) != 2 || presentCount(versions[0]) != 1 {
		t.Fatalf("versions after the killed sync: %d, latest holds %d files; want versions 0 and 1 with the upload only", len(versions), presentCount(versions[0]))
	}
}

// privateCluster starts a PostgreSQL cluster of the test's own (so it can be restarted
// without disturbing other tests) and returns its URL and directory.
func privateCluster(t *testing.T) (string, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "pith-e2e-pg-")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", "../scripts/pg", "start", dir).Output()
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() { exec.Command("bash", "../scripts/pg", "stop", dir).Run() })
	return strings.TrimSpace(string(out)), dir
}

// PostgreSQL restarts under a running installation: every process reconnects and
// carries on (API, content app, workers and their notifications).
func TestPostgresRestart(t *testing.T) {
	url, dir := privateCluster(t)
	s := startSplit(t, url)
	c := newCLI(t, s)
	c.run("file", "repository", "create", "--name", "before")
	c.run("file", "distribution", "create", "--name", "d", "--base-path", "d", "--repository", "before")
	if out, err := exec.Command("bash", "../scripts/pg", "restart", dir).CombinedOutput(); err != nil {
		t.Fatalf("restart PostgreSQL: %v\n%s", err, out)
	}
	// The first requests after a restart may meet dead pooled connections; the CLI
	// action must succeed within a few tries.
	small := filepath.Join(t.TempDir(), "after.txt")
	os.WriteFile(small, []byte("after the restart\n"), 0o644)
	var err error
	for i := 0; i < 10; i++ {
		if _, err = c.try("file", "content", "upload", "--file", small, "--relative-path", "after.txt", "--repository", "before"); err == nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("upload after the restart: %v", err)
	}
	code, body := get(t, s.content+"/pulp/content/d/after.txt")
	if code != 200 || string(body) != "after the restart\n" {
		t.Fatalf("content after the restart: %d %q", code, body)
	}
}

// Two syncs of the same repository dispatched at once run one after the other.
func TestConcurrentSyncsSerialize(t *testing.T) {
	fx := fixtures(t)
	s := startSplit(t, testpg.URL(t))
	c := newCLI(t, s)
	c.run("file", "remote", "create", "--name", "puppet", "--url", fx+"/file-katello-puppet/PULP_MANIFEST")
	c.run("file", "remote", "create", "--name", "file1", "--url", fx+"/yum-katello/file1/PULP_MANIFEST")
	c.run("file", "repository", "create", "--name", "r")
	c.run("-b", "file", "repository", "sync", "--name", "r", "--remote", "puppet")
	c.run("-b", "file", "repository", "sync", "--name", "r", "--remote", "file1")
	var tasks []entity
	c.json(&tasks, "task", "list", "--name-contains", "synchronize")
	if len(tasks) != 2 {
		t.Fatalf("%d sync tasks", len(tasks))
	}
	var done []entity
	for _, tk := range tasks {
		done = append(done, waitTask(t, c, tk.str("pulp_href"), 60*time.Second))
	}
	for _, tk := range done {
		if tk.str("state") != "completed" {
			t.Fatalf("sync: %v", tk)
		}
	}
	first, second := done[1], done[0] // the list is newest first
	if second.str("started_at") < first.str("finished_at") {
		t.Errorf("the syncs overlapped: first finished %s, second started %s", first.str("finished_at"), second.str("started_at"))
	}
	var versions []entity
	c.json(&versions, "file", "repository", "version", "list", "--repository", "r")
	if len(versions) != 3 || presentCount(versions[0]) != 15 {
		t.Errorf("versions %d, latest holds %d files; want 3 versions and 12+3 files", len(versions), presentCount(versions[0]))
	}
}

// MinIO goes away: uploads and downloads fail with a clear 503 naming the storage, and
// no metadata row points to a blob that was never stored.
func TestObjectStorageDown(t *testing.T) {
	storage, stopMinIO := tests3.Private(t)
	s := startPith(t, testpg.URL(t), "--storage", storage, "--redirect-to-object-storage=false")
	c := newCLI(t, s)
	dir := t.TempDir()
	before := filepath.Join(dir, "before.txt")
	os.WriteFile(before, []byte("stored while MinIO was up\n"), 0o644)
	c.run("file", "repository", "create", "--name", "r")
	c.run("file", "content", "upload", "--file", before, "--relative-path", "before.txt", "--repository", "r")
	c.run("file", "distribution", "create", "--name", "d", "--base-path", "d", "--repository", "r")
	var arts []entity
	c.json(&arts, "artifact", "list")
	stopMinIO()

	code, body := get(t, s.content+"/pulp/content/d/before.txt")
	if code != 503 || !strings.Contains(string(body), "s3") {
		t.Errorf("download with MinIO down: %d %q, want 503 naming the storage", code, body)
	}
	after := filepath.Join(dir, "after.txt")
	os.WriteFile(after, []byte("uploaded while MinIO is down\n"), 0o644)
	out, err := c.try("file", "content", "upload", "--file", after, "--relative-path", "after.txt", "--repository", "r")
	if err == nil || !strings.Contains(out, "503") && !strings.Contains(out, "unavailable") {
		t.Errorf("upload with MinIO down: %v\n%s", err, out)
	}
	var now []entity
	c.json(&now, "artifact", "list")
	if len(now) != len(arts) {
		t.Errorf("artifacts %d → %d: a row was written for a blob that was never stored", len(arts), len(now))
	}
}

// `pith serve` killed in the middle of a sync and started again on the same data
// directory: the sync is failed at once as interrupted by the restart (the lease is far
// longer than the test), its lock is free for the next sync, and the half-written blob
// the killed process left is removed at start; a live write of another process in the
// same blob directory survives another process's start.
func TestRestartDuringSync(t *testing.T) {
	fx := fixtures(t)
	data := t.TempDir()
	lease := []string{"--task-lease-seconds", "3600"}
	s := startPithOn(t, data, "", lease...)
	c := newCLI(t, s)
	c.run("file", "remote", "create", "--name", "slow", "--url", fx+"/slow/PULP_MANIFEST")
	c.run("file", "remote", "create", "--name", "puppet", "--url", fx+"/file-katello-puppet/PULP_MANIFEST")
	c.run("file", "repository", "create", "--name", "r", "--remote", "slow")
	c.run("-b", "file", "repository", "sync", "--name", "r")
	tmp := filepath.Join(data, "blobs", "tmp")
	var running []entity
	var temps []os.DirEntry
	deadline := time.Now().Add(30 * time.Second)
	for len(running) == 0 || len(temps) == 0 {
		c.json(&running, "task", "list", "--name-contains", "synchronize", "--state", "running")
		temps, _ = os.ReadDir(tmp)
		if time.Now().After(deadline) {
			t.Fatalf("the sync never started writing: running %v, temporaries %v", running, temps)
		}
		time.Sleep(100 * time.Millisecond)
	}
	sync := running[0].str("pulp_href")

	// Another installation on the same blob directory starts and sweeps: the live write
	// stays, and the sync goes on.
	startPith(t, "", "--storage", filepath.Join(data, "blobs"))
	if left, _ := os.ReadDir(tmp); len(left) != len(temps) {
		t.Fatalf("another process's start took a live write: temporaries %v, then %v", temps, left)
	}
	var tk entity
	if c.json(&tk, "task", "show", "--href", sync); tk.str("state") != "running" {
		t.Fatalf("the sync after another process started: %v", tk)
	}

	if err := s.proc.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	s.proc.Wait()
	s = startPithOn(t, data, "", lease...)
	c = newCLI(t, s)
	if c.json(&tk, "task", "show", "--href", sync); tk.str("state") != "failed" || !strings.Contains(toJSON(tk["error"]), "restarted") {
		t.Fatalf("the interrupted sync once pith started again: %s %v; want failed by the restart", tk.str("state"), tk["error"])
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("temporaries of the killed process left after the start: %v", left)
	}
	c.run("file", "repository", "sync", "--name", "r", "--remote", "puppet")
	var versions []entity
	c.json(&versions, "file", "repository", "version", "list", "--repository", "r")
	if len(versions) != 2 || presentCount(versions[0]) == 0 {
		t.Errorf("versions after the next sync: %v", versions)
	}
}
