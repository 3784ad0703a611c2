package file_test

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
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

// twins uploads two files at one relative path.
func twins(e *contenttest.Env) (string, string) {
	var hrefs []string
	for _, data := range []string{"one", "two"} {
		ct, body := contenttest.Multipart(map[string]string{"relative_path": "same/path.txt"}, "file", "path.txt", []byte(data))
		code, m, _ := e.Do("POST", "/pulp/api/v3/content/file/files/upload/", ct, body)
		if code != 201 {
			e.T.Fatalf("upload: %d %v", code, m)
		}
		hrefs = append(hrefs, m["pulp_href"].(string))
	}
	return hrefs[0], hrefs[1]
}

func TestConformance(t *testing.T) {
	contenttest.Run(t, contenttest.Fixture{Types: []contenttest.Maker{contenttest.Type(file.New)}, Repository: file.Type,
		Upstream: http.FileServerFS(upstream()), RemotePath: "files/PULP_MANIFEST", Index: []string{""}, Present: map[string]int{file.Type: 3},
		Twins: twins, Examples: map[string]contenttest.Example{
			"content_file_files_create": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
				ct, body := contenttest.Multipart(map[string]string{"relative_path": "created.txt", "repository": refs.Repository}, "file", "c", []byte("created"))
				return "POST", "/pulp/api/v3/content/file/files/", ct, body
			},
			"content_file_files_upload": func(e *contenttest.Env, refs contenttest.Refs) (string, string, string, io.Reader) {
				ct, body := contenttest.Multipart(map[string]string{"relative_path": "uploaded.txt"}, "file", "u", []byte("uploaded"))
				return "POST", "/pulp/api/v3/content/file/files/upload/", ct, body
			},
		}})
}
