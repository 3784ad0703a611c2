package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"testing"
	"time"

	"pith/internal/testpg"
	"pith/internal/tests3"
)

// call sends an authenticated API request and decodes the JSON answer.
func call(t *testing.T, method, url, ctype string, body io.Reader, hdr ...string) (int, map[string]any) {
	t.Helper()
	code, m, err := send(method, url, ctype, body, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return code, m
}

// send is call for any goroutine: it returns the error instead of failing the test.
func send(method, url, ctype string, body io.Reader, hdr ...string) (int, map[string]any, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return 0, nil, err
	}
	req.SetBasicAuth("admin", adminPassword)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, nil
}

// sendChunk PUTs data as the chunk of the upload at href starting at off.
func sendChunk(api, href string, off, total int, data []byte) (int, map[string]any, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "chunk")
	fw.Write(data)
	mw.Close()
	return send("PUT", api+href, mw.FormDataContentType(), &body, "Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+len(data)-1, total))
}

// commitUpload commits an upload with the data's sha256 and returns the artifact its
// task created.
func commitUpload(t *testing.T, api, href string, data []byte) map[string]any {
	t.Helper()
	sum := sha256.Sum256(data)
	code, m := call(t, "POST", api+href+"commit/", "application/json", bytes.NewReader([]byte(`{"sha256": "`+hex.EncodeToString(sum[:])+`"}`)))
	if code != 202 {
		t.Fatalf("commit: %d %v", code, m)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, tk := call(t, "GET", api+m["task"].(string), "", nil)
		if tk["state"] == "completed" {
			res := tk["created_resources"].([]any)
			_, art := call(t, "GET", api+res[0].(string), "", nil)
			if art["sha256"] != hex.EncodeToString(sum[:]) || art["size"].(float64) != float64(len(data)) {
				t.Fatalf("artifact: %v", art)
			}
			return art
		}
		if tk["state"] == "failed" || time.Now().After(deadline) {
			t.Fatalf("commit task: %v", tk)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A chunked upload whose chunks reach different API processes (on data directories of
// their own, as behind a load balancer across hosts) commits whole: chunks live in the
// shared blob storage, not on the receiving host's disk.
func TestUploadAcrossAPIProcesses(t *testing.T) {
	s := startSplit(t, testpg.URL(t), "--storage", tests3.URL(t))
	data := make([]byte, 3<<20+12345)
	rand.Read(data)
	code, up := call(t, "POST", s.url+"/pulp/api/v3/uploads/", "application/json", bytes.NewReader([]byte(fmt.Sprintf(`{"size": %d}`, len(data)))))
	if code != 201 {
		t.Fatalf("create upload: %d %v", code, up)
	}
	href := up["pulp_href"].(string)
	const chunk = 1 << 20
	for i, off := 0, 0; off < len(data); i, off = i+1, off+chunk {
		api := []string{s.url, s.api2}[i%2]
		code, m, err := sendChunk(api, href, off, len(data), data[off:min(off+chunk, len(data))])
		if err != nil || code != 200 {
			t.Fatalf("chunk %d via %s: %d %v %v", i, api, code, m, err)
		}
	}
	commitUpload(t, s.api2, href, data)
	if code, _ := call(t, "GET", s.url+href, "", nil); code != 404 {
		t.Errorf("upload still listed after commit: %d", code)
	}
}
