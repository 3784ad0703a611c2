package file_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"pith/content/gitsource"
	"pith/internal/testgit"
)

// pointer is the Git LFS pointer of data, as git-lfs writes it.
func pointer(data string) string {
	return fmt.Sprintf("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sum(data), len(data))
}

// lfsServer is a repository's Git LFS API: its batch answers send each object to
// objects, another host, with a header of its own; broken, when set, says what to break.
type lfsServer struct {
	t                  *testing.T
	objects            *httptest.Server
	data               map[string]string // by sha256
	broken             string            // "error": an object errs; "omit": one is left out; "bytes": wrong bytes served
	batches, downloads atomic.Int32
}

func (s *lfsServer) batch(w http.ResponseWriter, r *http.Request) {
	s.batches.Add(1)
	user, pw, _ := r.BasicAuth()
	if r.Method != "POST" || r.URL.Path != "/coll.git/info/lfs/objects/batch" || r.Header.Get("Content-Type") != "application/vnd.git-lfs+json" ||
		r.Header.Get("Accept") != "application/vnd.git-lfs+json" || user != "git" || pw != "secret" {
		s.t.Errorf("batch request: %s %s %v", r.Method, r.URL.Path, r.Header)
		http.Error(w, "no", http.StatusBadRequest)
		return
	}
	var req struct {
		Operation string `json:"operation"`
		Objects   []struct {
			OID  string `json:"oid"`
			Size int64  `json:"size"`
		} `json:"objects"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Operation != "download" {
		s.t.Errorf("batch body: %v %v", err, req)
	}
	var out []map[string]any
	for i, o := range req.Objects {
		x := map[string]any{"oid": o.OID, "size": o.Size}
		switch {
		case s.broken == "error" && i == 0:
			x["error"] = map[string]any{"code": 404, "message": "Object does not exist"}
		case s.broken == "omit" && i == 0:
			continue
		default:
			x["actions"] = map[string]any{"download": map[string]any{"href": s.objects.URL + "/o/" + o.OID, "header": map[string]string{"Authorization": "RemoteAuth token-" + o.OID[:8]}}}
		}
		out = append(out, x)
	}
	w.Header().Set("Content-Type", "application/vnd.git-lfs+json")
	json.NewEncoder(w).Encode(map[string]any{"transfer": "basic", "objects": out})
}

func (s *lfsServer) object(w http.ResponseWriter, r *http.Request) {
	s.downloads.Add(1)
	oid := strings.TrimPrefix(r.URL.Path, "/o/")
	if r.Header.Get("Authorization") != "RemoteAuth token-"+oid[:min(8, len(oid))] {
		s.t.Errorf("object %s: Authorization %q (the remote's credentials must not go to the object's host)", oid, r.Header.Get("Authorization"))
		http.Error(w, "no", http.StatusForbidden)
		return
	}
	data, ok := s.data[oid]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if s.broken == "bytes" {
		data = strings.ToUpper(data)
	}
	fmt.Fprint(w, data)
}

// A git sync resolves Git LFS pointers as pulp_file does: each object asked for through
// the repository's batch API (with the remote's credentials), downloaded from the href
// the answer gives (with its header, not the remote's credentials) and verified; two
// paths pointing at one object both get it, a text that only looks like a pointer stays
// as it is, and a second sync downloads nothing again. An object the LFS server refuses,
// leaves out or serves wrong fails the sync naming its path, with no new version.
func TestGitSyncLFS(t *testing.T) {
	big, other := strings.Repeat("large object\n", 300), "another object\n"
	lfs := &lfsServer{t: t, data: map[string]string{sum(big): big, sum(other): other}}
	lfs.objects = httptest.NewServer(http.HandlerFunc(lfs.object))
	defer lfs.objects.Close()
	notPointer := "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 3\n"
	url, _ := testgit.PublishLFS(t, map[string]string{
		"model.bin": pointer(big), "copy/model.bin": pointer(big), "data/other.bin": pointer(other),
		"notes.txt": "plain\n", "looks-like-a-pointer.txt": notPointer,
	}, http.HandlerFunc(lfs.batch))

	e := gitEnv(t, gitsource.Limits{})
	remote := gitRemote(e, map[string]any{"name": "g", "url": url, "username": "git", "password": "secret"})
	repo := fileRepo(e, "r")
	want := map[string]string{"model.bin": sum(big), "copy/model.bin": sum(big), "data/other.bin": sum(other),
		"notes.txt": sum("plain\n"), "looks-like-a-pointer.txt": sum(notPointer)}
	for round := range 2 {
		code, m := e.JSON("POST", repo+"sync/", map[string]any{"remote": remote, "mirror": true})
		e.Done("sync", code, m)
		if _, got := latestFiles(e, repo); !maps.Equal(got, want) {
			t.Errorf("round %d: files %v, want %v", round, got, want)
		}
		if lfs.batches.Load() != int32(round+1) || lfs.downloads.Load() != 2 {
			t.Errorf("round %d: %d batch requests, %d downloads; want %d and 2", round, lfs.batches.Load(), lfs.downloads.Load(), round+1)
		}
	}
	// The objects are served by pith as any file.
	code, m := e.JSON("POST", "/pulp/api/v3/distributions/file/file/", map[string]any{"name": "d", "base_path": "d", "repository": repo})
	e.Done("distribution", code, m)
	if code, body, _ := e.Do("GET", "/pulp/content/d/model.bin", "", nil); code != 200 || body["_raw"] != big {
		t.Errorf("model.bin served: %d", code)
	}

	for broken, msg := range map[string]string{
		"error": "Failed to resolve LFS blob", "omit": "leaves out its object", "bytes": "sha256",
	} {
		t.Run(broken, func(t *testing.T) {
			lfs.broken = broken
			defer func() { lfs.broken = "" }()
			e := gitEnv(t, gitsource.Limits{})
			remote := gitRemote(e, map[string]any{"name": "g", "url": url, "username": "git", "password": "secret"})
			repo := fileRepo(e, "r")
			code, m := e.JSON("POST", repo+"sync/", map[string]any{"remote": remote})
			if code != 202 {
				t.Fatalf("sync: %d %v", code, m)
			}
			task := e.Wait(m["task"].(string))
			if err := fmt.Sprint(task["error"]); task["state"] != "failed" || !strings.Contains(err, msg) || !strings.Contains(err, ".bin") {
				t.Errorf("task %v: %s, want %q naming the path", task["state"], err, msg)
			}
			if v, _ := latestFiles(e, repo); !strings.HasSuffix(v, "/versions/0/") || e.Count("artifacts") != 0 {
				t.Errorf("a failed sync made %s, %d artifacts", v, e.Count("artifacts"))
			}
		})
	}
}
