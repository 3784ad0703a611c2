package file_test

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"testing/fstest"

	"pith/content/contenttest"
	"pith/content/file"
)

// upstream is a file repository made here: a PULP_MANIFEST and the files it lists.
func upstream() fstest.MapFS {
	fsys := fstest.MapFS{}
	manifest := ""
	for _, name := range []string{"a.txt", "dir/b.txt", "dir/sub/c.iso"} {
		data := []byte("the file " + name + "\n")
		fsys["files/"+name] = &fstest.MapFile{Data: data}
		manifest += fmt.Sprintf("%s,%x,%d\n", name, sha256.Sum256(data), len(data))
	}
	fsys["files/PULP_MANIFEST"] = &fstest.MapFile{Data: []byte(manifest)}
	return fsys
}

func TestConformance(t *testing.T) {
	contenttest.Run(t, contenttest.Fixture{Types: []contenttest.Maker{contenttest.Type(file.New)}, Repository: file.Type,
		Upstream: upstream(), RemotePath: "files/PULP_MANIFEST", Index: []string{""}, Present: map[string]int{file.Type: 3}})
}
