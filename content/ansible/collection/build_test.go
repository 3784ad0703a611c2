package collection

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"sort"
	"strings"
	"testing"
)

// A writer of collection tarballs the way `ansible-galaxy collection build` writes
// them (MANIFEST.json, FILES.json, then the files), with hooks to break them.

// tfile is one entry: a file (body), a directory (dir) or a symlink (link).
type tfile struct {
	name string
	body string
	dir  bool
	link string
	hard string // a hard link to this archive path
	typ  byte   // a raw tar type flag, for device files and the like
}

// build describes a tarball; the zero value plus files is a valid collection.
type build struct {
	info     map[string]any // collection_info fields that replace the defaults (nil value: delete)
	files    []tfile
	unlisted map[string]bool         // paths left out of FILES.json
	fixFiles func(files []any) []any // edits FILES.json's entries
	rawFiles []byte                  // FILES.json bytes instead of the generated ones
	rawMani  []byte                  // MANIFEST.json bytes instead of the generated ones
	noMani   bool                    // leave MANIFEST.json out
	noFiles  bool                    // leave FILES.json out
	extra    []tfile                 // entries written after the others and not listed
}

// baseFiles is a small collection with every kind of content.
func baseFiles() []tfile {
	return []tfile{
		{name: "README.md", body: "# Acme demo\n\nA **demo** collection.\n"},
		{name: "meta/runtime.yml", body: "---\nrequires_ansible: '>=2.14.0'\n"},
		{name: "plugins/modules/ping.py", body: pingModule},
		{name: "plugins/modules/win_ping.ps1", body: "# powershell\n"},
		{name: "plugins/modules/win_ping.py", body: "DOCUMENTATION = r'''\nshort_description: Windows ping\n'''\n"},
		{name: "plugins/action/ping.py", body: "class ActionModule: pass\n"},
		{name: "plugins/module_utils/helpers.py", body: "X = 1\n"},
		{name: "plugins/filter/core.py", body: "class FilterModule: pass\n"},
		{name: "plugins/filter/core.yml", body: "DOCUMENTATION:\n  name: core\n  short_description: Core filters\n  version_added: 1.0.0\nEXAMPLES: |\n  x: '{{ y | core }}'\n"},
		{name: "plugins/lookup/sub/deep.py", body: "DOCUMENTATION = \"\"\"\n  name: deep\n  short_description: A deep lookup\n\"\"\"\n"},
		{name: "roles/web/tasks/main.yml", body: "- debug: msg=hi\n"},
		{name: "roles/web/meta/main.yml", body: "galaxy_info:\n  description: Web server role\n"},
		{name: "roles/web/README.md", body: "# web\n"},
		{name: "roles/group/db/handlers/main.yml", body: "[]\n"},
		{name: "roles/group/db/README.md", body: "# db\n"},
		{name: "playbooks/site.yml", body: "- hosts: all\n"},
		{name: "playbooks/sub/inner.yml", body: "- hosts: all\n"},
		{name: "docs/guide.md", body: "# Guide\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1))\n"},
		{name: "docs/notes.txt", body: "not markdown\n"},
		{name: "meta/extensions.yml", body: "extensions:\n  - args:\n      ext_dir: eda/plugins/event_source\n  - args:\n      ext_dir: custom/dir\n"},
		{name: "extensions/eda/plugins/event_source/watch.py", body: "DOCUMENTATION = '''\nshort_description: Watch events\n'''\n"},
		{name: "docs/link.md", link: "guide.md"},
	}
}

const pingModule = `#!/usr/bin/python
# -*- coding: utf-8 -*-
"""A module."""

DOCUMENTATION = r'''
---
module: ping
short_description: Try to connect to host
version_added: historical
options:
  data:
    description: Data to return.
    type: str
    default: pong
    version_added: 1.1.0
  nested:
    description: Nested.
    type: dict
    suboptions:
      inner:
        description: Inner.
        required: yes
'''

EXAMPLES = '''
- name: ping
  acme.demo.ping:
'''

RETURN = '''
ping:
  description: Value provided with the data parameter.
  returned: success
  type: str
  sample: pong
'''

def main():
    DOCUMENTATION = "not module level"
`

func defaultInfo() map[string]any {
	return map[string]any{
		"namespace": "acme", "name": "demo", "version": "1.2.3",
		"authors": []any{"Acme <dev@example.com>"}, "readme": "README.md", "tags": []any{"tools"},
		"description": "A demo", "license": []any{"GPL-3.0-or-later"}, "license_file": nil,
		"dependencies": map[string]any{"acme.base": ">=1.0.0,<2.0.0"},
		"repository":   "https://example.com/acme/demo", "documentation": nil,
		"homepage": "https://example.com", "issues": nil,
	}
}

func (b build) bytes(t testing.TB) []byte {
	t.Helper()
	files := b.files
	if files == nil {
		files = baseFiles()
	}
	bodies := map[string]string{}
	for _, f := range files {
		if f.link == "" && !f.dir && f.hard == "" {
			bodies[f.name] = f.body
		}
	}
	// Every path and its parents, as FILES.json lists them.
	seen := map[string]bool{}
	var names []string
	for _, f := range files {
		for p := f.name; p != "." && p != "" && !seen[p]; p = path.Dir(p) {
			seen[p] = true
			names = append(names, p)
		}
	}
	sort.Strings(names)
	isDir := map[string]bool{}
	for _, n := range names {
		isDir[path.Dir(n)] = true
	}
	for _, f := range files {
		if f.dir {
			isDir[f.name] = true
		}
	}
	entries := []any{map[string]any{"name": ".", "ftype": "dir", "chksum_type": nil, "chksum_sha256": nil, "format": 1}}
	for _, n := range names {
		if b.unlisted[n] {
			continue
		}
		if isDir[n] {
			entries = append(entries, map[string]any{"name": n, "ftype": "dir", "chksum_type": nil, "chksum_sha256": nil, "format": 1})
			continue
		}
		body := bodies[n]
		for _, f := range files {
			if f.name == n && f.link != "" {
				body = bodies[path.Join(path.Dir(n), f.link)]
			}
			if f.name == n && f.hard != "" {
				body = bodies[f.hard]
			}
		}
		entries = append(entries, map[string]any{"name": n, "ftype": "file", "chksum_type": "sha256", "chksum_sha256": sum(body), "format": 1})
	}
	if b.fixFiles != nil {
		entries = b.fixFiles(entries)
	}
	filesJSON := b.rawFiles
	if filesJSON == nil {
		filesJSON = mustJSON(t, map[string]any{"files": entries, "format": 1})
	}
	info := defaultInfo()
	for k, v := range b.info {
		if v == nil {
			delete(info, k)
		} else {
			info[k] = v
		}
	}
	mani := b.rawMani
	if mani == nil {
		mani = mustJSON(t, map[string]any{
			"collection_info": info,
			"file_manifest_file": map[string]any{"name": "FILES.json", "ftype": "file", "chksum_type": "sha256",
				"chksum_sha256": sum(string(filesJSON)), "format": 1},
			"format": 1,
		})
	}
	var all []tfile
	if !b.noMani {
		all = append(all, tfile{name: "MANIFEST.json", body: string(mani)})
	}
	if !b.noFiles {
		all = append(all, tfile{name: "FILES.json", body: string(filesJSON)})
	}
	for _, n := range names {
		if isDir[n] {
			all = append(all, tfile{name: n, dir: true})
		}
	}
	for _, f := range files {
		if !f.dir {
			all = append(all, f)
		}
	}
	return tarGz(t, append(all, b.extra...))
}

// tarGz writes entries as they are, in order.
func tarGz(t testing.TB, entries []tfile) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range entries {
		h := &tar.Header{Name: f.name, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(f.body)), Format: tar.FormatPAX}
		switch {
		case f.typ != 0:
			h.Typeflag, h.Size = f.typ, 0
		case f.dir:
			h.Typeflag, h.Name, h.Mode, h.Size = tar.TypeDir, strings.TrimSuffix(f.name, "/")+"/", 0o755, 0
		case f.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, f.link, 0
		case f.hard != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeLink, f.hard, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(f.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
