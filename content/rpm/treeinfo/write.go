package treeinfo

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Write writes t as a productmd 1.2 .treeinfo with the [general] section older tools
// read, sections and keys sorted as productmd writes them. Variants and addons get
// their local paths (Repository, Packages), as Pulp publishes them. rewrite, when not
// nil, is asked for every path written (Ref.Local holds the path Write would write)
// and returns the one to write instead.
func Write(w io.Writer, t *DistributionTree, rewrite func(Ref) string) error {
	if rewrite == nil {
		rewrite = func(r Ref) string { return r.Local }
	}
	var out iniOut
	re := func(kind Kind, sec, key, p string) string {
		return rewrite(Ref{Kind: kind, Section: sec, Key: key, Path: p, Local: p})
	}

	out.set("header", "type", "productmd.treeinfo")
	out.set("header", "version", HeaderVersion)

	out.set("release", "name", t.ReleaseName)
	out.set("release", "short", t.ReleaseShort)
	out.set("release", "version", t.ReleaseVersion)
	if t.ReleaseIsLayered {
		out.set("release", "is_layered", "true")
		if t.BaseProductName == nil || t.BaseProductShort == nil || t.BaseProductVersion == nil {
			return fmt.Errorf("write treeinfo: the release is layered but the base product is incomplete")
		}
		out.set("base_product", "name", *t.BaseProductName)
		out.set("base_product", "short", *t.BaseProductShort)
		out.set("base_product", "version", *t.BaseProductVersion)
	}

	platforms := map[string]bool{t.Arch: true}
	for _, p := range t.Platforms {
		platforms[p] = true
	}
	for _, img := range t.Images {
		for _, p := range strings.Split(img.Platforms, ", ") {
			if !validID(p) {
				return fmt.Errorf("write treeinfo: image %s has an invalid platform %q", img.Name, p)
			}
			sec := "images-" + p
			platforms[p] = true
			out.set(sec, img.Name, re(KindImage, sec, img.Name, img.Path))
		}
	}
	platformList := strings.Join(slices.Sorted(maps.Keys(platforms)), ",")
	ts := strconv.FormatFloat(t.BuildTimestamp, 'f', -1, 64)
	out.set("tree", "arch", t.Arch)
	out.set("tree", "build_timestamp", ts)
	out.set("tree", "platforms", platformList)

	var top []string
	children := map[string][]string{}
	for _, v := range t.Variants {
		sec := "variant-" + v.UID
		out.set(sec, "id", v.VariantID)
		out.set(sec, "uid", v.UID)
		out.set(sec, "name", v.Name)
		out.set(sec, "type", v.Type)
		out.set(sec, "repository", re(KindRepository, sec, "repository", v.Repository))
		out.set(sec, "packages", re(KindPackages, sec, "packages", v.Packages))
		for _, o := range v.optionalPaths() {
			if *o.dst != nil {
				out.set(sec, o.key, **o.dst)
			}
		}
		if v.Parent == "" {
			top = append(top, v.UID)
		} else {
			out.set(sec, "parent", v.Parent)
			children[v.Parent] = append(children[v.Parent], v.UID)
		}
	}
	for _, a := range t.Addons {
		sec := "addon-" + a.UID
		out.set(sec, "id", a.AddonID)
		out.set(sec, "uid", a.UID)
		out.set(sec, "name", a.Name)
		out.set(sec, "type", a.Type)
		out.set(sec, "repository", re(KindRepository, sec, "repository", a.Repository))
		out.set(sec, "packages", re(KindPackages, sec, "packages", a.Packages))
		out.set(sec, "parent", a.Parent)
		children[a.Parent] = append(children[a.Parent], a.UID)
	}
	for parent, uids := range children {
		if !slices.ContainsFunc(t.Variants, func(v Variant) bool { return v.UID == parent }) {
			return fmt.Errorf("write treeinfo: %s names parent variant %q, which the tree lacks", uids[0], parent)
		}
		slices.Sort(uids)
		out.set("variant-"+parent, "addons", strings.Join(uids, ","))
	}
	slices.Sort(top)
	out.set("tree", "variants", strings.Join(top, ","))

	for _, c := range t.Checksums {
		out.set("checksums", re(KindChecksum, "checksums", c.Path, c.Path), c.Checksum)
	}
	if t.InstImage != nil {
		out.set("stage2", "instimage", re(KindStage2, "stage2", "instimage", *t.InstImage))
	}
	if t.MainImage != nil {
		out.set("stage2", "mainimage", re(KindStage2, "stage2", "mainimage", *t.MainImage))
	}
	if t.DiscNum != nil {
		out.set("media", "discnum", strconv.FormatInt(*t.DiscNum, 10))
	}
	if t.TotalDiscs != nil {
		out.set("media", "totaldiscs", strconv.FormatInt(*t.TotalDiscs, 10))
	}

	// [general], for tools that predate productmd; productmd writes the same keys.
	const g = "general"
	out.set(g, "; WARNING.0", "This section provides compatibility with pre-productmd treeinfos.")
	out.set(g, "; WARNING.1", "Read productmd documentation for details about new format.")
	out.set(g, "name", strings.TrimSpace(t.ReleaseName+" "+t.ReleaseVersion))
	out.set(g, "family", t.ReleaseName)
	out.set(g, "version", t.ReleaseVersion)
	out.set(g, "arch", t.Arch)
	out.set(g, "platforms", platformList)
	out.set(g, "timestamp", strconv.FormatInt(int64(t.BuildTimestamp), 10))
	out.set(g, "variants", strings.Join(top, ","))
	if main := t.mainVariant(top); main != nil {
		sec := "variant-" + main.UID
		out.set(g, "variant", main.UID)
		out.set(g, "packagedir", re(KindPackages, sec, "packages", main.Packages))
		out.set(g, "repository", re(KindRepository, sec, "repository", main.Repository))
	}
	if out.err != nil {
		return out.err
	}
	return out.writeTo(w)
}

// mainVariant is the variant [general] describes: MainVariant when it is a top-level
// variant, else the first by UID, as productmd picks it.
func (t *DistributionTree) mainVariant(top []string) *Variant {
	uid := t.MainVariant
	if !slices.Contains(top, uid) {
		if len(top) == 0 {
			return nil
		}
		uid = top[0]
	}
	for i := range t.Variants {
		if t.Variants[i].UID == uid {
			return &t.Variants[i]
		}
	}
	return nil
}

// iniOut collects sections and writes them sorted by name, keys sorted.
type iniOut struct {
	sections map[string]map[string]string
	err      error
}

func (o *iniOut) set(sec, key, value string) {
	if o.err != nil {
		return
	}
	if o.sections == nil {
		o.sections = map[string]map[string]string{}
	}
	switch {
	case sec == "" || strings.ContainsAny(sec, "]\r\n") || strings.TrimSpace(sec) != sec:
		o.err = fmt.Errorf("write treeinfo: section name %q cannot be written", sec)
	case key == "" || strings.ContainsAny(key, "=:\r\n\x00") || strings.TrimSpace(key) != key ||
		key[0] == '[' || (key[0] == '#' || key[0] == ';') && !strings.HasPrefix(key, "; WARNING"):
		o.err = fmt.Errorf("write treeinfo: [%s] key %q cannot be written", sec, key)
	case strings.ContainsAny(value, "\r\n\x00") || strings.TrimSpace(value) != value:
		o.err = fmt.Errorf("write treeinfo: [%s] %s: value %q cannot be written", sec, key, value)
	}
	if o.sections[sec] == nil {
		o.sections[sec] = map[string]string{}
	}
	if _, dup := o.sections[sec][key]; dup && o.err == nil {
		o.err = fmt.Errorf("write treeinfo: [%s] %s is written twice", sec, key)
	}
	o.sections[sec][key] = value
}

func (o *iniOut) writeTo(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for i, sec := range slices.Sorted(maps.Keys(o.sections)) {
		if i > 0 {
			bw.WriteString("\n")
		}
		bw.WriteString("[" + sec + "]\n")
		for _, k := range slices.Sorted(maps.Keys(o.sections[sec])) {
			bw.WriteString(k + " = " + o.sections[sec][k] + "\n")
		}
	}
	return bw.Flush()
}
