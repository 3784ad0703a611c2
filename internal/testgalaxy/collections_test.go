package testgalaxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
)

// upload is a publish body as ansible-galaxy builds it: the file part base64-encoded in
// lines of 76 characters, then the sha256 part.
func upload(t *testing.T, filename string, artifact []byte, digest string, encoding string) (string, []byte) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, filename))
	h.Set("Content-Type", "application/octet-stream")
	payload := artifact
	if encoding != "" {
		h.Set("Content-Transfer-Encoding", encoding)
	}
	if encoding == "base64" {
		enc := base64.StdEncoding.EncodeToString(artifact)
		var lines []string
		for len(enc) > 76 {
			lines, enc = append(lines, enc[:76]), enc[76:]
		}
		payload = []byte(strings.Join(append(lines, enc), "\n"))
	}
	w, _ := mw.CreatePart(h)
	w.Write(payload)
	if digest != "" {
		mw.WriteField("sha256", digest)
	}
	mw.Close()
	return mw.FormDataContentType(), body.Bytes()
}

func post(t *testing.T, url, contentType string, body []byte, auth string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type importDoc struct {
	State string
	Error *struct{ Description string }
}

// Publishing: what the import accepts is served; a bad request is a 4xx naming the
// problem, an artifact the import refuses is a failed import task; neither adds anything.
func TestPublish(t *testing.T) {
	s := New(t, Config{Token: "tok", Username: "admin", Password: "pw"})
	good := readCollection(t, "pulp-testing_asset-1.0.0.tar.gz")
	sum := sha256.Sum256(good)
	digest := hex.EncodeToString(sum[:])
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:pw"))
	url := s.API + "v3/artifacts/collections/"

	task := func(body string) importDoc {
		t.Helper()
		var doc struct{ Task string }
		if err := json.Unmarshal([]byte(body), &doc); err != nil || !strings.HasPrefix(doc.Task, "/api/v3/imports/collections/") {
			t.Fatalf("publish answer %q: %v", body, err)
		}
		req, _ := http.NewRequest("GET", s.URL+doc.Task, nil)
		req.Header.Set("Authorization", "Token tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var it importDoc
		if err := json.Unmarshal(b, &it); err != nil {
			t.Fatal(err)
		}
		return it
	}

	ct, body := upload(t, "pulp-testing_asset-1.0.0.tar.gz", good, digest, "base64")
	for _, c := range []struct{ name, auth string }{{"none", ""}, {"wrong token", "Token nope"}, {"wrong password", "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:no"))}} {
		if code, b := post(t, url, ct, body, c.auth); code != 401 || !strings.Contains(b, `"errors"`) {
			t.Errorf("%s: %d %s", c.name, code, b)
		}
	}
	if code := getJSON(t, s.API+"v3/collections/pulp/testing_asset/", nil); code != 404 {
		t.Fatalf("an unauthenticated publish added the collection: %d", code)
	}

	tampered := append([]byte(nil), good...)
	tampered[len(tampered)/2] ^= 0xff
	tsum := sha256.Sum256(tampered)
	for _, c := range []struct {
		name, filename string
		artifact       []byte
		digest, enc    string
		want           string
	}{
		{"sha256 differs", "pulp-testing_asset-1.0.0.tar.gz", good, strings.Repeat("0", 64), "base64", "sha256: the file's digest is"},
		{"filename not an artifact's", "collection.tar.gz", good, digest, "base64", "expected format namespace-name-version.tar.gz"},
		{"unknown transfer encoding", "pulp-testing_asset-1.0.0.tar.gz", good, digest, "quoted-printable", "is not supported"},
	} {
		ct, body := upload(t, c.filename, c.artifact, c.digest, c.enc)
		if code, b := post(t, url, ct, body, "Token tok"); code != 400 || !strings.Contains(b, c.want) {
			t.Errorf("%s: %d %s", c.name, code, b)
		}
	}
	if code, b := post(t, url, "application/json", []byte("{}"), "Token tok"); code != 400 || !strings.Contains(b, "multipart/form-data") {
		t.Errorf("not multipart: %d %s", code, b)
	}
	big := bytes.Repeat([]byte("x"), maxUpload+1)
	ct, body = upload(t, "pulp-testing_asset-1.0.0.tar.gz", big, "", "")
	if code, b := post(t, url, ct, body, "Token tok"); code != 400 || !strings.Contains(b, "larger than") {
		t.Errorf("too large: %d %s", code, b)
	}

	// Refused by the import: a failed task naming the problem.
	for _, c := range []struct {
		name, filename string
		artifact       []byte
		digest         string
	}{
		{"not the manifest's version", "pulp-testing_asset-1.0.1.tar.gz", good, digest},
		{"corrupt", "pulp-testing_asset-1.0.0.tar.gz", tampered, hex.EncodeToString(tsum[:])},
	} {
		ct, body := upload(t, c.filename, c.artifact, c.digest, "base64")
		code, b := post(t, url, ct, body, "Token tok")
		if code != 202 {
			t.Fatalf("%s: %d %s", c.name, code, b)
		}
		if it := task(b); it.State != "failed" || it.Error == nil || it.Error.Description == "" {
			t.Errorf("%s: import %+v", c.name, it)
		}
	}
	if code := getJSON(t, s.API+"v3/collections/pulp/testing_asset/", nil); code != 404 {
		t.Fatalf("a refused publish added the collection: %d", code)
	}

	// Accepted, with a token and with Basic; the second time the version exists.
	ct, body = upload(t, "pulp-testing_asset-1.0.0.tar.gz", good, digest, "base64")
	if code, b := post(t, url, ct, body, "Token tok"); code != 202 || task(b).State != "completed" {
		t.Fatalf("publish: %d %s", code, b)
	}
	if code, b := post(t, url, ct, body, basic); code != 202 || !strings.Contains(task(b).Error.Description, "already exists") {
		t.Fatalf("publish again: %d %s", code, b)
	}
	var detail struct {
		DownloadURL string `json:"download_url"`
		Artifact    struct{ SHA256 string }
	}
	if code := getJSON(t, s.API+"v3/collections/pulp/testing_asset/versions/1.0.0/", &detail); code != 200 || detail.Artifact.SHA256 != digest {
		t.Fatalf("version: %d %+v", code, detail)
	}
	resp, err := http.Get(detail.DownloadURL)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, good) {
		t.Fatal("the download is not the published artifact")
	}

	// Wrong credentials are refused on reads too; none are needed there.
	req, _ := http.NewRequest("GET", s.API, nil)
	req.Header.Set("Authorization", "Token nope")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("wrong token on a read: %v %v", err, resp.Status)
	}
	if code := getJSON(t, s.API, nil); code != 200 {
		t.Fatalf("anonymous read: %d", code)
	}
}

// Versions page by limit and offset, highest first, with links as paths; limit is
// capped at MaxPage and a bad one is a 400.
func TestVersionPaging(t *testing.T) {
	s := New(t, Config{Prefix: "/pulp_ansible/galaxy/x/", MaxPage: 1})
	for _, f := range []string{"pulp-testing_asset-1.0.0.tar.gz", "pulp-testing_asset-1.0.1.tar.gz"} {
		if _, err := s.AddCollection(readCollection(t, f)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AddCollection(readCollection(t, "pulp-testing_asset-1.0.1.tar.gz")); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("the same version twice: %v", err)
	}
	type page struct {
		Meta  struct{ Count int }
		Links struct{ Next, Previous *string }
		Data  []struct{ Version string }
	}
	base := "/pulp_ansible/galaxy/x/api/v3/collections/pulp/testing_asset/versions/"
	var p page
	if code := getJSON(t, s.URL+base+"?limit=100", &p); code != 200 || p.Meta.Count != 2 || len(p.Data) != 1 || p.Data[0].Version != "1.0.1" ||
		p.Links.Next == nil || *p.Links.Next != base+"?limit=1&offset=1" || p.Links.Previous != nil {
		t.Fatalf("first page: %d %+v", code, p)
	}
	next := *p.Links.Next
	p = page{}
	if code := getJSON(t, s.URL+next, &p); code != 200 || len(p.Data) != 1 || p.Data[0].Version != "1.0.0" || p.Links.Next != nil {
		t.Fatalf("second page: %d %+v", code, p)
	}
	for _, q := range []string{"?limit=0", "?limit=x", "?offset=-1"} {
		if code := getJSON(t, s.URL+base+q, nil); code != 400 {
			t.Errorf("%s: %d", q, code)
		}
	}
	var list page
	if code := getJSON(t, s.API+"v3/collections/", &list); code != 200 || list.Meta.Count != 1 {
		t.Errorf("collections: %d %+v", code, list)
	}
	if code := getJSON(t, s.URL+base+"9.9.9/", nil); code != 404 {
		t.Errorf("a missing version: %d", code)
	}
	if code := getJSON(t, s.API+"v3/collections/pulp/"+strings.Repeat("x", maxURI)+"/", nil); code != 414 {
		t.Errorf("a long URI: %d", code)
	}
}
