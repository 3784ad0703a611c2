package treeinfo

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestCorrupted(t *testing.T) {
	t.Parallel()
	const head = "[header]\ntype = productmd.treeinfo\nversion = 1.2\n[release]\nname = R\nshort = R\nversion = 1\n" +
		"[tree]\narch = x86_64\nbuild_timestamp = 1\nplatforms = x86_64\nvariants = Main\n" // 12 lines
	const variant = "[variant-Main]\nid = Main\nuid = Main\nname = Main\ntype = variant\nrepository = .\npackages = Packages\n" // 13-19
	for _, c := range []struct {
		name, in string
		kind     error
		want     string
	}{
		{"escaping image", head + variant + "[images-x86_64]\nkernel = ../x\n", ErrUnsafePath,
			`.treeinfo:21: [images-x86_64] kernel: path "../x" escapes the tree`},
		{"escaping deeper", head + variant + "[images-x86_64]\nkernel = images/../../x\n", ErrUnsafePath,
			`.treeinfo:21: [images-x86_64] kernel: path "images/../../x" escapes the tree`},
		{"absolute image", head + variant + "[images-xen]\ninitrd = /boot/initrd.img\n", ErrUnsafePath,
			`.treeinfo:21: [images-xen] initrd: path "/boot/initrd.img" is absolute`},
		{"dot segment", head + variant + "[images-xen]\ninitrd = a/./b\n", ErrUnsafePath,
			`.treeinfo:21: [images-xen] initrd: relative path "a/./b": contains a "." segment`},
		{"backslash", head + variant + "[stage2]\nmainimage = LiveOS\\squashfs.img\n", ErrUnsafePath,
			`.treeinfo:21: [stage2] mainimage: relative path "LiveOS\\squashfs.img": contains a backslash at byte 6`},
		{"escaping checksum", head + variant + "[checksums]\n../etc/passwd = sha256:" + strings.Repeat("a", 64) + "\n", ErrUnsafePath,
			`.treeinfo:21: [checksums] ../etc/passwd: path "../etc/passwd" escapes the tree`},
		{"absolute repomd checksum", head + variant + "[checksums]\n/repodata/repomd.xml = sha256:" + strings.Repeat("a", 64) + "\n", ErrUnsafePath,
			`.treeinfo:21: [checksums] /repodata/repomd.xml: path "/repodata/repomd.xml" is absolute`},
		{"absolute repository", head + strings.Replace(variant, "repository = .", "repository = /srv/os", 1), ErrUnsafePath,
			`.treeinfo:18: [variant-Main] repository: path "/srv/os" is absolute`},
		{"url repository", head + strings.Replace(variant, "repository = .", "repository = http://evil/os", 1), ErrUnsafePath,
			`.treeinfo:18: [variant-Main] repository: path "http://evil/os" is a URL, not a relative path`},
		{"bad checksum type", head + variant + "[checksums]\nimages/a = crc32:deadbeef\n", ErrInvalid,
			`.treeinfo:21: [checksums] images/a: unknown checksum type "crc32"`},
		{"short digest", head + variant + "[checksums]\nimages/a = sha256:abc\n", ErrInvalid,
			`.treeinfo:21: [checksums] images/a: "abc" is not a sha256 digest (64 hex digits)`},
		{"bare bad digest", head + variant + "[checksums]\nimages/a = xyz\n", ErrInvalid,
			`.treeinfo:21: [checksums] images/a: "xyz" is not TYPE:HEX`},
		{"not INI", "kernel = images/vmlinuz\n", ErrSyntax,
			`.treeinfo:1: "kernel = images/vmlinuz" comes before any [section]; the file is not INI`},
		{"no delimiter", "[general]\njust words\n", ErrSyntax, `.treeinfo:2: [general] "just words" is not a key = value line`},
		{"empty key", "[general]\n= v\n", ErrSyntax, `.treeinfo:2: [general] empty key`},
		{"bad section header", "[general\n", ErrSyntax, `.treeinfo:1: malformed section header "[general"`},
		{"duplicate section", head + variant + "[tree]\n", ErrSyntax, `.treeinfo:20: section [tree] repeats the one on line 8`},
		{"duplicate key", "[general]\narch = a\narch = b\n", ErrSyntax, `.treeinfo:3: [general] arch: key repeats the one on line 2`},
		{"continuation line", "[general]\nfamily = a\n  b\n", ErrSyntax, `.treeinfo:3: indented line continues a value; multi-line values are not supported`},
		{"NUL", "[general]\nfamily = a\x00\n", ErrSyntax, `.treeinfo:2: contains a NUL byte`},
		{"not UTF-8", "[general]\nfamily = \xff\n", ErrSyntax, `.treeinfo:2: is not valid UTF-8`},
		{"empty file", "", ErrInvalid, `.treeinfo: neither [header] nor [general]: not a treeinfo`},
		{"html", "\n  <!DOCTYPE html><html>Not found</html>", ErrHTML, `.treeinfo:1: file is HTML, not INI`},
		{"header version 2", strings.Replace(head, "version = 1.2", "version = 2.0", 1), ErrUnsupported,
			`.treeinfo:3: [header] version: format 2.0 is not supported (1.x is)`},
		{"header version junk", strings.Replace(head, "version = 1.2", "version = one", 1), ErrInvalid,
			`.treeinfo:3: [header] version: "one" is not MAJOR.MINOR`},
		{"wrong type", strings.Replace(head, "productmd.treeinfo", "productmd.composeinfo", 1), ErrInvalid,
			`.treeinfo:2: [header] type: "productmd.composeinfo" is not productmd.treeinfo`},
		{"no release", "[header]\nversion = 1.0\n", ErrInvalid, `.treeinfo: [release] section is missing`},
		{"no release name", strings.Replace(head, "name = R\n", "", 1), ErrInvalid, `.treeinfo:4: [release] name: required key is missing`},
		{"no tree", "[header]\nversion = 1.0\n[release]\nname = R\nversion = 1\n", ErrInvalid, `.treeinfo: [general] section is missing`},
		{"bad timestamp", strings.Replace(head, "build_timestamp = 1", "build_timestamp = yesterday", 1), ErrInvalid,
			`.treeinfo:10: [tree] build_timestamp: "yesterday" is not a timestamp`},
		{"NaN timestamp", strings.Replace(head, "build_timestamp = 1", "build_timestamp = NaN", 1), ErrInvalid,
			`.treeinfo:10: [tree] build_timestamp: "NaN" is not a timestamp`},
		{"layered without base", strings.Replace(head, "version = 1\n", "version = 1\nis_layered = true\n", 1), ErrInvalid,
			`.treeinfo: [base_product] section is missing`},
		{"bad is_layered", strings.Replace(head, "version = 1\n", "version = 1\nis_layered = perhaps\n", 1), ErrInvalid,
			`.treeinfo:8: [release] is_layered: "perhaps" is not a boolean`},
		{"media not int", head + variant + "[media]\ndiscnum = one\ntotaldiscs = 1\n", ErrInvalid,
			`.treeinfo:21: [media] discnum: "one" is not an integer`},
		{"variant without section", head, ErrInvalid, `.treeinfo:12: [tree] variants: lists "Main" but there is no section [variant-Main]`},
		{"variant without id", head + strings.Replace(variant, "id = Main\n", "", 1), ErrInvalid, `.treeinfo:13: [variant-Main] id: required key is missing`},
		{"variant id escapes", head + strings.Replace(variant, "id = Main", "id = ..", 1), ErrInvalid,
			`.treeinfo:14: [variant-Main] id: ".." is not a valid ID ([A-Za-z0-9._-]+, not . or ..)`},
		{"variant id with slash", head + strings.Replace(variant, "id = Main", "id = a/b", 1), ErrInvalid,
			`.treeinfo:14: [variant-Main] id: "a/b" is not a valid ID ([A-Za-z0-9._-]+, not . or ..)`},
		{"uid mismatch", head + strings.Replace(variant, "uid = Main", "uid = Other", 1), ErrInvalid,
			`.treeinfo:15: [variant-Main] uid: "Other" does not match the section name`},
		{"unknown type", head + strings.Replace(variant, "type = variant", "type = layer", 1), ErrInvalid,
			`.treeinfo:17: [variant-Main] type: "layer" is not variant, optional or addon`},
		{"top-level addon", head + strings.Replace(variant, "type = variant", "type = addon", 1), ErrInvalid,
			`.treeinfo:17: [variant-Main] type: a variant listed in [tree] cannot be an addon`},
		{"no repository", head + strings.Replace(variant, "repository = .\n", "", 1), ErrInvalid,
			`.treeinfo:13: [variant-Main] repository: required key is missing`},
		{"addon listed twice", head + strings.Replace(variant, "packages = Packages", "addons = Main-A,Main-A", 1) +
			"[addon-Main-A]\nid = A\nuid = Main-A\nname = A\ntype = addon\nrepository = a\n", ErrInvalid,
			`.treeinfo:19: [variant-Main] addons: lists "Main-A", already read from [addon-Main-A]`},
		{"variant lists itself", head + strings.Replace(variant, "packages = Packages", "addons = Main", 1), ErrInvalid,
			`.treeinfo:19: [variant-Main] addons: lists "Main", already read from [variant-Main]`},
		{"two repositories in one directory", strings.Replace(head, "variants = Main", "variants = Main,Other", 1) +
			strings.Replace(variant, "repository = .", "repository = x", 1) +
			"[variant-Other]\nid = Main\nuid = Other\nname = O\ntype = variant\nrepository = y\n", ErrInvalid,
			`.treeinfo:25: [variant-Other] repository: would be stored in "Main", as [variant-Main] already is`},
		{"image twice for a platform", head + variant + "[images-x86_64]\nkernel = a\n[images-x86_64-x86_64]\nkernel = b\n", ErrInvalid,
			`.treeinfo:23: [images-x86_64-x86_64] kernel: image already listed for platform "x86_64" in [images-x86_64]`},
		{"legacy without family", "[general]\narch = x86_64\nversion = 7\n", ErrInvalid, `.treeinfo:1: [general] family: required key is missing`},
		{"legacy bad variant", "[general]\nfamily = F\nversion = 7\narch = x86_64\nvariant = ../up\n", ErrInvalid,
			`.treeinfo:5: [general] variant: "../up" is not a valid variant UID`},
		{"legacy bad discnum", "[general]\nfamily = F\nversion = 7\narch = x86_64\ndiscnum = x\n", ErrInvalid,
			`.treeinfo:5: [general] discnum: "x" is not an integer`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.in), ".treeinfo")
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, c.kind) || err.Error() != c.want {
				t.Errorf("got  %v\nwant %s (%v)", err, c.want, c.kind)
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	t.Parallel()
	in := "[general]\n" + strings.Repeat("# padding\n", MaxSize/10+1)
	_, err := Parse(strings.NewReader(in), "treeinfo")
	if !errors.Is(err, ErrTooLarge) || err.Error() != "treeinfo: file is larger than 4194304 bytes" {
		t.Fatalf("got %v", err)
	}
	// It reads no further than the limit.
	_, err = Parse(endless{}, "treeinfo")
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("endless: %v", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '#'
	}
	return len(p), nil
}

// TestLenientINI: what configparser accepts and real files contain.
func TestLenientINI(t *testing.T) {
	t.Parallel()
	in := "\ufeff; comment\n# comment\n[general]\r\n  arch = x86_64\r\nfamily: Fedora\nversion=17\nvariant =\n\n[images-xen]\nkernel = images/pxeboot/vmlinuz\n"
	tree, err := Parse(strings.NewReader(in), ".treeinfo")
	if err != nil {
		t.Fatal(err)
	}
	if tree.ReleaseName != "Fedora" || tree.Arch != "x86_64" || tree.ReleaseVersion != "17" || len(tree.Variants) != 1 ||
		tree.Variants[0].UID != "Fedora" || tree.Images[0].Platforms != "xen" || !bytes.Contains(write(t, tree), []byte("[images-xen]\n")) {
		t.Errorf("%+v", tree)
	}
}
