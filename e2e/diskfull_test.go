package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmpfsSize is the size of the disk the tests fill; the big file is larger.
const (
	tmpfsSize = 32 << 20
	bigSize   = 48 << 20
)

// smallDisk mounts a tmpfs of tmpfsSize for the test and returns its directory. It needs
// root; the test is skipped, saying so, where it cannot mount.
func smallDisk(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the disk-full tests mount a small tmpfs, which needs root (they run as root in scripts/test)")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", tmpfsSize)); err != nil {
		t.Skipf("the disk-full tests mount a small tmpfs, which this machine refuses: %v", err)
	}
	// Registered before pith starts, so it runs after pith has stopped.
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file into dir until the disk is full; removing it frees the space.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, block := range []int{1 << 20, 4 << 10, 1} {
		b := make([]byte, block)
		for {
			if _, err := f.Write(b); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	return p
}

// bigMirror serves a file manifest of one file larger than the small disk (/big/) and
// one of a file sent only once gate is closed (/gate/).
func bigMirror(t *testing.T, gate chan struct{}) string {
	t.Helper()
	zeros := make([]byte, bigSize)
	sum := sha256.Sum256(zeros)
	mux := http.NewServeMux()
	mux.HandleFunc("/big/PULP_MANIFEST", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "big.bin,%s,%d\n", hex.EncodeToString(sum[:]), bigSize)
	})
	mux.HandleFunc("/gate/PULP_MANIFEST", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "gated.bin,%s,%d\n", hex.EncodeToString(sum[:]), bigSize)
	})
	serve := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(bigSize))
		io.Copy(w, bytes.NewReader(zeros))
	}
	mux.HandleFunc("/big/big.bin", serve)
	mux.HandleFunc("/gate/gated.bin", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
			serve(w, r)
		case <-r.Context().Done():
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// newestTask is the newest task whose name contains name.
func newestTask(t *testing.T, c *cli, name string) entity {
	t.Helper()
	var tasks []entity
	c.json(&tasks, "task", "list", "--name-contains", name, "--limit", "1")
	if len(tasks) != 1 {
		t.Fatalf("no %s task", name)
	}
	return tasks[0]
}

// failedFull checks that a task failed because the named storage is full, with an error
// that shows no path on the server.
func failedFull(t *testing.T, what string, tk entity, disk string) {
	t.Helper()
	e := toJSON(tk["error"])
	if tk.str("state") != "failed" || !strings.Contains(e, "blob storage is full") {
		t.Errorf("%s on a full disk: %s %s; want failed, saying the blob storage is full", what, tk.str("state"), e)
	}
	if strings.Contains(e, disk) || strings.Contains(e, "/blobs/") {
		t.Errorf("%s: the error shows a path on the server: %s", what, e)
	}
}

// noneRunning checks that no task is left running.
func noneRunning(t *testing.T, c *cli) {
	t.Helper()
	var running []entity
	c.json(&running, "task", "list", "--state", "running")
	if len(running) != 0 {
		t.Errorf("tasks left running: %v", running)
	}
}

// The blob storage of an embedded installation fills up: an upload is a 507 naming the
// storage, a sync and a publish fail with errors that say so, and nothing shows the
// server's paths; once there is room again, everything works and nothing is left
// running or half written.
func TestBlobStorageFull(t *testing.T) {
	disk := smallDisk(t)
	fx, mirror := fixtures(t), bigMirror(t, nil)
	data := filepath.Join(disk, "data")
	s := startPithOn(t, data, filepath.Join(t.TempDir(), "pith.db"), "--task-lease-seconds", "3600")
	c := newCLI(t, s)
	small := filepath.Join(t.TempDir(), "small.txt")
	os.WriteFile(small, []byte("published before the disk filled\n"), 0o644)
	c.run("file", "repository", "create", "--name", "r")
	c.run("file", "content", "upload", "--file", small, "--relative-path", "small.txt", "--repository", "r")
	c.run("file", "remote", "create", "--name", "big", "--url", mirror+"/big/PULP_MANIFEST")
	c.run("file", "remote", "create", "--name", "puppet", "--url", fx+"/file-katello-puppet/PULP_MANIFEST")

	// An upload larger than the disk.
	code, up := call(t, "POST", s.url+"/pulp/api/v3/uploads/", "application/json", strings.NewReader(fmt.Sprintf(`{"size": %d}`, bigSize)))
	if code != 201 {
		t.Fatalf("create upload: %d %v", code, up)
	}
	code, m, err := sendChunk(s.url, up["pulp_href"].(string), 0, bigSize, make([]byte, bigSize))
	if err != nil || code != 507 || m["detail"] != "the filesystem blob storage is full" {
		t.Errorf("chunk larger than the disk: %d %v %v; want 507 saying the filesystem blob storage is full", code, m, err)
	}

	// A sync of a file larger than the disk.
	c.try("file", "repository", "sync", "--name", "r", "--remote", "big")
	failedFull(t, "sync", newestTask(t, c, "synchronize"), disk)

	// A publish with the disk full.
	filler := fill(t, disk)
	c.try("file", "publication", "create", "--repository", "r")
	failedFull(t, "publish", newestTask(t, c, "publish"), disk)
	noneRunning(t, c)

	// Room again: the same repository syncs and publishes.
	os.Remove(filler)
	c.run("file", "repository", "sync", "--name", "r", "--remote", "puppet")
	var pub entity
	c.json(&pub, "file", "publication", "create", "--repository", "r")
	if pub.str("pulp_href") == "" {
		t.Errorf("publish once there is room: %v", pub)
	}
	noneRunning(t, c)
	if left, _ := os.ReadDir(filepath.Join(data, "blobs", "tmp")); len(left) != 0 {
		t.Errorf("temporaries left by the failed writes: %v", left)
	}
}

// The disk of an embedded installation, database included, fills while a sync runs: the
// sync fails (its end is written once the database can take it) and does not stay
// running, is not taken for a worker gone missing, and holds no lock: once there is room,
// the next sync of the repository runs.
func TestDiskFullDuringSync(t *testing.T) {
	disk := smallDisk(t)
	gate := make(chan struct{})
	fx, mirror := fixtures(t), bigMirror(t, gate)
	s := startPithOn(t, filepath.Join(disk, "data"), "", "--task-lease-seconds", "3600")
	c := newCLI(t, s)
	c.run("file", "repository", "create", "--name", "r")
	c.run("file", "remote", "create", "--name", "gate", "--url", mirror+"/gate/PULP_MANIFEST")
	c.run("file", "remote", "create", "--name", "puppet", "--url", fx+"/file-katello-puppet/PULP_MANIFEST")
	c.run("-b", "file", "repository", "sync", "--name", "r", "--remote", "gate")
	sync := newestTask(t, c, "synchronize")
	for deadline := time.Now().Add(30 * time.Second); sync.str("state") != "running"; sync = newestTask(t, c, "synchronize") {
		if time.Now().After(deadline) {
			t.Fatalf("the sync never started: %v", sync)
		}
		time.Sleep(50 * time.Millisecond)
	}

	filler := fill(t, disk)
	close(gate)
	// The sync fails; with the database full too, its end waits for room.
	for deadline := time.Now().Add(60 * time.Second); ; {
		sync = newestTask(t, c, "synchronize")
		if sync.str("state") != "running" || strings.Contains(s.log.String(), "cannot record the end of a task") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sync neither ended nor said it could not record its end")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if strings.Contains(s.log.String(), "cannot record the end of a task") {
		t.Log("the end of the sync waited for room in the database")
	}
	os.Remove(filler)
	sync = waitTask(t, newCLI(t, s), sync.str("pulp_href"), 60*time.Second)
	failedFull(t, "sync", sync, disk)
	c.run("file", "repository", "sync", "--name", "r", "--remote", "puppet")
	noneRunning(t, c)
}
