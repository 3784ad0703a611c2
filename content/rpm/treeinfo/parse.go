package treeinfo

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
)

// MaxSize is the largest .treeinfo accepted, in bytes; real ones are a few KiB.
const MaxSize = 4 << 20

// HeaderVersion is the format version Write produces, and the one Pulp reports for
// every tree it has synced, whatever the remote file said.
const HeaderVersion = "1.2"

// Main is the repository path of a tree's own repository.
const Main = "."

// packagesDir is where Pulp publishes a repository's packages.
const packagesDir = "Packages"

// Parse reads a .treeinfo; name (".treeinfo" or "treeinfo") is used in errors.
func Parse(r io.Reader, name string) (*DistributionTree, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, &Error{File: name, Kind: ErrSyntax, Msg: "read: " + err.Error()}
	}
	if len(data) > MaxSize {
		return nil, &Error{File: name, Kind: ErrTooLarge, Msg: fmt.Sprintf("file is larger than %d bytes", MaxSize)}
	}
	if t := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\ufeff")), " \t\r\n"); len(t) > 0 && t[0] == '<' {
		return nil, &Error{File: name, Line: 1, Kind: ErrHTML, Msg: "file is HTML, not INI"}
	}
	ini, err := parseINI(name, data)
	if err != nil {
		return nil, err
	}
	b := &builder{ini: ini, t: &DistributionTree{HeaderVersion: HeaderVersion, BuildTimestamp: -1,
		Addons: []Addon{}, Checksums: []Checksum{}, Images: []Image{}, Variants: []Variant{}}}
	if ini.section("header") == nil && ini.section("release") == nil {
		err = b.legacy()
	} else {
		err = b.productmd()
	}
	if err != nil {
		return nil, err
	}
	if err := b.common(); err != nil {
		return nil, err
	}
	return b.t, nil
}

// builder fills a DistributionTree from an iniFile.
type builder struct {
	ini       *iniFile
	t         *DistributionTree
	platforms map[string]bool
	seen      map[string]string // variant or addon UID -> its section
	local     map[string]string // local repository directory -> section using it
}

func (b *builder) errf(line int, sec, key string, kind error, format string, args ...any) *Error {
	return &Error{File: b.ini.name, Line: line, Section: sec, Key: key, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// need returns a key's value, or an error naming the section and key.
func (b *builder) need(sec, key string) (entry, error) {
	s := b.ini.section(sec)
	if s == nil {
		return entry{}, b.errf(0, sec, "", ErrInvalid, "section is missing")
	}
	e, ok := s.get(key)
	if !ok {
		return entry{}, b.errf(s.line, sec, key, ErrInvalid, "required key is missing")
	}
	return e, nil
}

// productmd reads the sections of productmd's formats 1.0 to 1.2.
func (b *builder) productmd() error {
	if h := b.ini.section("header"); h != nil {
		v, err := b.need("header", "version")
		if err != nil {
			return err
		}
		major, minor, ok := strings.Cut(v.value, ".")
		if !ok || !isDigits(major) || !isDigits(minor) {
			return b.errf(v.line, "header", "version", ErrInvalid, "%q is not MAJOR.MINOR", v.value)
		}
		if major != "1" {
			return b.errf(v.line, "header", "version", ErrUnsupported, "format %s is not supported (1.x is)", v.value)
		}
		if minor != "0" {
			typ, err := b.need("header", "type")
			if err != nil {
				return err
			}
			if typ.value != "productmd.treeinfo" {
				return b.errf(typ.line, "header", "type", ErrInvalid, "%q is not productmd.treeinfo", typ.value)
			}
		}
	}
	if err := b.release(); err != nil {
		return err
	}
	treeSec := "tree"
	if b.ini.section("tree") == nil {
		treeSec = "general"
	}
	arch, err := b.need(treeSec, "arch")
	if err != nil {
		return err
	}
	b.t.Arch = arch.value
	if p, ok := b.ini.section(treeSec).get("platforms"); ok {
		b.addPlatforms(p.value)
	}
	if g, ok := b.ini.section("general").get("timestamp"); ok {
		if b.t.BuildTimestamp, err = b.timestamp(g, "general"); err != nil {
			return err
		}
	}
	if b.ini.section("tree") != nil {
		ts, err := b.need("tree", "build_timestamp")
		if err != nil {
			return err
		}
		if b.t.BuildTimestamp, err = b.timestamp(ts, "tree"); err != nil {
			return err
		}
		if vs, ok := b.ini.section("tree").get("variants"); ok {
			for _, uid := range splitList(vs.value) {
				if err := b.variant(uid, "", "tree", vs); err != nil {
					return err
				}
			}
		}
	}
	if m := b.ini.section("media"); m != nil {
		for _, f := range []struct {
			key string
			dst **int64
		}{{"discnum", &b.t.DiscNum}, {"totaldiscs", &b.t.TotalDiscs}} {
			if e, ok := m.get(f.key); ok {
				n, err := b.integer(e, "media")
				if err != nil {
					return err
				}
				*f.dst = &n
			}
		}
	}
	if v, ok := b.ini.section("general").get("variant"); ok {
		b.t.MainVariant = v.value
	}
	return nil
}

func (b *builder) release() error {
	name, err := b.need("release", "name")
	if err != nil {
		return err
	}
	version, err := b.need("release", "version")
	if err != nil {
		return err
	}
	rel := b.ini.section("release")
	b.t.ReleaseName, b.t.ReleaseVersion, b.t.ReleaseShort = name.value, version.value, name.value
	if s, ok := rel.get("short"); ok {
		b.t.ReleaseShort = s.value
	}
	if l, ok := rel.get("is_layered"); ok {
		v, ok := parseBool(l.value)
		if !ok {
			return b.errf(l.line, "release", "is_layered", ErrInvalid, "%q is not a boolean", l.value)
		}
		b.t.ReleaseIsLayered = v
	}
	if !b.t.ReleaseIsLayered {
		return nil // productmd, and so Pulp, ignores [base_product] then
	}
	for _, f := range []struct {
		key string
		dst **string
	}{{"name", &b.t.BaseProductName}, {"short", &b.t.BaseProductShort}, {"version", &b.t.BaseProductVersion}} {
		e, err := b.need("base_product", f.key)
		if err != nil {
			return err
		}
		v := e.value
		*f.dst = &v
	}
	return nil
}

// variant reads the variant or addon uid and its children; parent is the UID of the
// variant listing it ("" for [tree] variants), ref the entry listing it.
func (b *builder) variant(uid, parent, refSec string, ref entry) error {
	if !validID(uid) {
		return b.errf(ref.line, refSec, ref.key, ErrInvalid, "%q is not a valid variant UID", uid)
	}
	sec := "variant-" + uid
	if parent != "" && b.ini.section("addon-"+uid) != nil {
		sec = "addon-" + uid
	}
	s := b.ini.section(sec)
	if s == nil {
		return b.errf(ref.line, refSec, ref.key, ErrInvalid, "lists %q but there is no section [%s]", uid, sec)
	}
	if prev, dup := b.seen[uid]; dup {
		return b.errf(ref.line, refSec, ref.key, ErrInvalid, "lists %q, already read from [%s]", uid, prev)
	}
	if b.seen == nil {
		b.seen = map[string]string{}
	}
	b.seen[uid] = sec
	var f [4]string
	for i, key := range []string{"id", "uid", "name", "type"} {
		e, err := b.need(sec, key)
		if err != nil {
			return err
		}
		f[i] = e.value
	}
	id, name, typ := f[0], f[2], f[3]
	if e, _ := s.get("id"); !validID(id) {
		return b.errf(e.line, sec, "id", ErrInvalid, "%q is not a valid ID ([A-Za-z0-9._-]+, not . or ..)", id)
	}
	if e, _ := s.get("uid"); f[1] != uid {
		return b.errf(e.line, sec, "uid", ErrInvalid, "%q does not match the section name", f[1])
	}
	if typ != "variant" && typ != "optional" && typ != "addon" {
		e, _ := s.get("type")
		return b.errf(e.line, sec, "type", ErrInvalid, "%q is not variant, optional or addon", typ)
	}
	if typ == "addon" && parent == "" {
		e, _ := s.get("type")
		return b.errf(e.line, sec, "type", ErrInvalid, "a variant listed in [%s] cannot be an addon", refSec)
	}
	repo, err := b.need(sec, "repository")
	if err != nil {
		return err
	}
	if err := b.add(uid, id, name, typ, parent, sec, repo, s); err != nil {
		return err
	}
	if children, ok := s.get("addons"); ok {
		for _, c := range splitList(children.value) {
			if err := b.variant(c, uid, sec, children); err != nil {
				return err
			}
		}
	}
	return nil
}

// add appends the variant or addon read from section s (nil when there is none);
// repo is the entry giving its repository.
func (b *builder) add(uid, id, name, typ, parent, sec string, repo entry, s *section) error {
	remote, err := b.remotePath(repo.value, repo, sec)
	if err != nil {
		return err
	}
	if typ == "addon" {
		b.t.Addons = append(b.t.Addons, Addon{AddonID: id, UID: uid, Name: name, Type: typ,
			Packages: id + "/" + packagesDir, Repository: id, RemoteRepository: remote, Parent: parent})
		return b.claim(id, sec, repo.line)
	}
	v := Variant{VariantID: id, UID: uid, Name: name, Type: typ, RemoteRepository: remote, Parent: parent}
	if path.Clean(remote) == Main {
		v.Repository, v.Packages = Main, packagesDir
	} else {
		v.Repository, v.Packages = id, id+"/"+packagesDir
		if err := b.claim(id, sec, repo.line); err != nil {
			return err
		}
	}
	for _, o := range v.optionalPaths() {
		if e, ok := s.get(o.key); ok {
			val := e.value
			*o.dst = &val
		}
	}
	b.t.Variants = append(b.t.Variants, v)
	return nil
}

// claim records that the section's repository lands in directory dir of the tree.
func (b *builder) claim(dir, sec string, line int) error {
	if prev, dup := b.local[dir]; dup {
		return b.errf(line, sec, "repository", ErrInvalid, "would be stored in %q, as [%s] already is", dir, prev)
	}
	if b.local == nil {
		b.local = map[string]string{}
	}
	b.local[dir] = sec
	return nil
}

// common reads what both formats share: [checksums], [images-*] and [stage2].
func (b *builder) common() error {
	t := b.t
	if cs := b.ini.section("checksums"); cs != nil {
		for _, e := range cs.keys {
			p := e.key
			var err error
			if isRepomd(p) { // only recorded, never fetched: it may name a sibling repository
				_, err = b.remotePath(p, e, "checksums")
			} else {
				err = b.treePath(p, e, "checksums")
			}
			if err != nil {
				return err
			}
			sum, err := b.checksum(e)
			if err != nil {
				return err
			}
			t.Checksums = append(t.Checksums, Checksum{Path: p, Checksum: sum})
		}
		slices.SortFunc(t.Checksums, func(a, b Checksum) int { return strings.Compare(a.Path, b.Path) })
	}
	type key struct{ name, path string }
	images := map[key][]string{}
	byPlatform := map[[2]string]string{} // platform, name -> section, for duplicates
	for _, s := range b.ini.sections {
		platform, ok := strings.CutPrefix(s.name, "images-")
		if !ok {
			continue
		}
		if platform != t.Arch {
			platform = strings.TrimSuffix(platform, "-"+t.Arch)
		}
		if platform == "" || !validID(platform) {
			return b.errf(s.line, s.name, "", ErrInvalid, "%q is not a valid platform", platform)
		}
		b.addPlatforms(platform)
		for _, e := range s.keys {
			if err := b.treePath(e.value, e, s.name); err != nil {
				return err
			}
			if prev, dup := byPlatform[[2]string{platform, e.key}]; dup {
				return b.errf(e.line, s.name, e.key, ErrInvalid, "image already listed for platform %q in [%s]", platform, prev)
			}
			byPlatform[[2]string{platform, e.key}] = s.name
			k := key{e.key, e.value}
			images[k] = append(images[k], platform)
		}
	}
	for k, ps := range images {
		slices.Sort(ps)
		t.Images = append(t.Images, Image{Name: k.name, Path: k.path, Platforms: strings.Join(ps, ", ")})
	}
	slices.SortFunc(t.Images, func(a, b Image) int {
		return cmpOr(strings.Compare(a.Name, b.Name), strings.Compare(a.Path, b.Path))
	})
	if s := b.ini.section("stage2"); s != nil {
		for _, f := range []struct {
			key string
			dst **string
		}{{"instimage", &t.InstImage}, {"mainimage", &t.MainImage}} {
			if e, ok := s.get(f.key); ok {
				if err := b.treePath(e.value, e, "stage2"); err != nil {
					return err
				}
				v := e.value
				*f.dst = &v
			}
		}
	}
	b.addPlatforms(t.Arch)
	for p := range b.platforms {
		t.Platforms = append(t.Platforms, p)
	}
	slices.Sort(t.Platforms)
	slices.SortFunc(t.Variants, func(a, b Variant) int { return strings.Compare(a.UID, b.UID) })
	slices.SortFunc(t.Addons, func(a, b Addon) int { return strings.Compare(a.UID, b.UID) })
	return nil
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}
