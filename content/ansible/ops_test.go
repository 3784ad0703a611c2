package ansible_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"pith/content"
	"pith/content/ansible"
	"pith/content/contenttest"
	"pith/meta"
	"pith/sign"
)

// signingEnv is an env whose ansible type holds a key for a signing service.
func signingEnv(t *testing.T) (*contenttest.Env, *sign.Signer, string) {
	t.Helper()
	var p *ansible.Plugin
	e := contenttest.New(t, func(c *content.Core) content.Type { p = ansible.New(c); return p })
	key := testKey(t)
	svc, err := meta.PutSigningService(context.Background(), e.DB, meta.SigningService{Name: "collections", PublicKey: key.PublicKey(),
		Fingerprint: key.Fingerprint(), Script: "test"})
	if err != nil {
		t.Fatal(err)
	}
	p.SetSigner(svc.PulpID, key)
	return e, key, "/pulp/api/v3/signing-services/" + svc.PulpID + "/"
}

func newRepo(t *testing.T, e *contenttest.Env, name string, extra ...any) string {
	t.Helper()
	body := map[string]any{"name": name}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	code, m := e.JSON("POST", "/pulp/api/v3/repositories/ansible/ansible/", body)
	if code != 201 {
		t.Fatalf("repository %s: %d %v", name, code, m)
	}
	return m["pulp_href"].(string)
}

func latest(t *testing.T, e *contenttest.Env, repo string) string {
	t.Helper()
	code, m, _ := e.Do("GET", repo, "", nil)
	if code != 200 {
		t.Fatalf("%s: %d %v", repo, code, m)
	}
	return m["latest_version_href"].(string)
}

// Copying a collection version takes its signatures, marks and its collection's
// deprecation along into every destination; moving also takes them out of the source.
func TestCopyAndMoveCollectionVersion(t *testing.T) {
	e, _, svc := signingEnv(t)
	src := newRepo(t, e, "src")
	cv := upload(t, e, src, "pulp-testing_asset-1.0.0.tar.gz")
	code, m := e.JSON("POST", src+"sign/", map[string]any{"content_units": []string{"*"}, "signing_service": svc})
	e.Done("sign", code, m)
	code, m = e.JSON("POST", src+"mark/", map[string]any{"content_units": []string{cv}, "value": "approved"})
	e.Done("mark", code, m)
	code, m = e.JSON("POST", "/pulp/api/v3/content/ansible/collection_deprecations/", map[string]any{"namespace": "pulp", "name": "testing_asset", "repository": src})
	e.Done("deprecate", code, m)
	whole := versionContent(t, e, latest(t, e, src))
	if len(whole) != 4 {
		t.Fatalf("source holds %v", whole)
	}

	a, b, c := newRepo(t, e, "a"), newRepo(t, e, "b"), newRepo(t, e, "c")
	code, m = e.JSON("POST", src+"copy_collection_version/", map[string]any{"collection_versions": []string{cv}, "destination_repositories": []string{a, b}})
	e.Done("copy", code, m)
	for _, d := range []string{a, b} {
		if got := versionContent(t, e, latest(t, e, d)); len(got) != 4 {
			t.Errorf("copy into %s holds %v, want the version, its signature, mark and deprecation", d, got)
		}
	}
	code, m = e.JSON("POST", src+"move_collection_version/", map[string]any{"collection_versions": []string{cv}, "destination_repositories": []string{c}})
	e.Done("move", code, m)
	if got := versionContent(t, e, latest(t, e, c)); len(got) != 4 {
		t.Errorf("move into c holds %v", got)
	}
	if got := versionContent(t, e, latest(t, e, src)); len(got) != 0 {
		t.Errorf("after the move the source holds %v, want nothing", got)
	}

	// Bad input: a 400 naming the field.
	for field, body := range map[string]map[string]any{
		"collection_versions":      {"collection_versions": []string{src}, "destination_repositories": []string{a}},
		"destination_repositories": {"collection_versions": []string{cv}, "destination_repositories": []string{cv}},
		"signing_service":          {"collection_versions": []string{cv}, "destination_repositories": []string{a}, "signing_service": "/pulp/api/v3/signing-services/00000000-0000-0000-0000-000000000000/"},
	} {
		if code, m := e.JSON("POST", src+"copy_collection_version/", body); code != 400 || m[field] == nil {
			t.Errorf("bad %s: %d %v", field, code, m)
		}
	}
}

// mark and unmark add and remove a value's marks; sign signs MANIFEST.json with the
// service's key, once per key.
func TestMarkAndSign(t *testing.T) {
	e, key, svc := signingEnv(t)
	repo := newRepo(t, e, "r")
	cv := upload(t, e, repo, "pulp-testing_asset-1.0.0.tar.gz")
	upload(t, e, repo, "pulp-testing_asset-1.0.1.tar.gz")
	code, m := e.JSON("POST", repo+"mark/", map[string]any{"content_units": []string{"*"}, "value": "certified"})
	e.Done("mark", code, m)
	if got := versionContent(t, e, latest(t, e, repo)); len(got["collection_marks"]) != 2 {
		t.Fatalf("after mark *: %v", got)
	}
	code, m = e.JSON("POST", repo+"unmark/", map[string]any{"content_units": []string{cv}, "value": "certified"})
	e.Done("unmark", code, m)
	if got := versionContent(t, e, latest(t, e, repo)); len(got["collection_marks"]) != 1 {
		t.Fatalf("after unmark: %v", got)
	}
	if code, m := e.JSON("POST", repo+"mark/", map[string]any{"content_units": []string{"*", cv}, "value": "x"}); code != 400 || m["content_units"] == nil {
		t.Errorf("* with hrefs: %d %v", code, m)
	}

	code, m = e.JSON("POST", repo+"sign/", map[string]any{"content_units": []string{cv}, "signing_service": svc})
	wantReports(t, "sign", e.Done("sign", code, m), "associating.content 1/-", "sign.new.signature 1/1", "sign.present.signature 0/0")
	v := latest(t, e, repo)
	code, m, _ = e.Do("GET", "/pulp/api/v3/content/ansible/collection_signatures/?signed_collection="+cv, "", nil)
	if code != 200 || m["count"].(float64) != 1 {
		t.Fatalf("signatures: %d %v", code, m)
	}
	s := m["results"].([]any)[0].(map[string]any)
	if s["pubkey_fingerprint"] != key.Fingerprint() || s["signing_service"] != svc {
		t.Errorf("signature %v", s)
	}
	var data string
	e.DB.QueryRow(context.Background(), `SELECT attrs FROM contents WHERE type = ?`, ansible.SignatureType).Scan(&data)
	var attrs struct{ Data string }
	if err := json.Unmarshal([]byte(data), &attrs); err != nil {
		t.Fatal(err)
	}
	if fp, err := sign.Verify(key.PublicKey(), bytes.NewReader(manifestOf(t, "pulp-testing_asset-1.0.0.tar.gz")), bytes.NewReader([]byte(attrs.Data))); err != nil || fp != key.Fingerprint() {
		t.Errorf("the signature does not verify the manifest: %v", err)
	}
	code, m = e.JSON("POST", repo+"sign/", map[string]any{"content_units": []string{cv}, "signing_service": svc})
	wantReports(t, "sign again", e.Done("sign again", code, m), "associating.content 0/-", "sign.new.signature 0/0", "sign.present.signature 0/0")
	if latest(t, e, repo) != v {
		t.Errorf("signing again made a new version")
	}
	// In another repository the signature made before is added, not made again.
	other := newRepo(t, e, "other")
	code, m = e.JSON("POST", other+"modify/", map[string]any{"add_content_units": []string{cv}})
	e.Done("modify", code, m)
	code, m = e.JSON("POST", other+"sign/", map[string]any{"content_units": []string{"*"}, "signing_service": svc})
	wantReports(t, "sign in another repository", e.Done("sign", code, m), "associating.content 1/-", "sign.new.signature 0/0", "sign.present.signature 1/1")
	if got := versionContent(t, e, latest(t, e, other)); len(got["collection_signatures"]) != 1 {
		t.Errorf("other after sign: %v", got)
	}
}

// copy_content copies a version's content, or the units named, into another repository.
func TestCopyContent(t *testing.T) {
	e := newEnv(t)
	src, dst := newRepo(t, e, "src"), newRepo(t, e, "dst")
	upload(t, e, src, "pulp-testing_asset-1.0.0.tar.gz")
	cv := upload(t, e, src, "pulp-testing_asset-1.0.1.tar.gz")
	code, m := e.JSON("POST", "/pulp/api/v3/ansible/copy/", map[string]any{"config": []map[string]any{
		{"source_repo_version": src + "versions/2/", "dest_repo": dst, "content": []string{cv}}}})
	e.Done("copy", code, m)
	if got := versionContent(t, e, latest(t, e, dst)); len(got["collection_versions"]) != 1 || got["collection_versions"][0] != cv {
		t.Errorf("copied %v, want %s", got, cv)
	}
	code, m = e.JSON("POST", "/pulp/api/v3/ansible/copy/", map[string]any{"config": []map[string]any{
		{"source_repo_version": src + "versions/2/", "dest_repo": dst, "dest_base_version": 0}}})
	e.Done("copy all", code, m)
	if got := versionContent(t, e, latest(t, e, dst)); len(got["collection_versions"]) != 2 {
		t.Errorf("copied %v, want both", got)
	}
	for name, cfg := range map[string]any{
		"unknown key":  []map[string]any{{"source_repo_version": src + "versions/2/", "dest_repo": dst, "x": 1}},
		"not a list":   map[string]any{"source_repo_version": src + "versions/2/"},
		"no version":   []map[string]any{{"source_repo_version": src + "versions/9/", "dest_repo": dst}},
		"no base":      []map[string]any{{"source_repo_version": src + "versions/2/", "dest_repo": dst, "dest_base_version": 7}},
		"bad content":  []map[string]any{{"source_repo_version": src + "versions/2/", "dest_repo": dst, "content": []string{"/x/"}}},
		"empty config": []map[string]any{},
	} {
		if code, m := e.JSON("POST", "/pulp/api/v3/ansible/copy/", map[string]any{"config": cfg}); code != 400 {
			t.Errorf("%s: %d %v", name, code, m)
		}
	}
}

// rebuild_metadata reads the tarballs again and keeps the versions' metadata.
func TestRebuildMetadata(t *testing.T) {
	e := newEnv(t)
	repo := newRepo(t, e, "r")
	cv := upload(t, e, repo, "pulp-testing_asset-1.0.0.tar.gz")
	_, before, _ := e.Do("GET", cv, "", nil)
	e.DB.Exec(context.Background(), `UPDATE contents SET attrs = json_set(attrs, '$.description', 'stale') WHERE type = ?`, ansible.CollectionVersionType)
	code, m := e.JSON("POST", repo+"rebuild_metadata/", map[string]any{"namespace": "pulp"})
	e.Done("rebuild", code, m)
	_, after, _ := e.Do("GET", cv, "", nil)
	if after["description"] != before["description"] || after["description"] == "stale" {
		t.Errorf("description after rebuild %q, before %q", after["description"], before["description"])
	}
	code, m = e.JSON("POST", repo+"versions/1/rebuild_metadata/", map[string]any{})
	e.Done("rebuild version 1", code, m)
}

// The tags list counts the collection versions carrying each tag.
func TestTags(t *testing.T) {
	e := newEnv(t)
	repo := newRepo(t, e, "r")
	files := []string{"ansible-netcommon-4.1.0.tar.gz", "cisco-iosxr-4.0.2.tar.gz", "foo-bar-1.0.0.tar.gz"}
	for _, f := range files {
		upload(t, e, repo, f)
	}
	code, m, _ := e.Do("GET", "/pulp/api/v3/pulp_ansible/tags/", "", nil)
	if code != 200 {
		t.Fatalf("tags: %d %v", code, m)
	}
	want := map[string]float64{}
	for _, f := range files {
		var mf struct {
			CollectionInfo struct{ Tags []string } `json:"collection_info"`
		}
		json.Unmarshal(manifestOf(t, f), &mf)
		for _, tag := range mf.CollectionInfo.Tags {
			want[tag]++
		}
	}
	got := map[string]float64{}
	for _, r := range m["results"].([]any) {
		x := r.(map[string]any)
		got[x["name"].(string)] = x["count"].(float64)
	}
	if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) || m["count"].(float64) != float64(len(want)) {
		t.Errorf("tags %v (count %v), want %v", got, m["count"], want)
	}
	code, m, _ = e.Do("GET", "/pulp/api/v3/pulp_ansible/tags/?limit=1&offset=1", "", nil)
	if code != 200 || len(m["results"].([]any)) != min(1, len(want)-1) {
		t.Errorf("second page: %d %v", code, m)
	}
}

// wantReports checks a task's progress reports, in order, as "code done/total" ("-" for
// no total), against pulp_ansible's.
func wantReports(t *testing.T, what string, task map[string]any, want ...string) {
	t.Helper()
	var got []string
	for _, r := range task["progress_reports"].([]any) {
		m := r.(map[string]any)
		total := "-"
		if n, ok := m["total"].(float64); ok {
			total = fmt.Sprint(n)
		}
		got = append(got, fmt.Sprintf("%s %v/%s", m["code"], m["done"], total))
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: progress reports %v, want %v", what, got, want)
	}
}
