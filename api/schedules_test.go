package api_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"pith/blob"
	"pith/blob/driver/tempfile"
	"pith/content"
	"pith/content/contenttest"
	"pith/meta"
	"pith/task"
)

// The maintenance schedules are listed like Pulp's task schedules, and the upload
// cleanup they dispatch removes abandoned uploads with their chunks.
func TestTaskSchedulesAndUploadCleanup(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.Core.SetSchedules(ctx, content.Schedules{UploadProtection: time.Minute}); err != nil {
		t.Fatal(err)
	}
	code, page := e.JSON("GET", "/pulp/api/v3/task-schedules/?name=upload%20cleanup", nil)
	if code != 200 || page["count"].(float64) != 1 {
		t.Fatalf("list: %d %v", code, page)
	}
	sc := page["results"].([]any)[0].(map[string]any)
	if sc["task_name"] != "pith.app.tasks.upload.cleanup" || sc["dispatch_interval"] != "00:01:00" || sc["next_dispatch"] == nil {
		t.Fatalf("schedule: %v", sc)
	}
	if code, one := e.JSON("GET", sc["pulp_href"].(string), nil); code != 200 || one["name"] != "upload cleanup" {
		t.Fatalf("read: %d %v", code, one)
	}
	if code, page := e.JSON("GET", "/pulp/api/v3/task-schedules/?name=orphan%20cleanup", nil); code != 200 || page["count"].(float64) != 0 {
		t.Fatalf("orphan cleanup is off by default: %d %v", code, page)
	}

	// Two uploads with a chunk each; one is old enough to go.
	_, old := e.JSON("POST", "/pulp/api/v3/uploads/", map[string]any{"size": 4})
	_, fresh := e.JSON("POST", "/pulp/api/v3/uploads/", map[string]any{"size": 4})
	for _, u := range []map[string]any{old, fresh} {
		ct, b := contenttest.Multipart(nil, "file", "blob", []byte("abcd"))
		if code, m, _ := e.Do("PUT", u["pulp_href"].(string), ct, b, "Content-Range", "bytes 0-3/4"); code != 200 {
			t.Fatalf("chunk: %d %v", code, m)
		}
	}
	if _, err := e.DB.Exec(ctx, `UPDATE uploads SET updated = ? WHERE pulp_id = ?`, meta.Now()-2*time.Minute.Microseconds(), old["pulp_href"].(string)[len("/pulp/api/v3/uploads/"):len(old["pulp_href"].(string))-1]); err != nil {
		t.Fatal(err)
	}
	// Run what the leader dispatches when the schedule is due.
	if n, err := task.DispatchDue(ctx, e.DB, meta.Now()+2*time.Minute.Microseconds()); err != nil || n != 1 {
		t.Fatalf("dispatch due: %d %v", n, err)
	}
	_, sc = e.JSON("GET", sc["pulp_href"].(string), nil)
	if tk := e.Wait(sc["last_task"].(string)); tk["state"] != "completed" {
		t.Fatalf("cleanup task: %v", tk)
	}
	if code, _ := e.JSON("GET", old["pulp_href"].(string), nil); code != 404 {
		t.Errorf("old upload still there: %d", code)
	}
	if code, _ := e.JSON("GET", fresh["pulp_href"].(string), nil); code != 200 {
		t.Errorf("fresh upload gone: %d", code)
	}
	if n := e.Count("upload_chunks"); n != 1 {
		t.Errorf("%d chunk rows left, want the fresh upload's 1", n)
	}
}

// The temporary blob cleanup is always scheduled; what it dispatches removes the
// temporary a writer that died left, and not the one a live writer writes.
func TestTemporaryBlobCleanup(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.Core.SetSchedules(ctx, content.Schedules{}); err != nil {
		t.Fatal(err)
	}
	code, page := e.JSON("GET", "/pulp/api/v3/task-schedules/?name=temporary%20blob%20cleanup", nil)
	if code != 200 || page["count"].(float64) != 1 {
		t.Fatalf("list: %d %v", code, page)
	}
	sc := page["results"].([]any)[0].(map[string]any)
	if sc["task_name"] != "pith.app.tasks.blob.temp_cleanup" || sc["dispatch_interval"] != "01:00:00" {
		t.Fatalf("schedule: %v", sc)
	}
	// A dead writer's temporary: named as this host's, locked by no one.
	dead, err := os.CreateTemp(filepath.Join(e.Dir, "blobs", "tmp"), tempfile.Pattern("blob-")+"*")
	if err != nil {
		t.Fatal(err)
	}
	dead.WriteString("half a blob")
	dead.Close()
	live, err := e.Store.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	live.Write(bytes.Repeat([]byte("live "), 100_000))
	if n, err := task.DispatchDue(ctx, e.DB, meta.Now()+time.Hour.Microseconds()+1); err != nil || n != 1 {
		t.Fatalf("dispatch due: %d %v", n, err)
	}
	_, sc = e.JSON("GET", sc["pulp_href"].(string), nil)
	if tk := e.Wait(sc["last_task"].(string)); tk["state"] != "completed" {
		t.Fatalf("cleanup task: %v", tk)
	}
	if _, err := os.Stat(dead.Name()); !os.IsNotExist(err) {
		t.Errorf("the dead writer's temporary: %v, want it removed", err)
	}
	if _, err := live.Commit(ctx, blob.Expect{Size: -1}); err != nil {
		t.Errorf("the live write after the cleanup: %v", err)
	}
}
