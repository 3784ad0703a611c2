// Package testtree serves tests a kickstart tree whose variants live in other
// directories, built over the third-party test data (testdata/, testfiles.Path()) without
// copying it:
//
//	<prefix>.treeinfo              the tree below (productmd 1.2)
//	<prefix>...                    yum-katello/zoo: the main variant Zoo, its images
//	<prefix>addons/edge/...        rpm-edge-cases/repo_02: addon Edge of Zoo (two packages, metadata only)
//	../yum-katello/zoo2 (from the tree)  variant Savanna, outside the tree as AppStream
//	                               is outside a RHEL BaseOS tree
//
// Everything else is the test data as it is, so Savanna's repository is served only
// when the handler is mounted at the data's root.
package testtree

import (
	"net/http"
	"path/filepath"
)

// Treeinfo is the tree's .treeinfo.
const Treeinfo = `[header]
type = productmd.treeinfo
version = 1.2

[release]
name = Zoo Linux
short = Zoo
version = 1

[tree]
arch = x86_64
build_timestamp = 1700000000
platforms = x86_64
variants = Savanna,Zoo

[images-x86_64]
kernel = images/test1.img

[checksums]
images/test1.img = sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

[variant-Zoo]
addons = Zoo-Edge
id = Zoo
name = Zoo
packages = .
repository = .
type = variant
uid = Zoo

[addon-Zoo-Edge]
id = Edge
name = Edge
packages = addons/edge
parent = Zoo
repository = addons/edge
type = addon
uid = Zoo-Edge

[variant-Savanna]
id = Savanna
name = Savanna
packages = ../yum-katello/zoo2
repository = ../yum-katello/zoo2
type = variant
uid = Savanna
`

// Handler serves the test data at data (testfiles.Path()) with the tree mounted at
// prefix ("/tree/").
func Handler(data, prefix string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(data)))
	mux.HandleFunc(prefix+".treeinfo", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(Treeinfo))
	})
	mux.Handle(prefix+"addons/edge/", http.StripPrefix(prefix+"addons/edge/", http.FileServer(http.Dir(filepath.Join(data, "rpm-edge-cases/repo_02")))))
	mux.Handle(prefix, http.StripPrefix(prefix, http.FileServer(http.Dir(filepath.Join(data, "yum-katello/zoo")))))
	return mux
}
