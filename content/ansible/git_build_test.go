package ansible

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"pith/content/ansible/collection"
	"pith/content/gitsource"
	"pith/internal/testgit"
)

const galaxyYML = `namespace: acme
name: fromgit
version: 1.2.0
readme: README.md
authors: [Acme]
license: [GPL-3.0-or-later]
repository: https://example.com/acme/fromgit
build_ignore: ['*.bak']
`

func TestBuildGit(t *testing.T) {
	url, commit := testgit.Publish(t, map[string]string{
		"galaxy.yml": galaxyYML, "README.md": "# From git\n", "meta/runtime.yml": "requires_ansible: '>=2.15.0'\n",
		"plugins/modules/hello.py": "DOCUMENTATION = '''\nmodule: hello\nshort_description: Says hello\n'''\n",
		"old.bak":                  "ignored\n", "docs/intro.md": "->../README.md",
	})
	bad := testgit.Serve(t, map[string]string{"galaxy.yml": strings.Replace(galaxyYML, "1.2.0", "one", 1), "README.md": "r\n"})
	for _, metadataOnly := range []bool{false, true} {
		tmp := t.TempDir()
		a, err := buildGit(context.Background(), gitBuildOptions{Options: gitsource.Options{URL: url + "/", TempDir: tmp}, MetadataOnly: metadataOnly})
		if err != nil {
			t.Fatal(err)
		}
		v := a.Version
		if v.Namespace != "acme" || v.Name != "fromgit" || v.Version != "1.2.0" || v.RequiresAnsible != ">=2.15.0" ||
			len(v.Contents) != 1 || v.Contents[0].Name != "hello" {
			t.Errorf("version %+v", v)
		}
		if a.Commit != commit || a.RemoteURL != url+"/commit/"+commit || a.Built.Filename.String() != "acme-fromgit-1.2.0.tar.gz" {
			t.Errorf("artifact %+v", a)
		}
		if bytes.Contains(v.Files, []byte("old.bak")) || !bytes.Contains(v.Files, []byte("docs/intro.md")) {
			t.Errorf("FILES.json %s", v.Files)
		}
		if metadataOnly {
			if a.Path != "" {
				t.Errorf("metadata_only kept %s", a.Path)
			}
			leftIn(t, tmp)
			continue
		}
		f, err := os.Open(a.Path)
		if err != nil {
			t.Fatal(err)
		}
		again, err := collection.Read(f, collection.Options{})
		f.Close()
		if err != nil || again.SHA256 != v.SHA256 || again.Size != v.Size {
			t.Errorf("the file is not the artifact read: %v", err)
		}
		if err := a.Remove(); err != nil {
			t.Fatal(err)
		}
		leftIn(t, tmp)
	}
	tmp := t.TempDir()
	_, err := buildGit(context.Background(), gitBuildOptions{Options: gitsource.Options{URL: bad, TempDir: tmp}})
	var ce *collection.Error
	if !errors.As(err, &ce) || !errors.Is(err, collection.ErrInvalid) || !strings.Contains(err.Error(), " at ") {
		t.Fatalf("buildGit of a bad galaxy.yml: %v", err)
	}
	leftIn(t, tmp)
	if _, err := buildGit(context.Background(), gitBuildOptions{Options: gitsource.Options{URL: url, Ref: "nope", TempDir: tmp}}); !errors.Is(err, gitsource.ErrRefNotFound) {
		t.Fatalf("buildGit of a missing ref: %v", err)
	}
	leftIn(t, tmp)
}

// leftIn fails the test if dir holds anything: every temporary file is removed.
func leftIn(t testing.TB, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}
