package treeinfo

import (
	"path"
	"strings"
)

// Kind says what a Ref names.
type Kind string

// The kinds of Ref.
const (
	KindImage      Kind = "image"      // a boot image of [images-*]
	KindStage2     Kind = "stage2"     // [stage2] mainimage or instimage
	KindChecksum   Kind = "checksum"   // a file [checksums] lists and nothing else names
	KindRepository Kind = "repository" // a variant's or addon's repository
	KindPackages   Kind = "packages"   // a variant's or addon's packages (Write only)
)

// Ref is one path a tree names, and where it came from.
type Ref struct {
	Kind    Kind
	Section string // "images-x86_64", "stage2", "checksums", "variant-AppStream", ...
	Key     string // "kernel", "mainimage", the path itself for [checksums], "repository"
	// Path is the path relative to the remote tree, where sync fetches it from. Only a
	// repository's may climb out of the tree.
	Path string
	// Local is where it lands in the synced tree: Path, except for repositories.
	Local string
	// Checksum is "type:hex" from [checksums] when it lists the file (for a
	// repository, its repodata/repomd.xml), else "".
	Checksum string
}

// String names the reference the way the file does, for error messages.
func (r Ref) String() string {
	if r.Section == "checksums" {
		return "[checksums] " + r.Path
	}
	return "[" + r.Section + "] " + r.Key + " = " + r.Path
}

// Files lists every file and repository the tree names, each once: images, stage2
// images, the other checksummed files (repodata/repomd.xml files excepted: they come
// with their repositories), then the repositories, the main one (Local ".") included.
// Sync fetches the files into the tree at Local and fails naming any that is missing.
func (t *DistributionTree) Files() []Ref {
	sums := make(map[string]string, len(t.Checksums))
	for _, c := range t.Checksums {
		sums[c.Path] = c.Checksum
	}
	var refs []Ref
	seen := map[string]bool{}
	file := func(kind Kind, sec, key, p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		refs = append(refs, Ref{Kind: kind, Section: sec, Key: key, Path: p, Local: p, Checksum: sums[p]})
	}
	for _, img := range t.Images {
		platform, _, _ := strings.Cut(img.Platforms, ", ")
		file(KindImage, "images-"+platform, img.Name, img.Path)
	}
	if t.InstImage != nil {
		file(KindStage2, "stage2", "instimage", *t.InstImage)
	}
	if t.MainImage != nil {
		file(KindStage2, "stage2", "mainimage", *t.MainImage)
	}
	for _, c := range t.Checksums {
		if !isRepomd(c.Path) {
			file(KindChecksum, "checksums", c.Path, c.Path)
		}
	}
	repo := func(sec, remote, local string) {
		if seen["repository:"+local] {
			return
		}
		seen["repository:"+local] = true
		refs = append(refs, Ref{Kind: KindRepository, Section: sec, Key: "repository", Path: remote,
			Local: local, Checksum: sums[path.Join(remote, "repodata/repomd.xml")]})
	}
	for _, v := range t.Variants {
		repo("variant-"+v.UID, v.RemoteRepository, v.Repository)
	}
	for _, a := range t.Addons {
		repo("addon-"+a.UID, a.RemoteRepository, a.Repository)
	}
	return refs
}
