package rpm

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"pith/content/rpm/treeinfo"
	"pith/meta"
)

// Distribution trees in Pulp's format: DistributionTreeResource holds the tree's
// fields, four more files its checksums, images, addons and variants (linked by the
// tree's upstream id), DistributionTreeRepositoryResource its sub-repositories (by
// name), whose units content_mapping.json lists under those names. The .treeinfo itself
// is not in the format: an import writes it again from the fields, as publish writes a
// tree, and keys the tree by the exporter's digest (pith's: the sha256 of the .treeinfo
// synced; pulp_rpm's: that sha256, a dash and its repository's id), so that it finds the
// tree a sync of the same .treeinfo made.

var treeColumns = []string{"header_version", "release_name", "release_short", "release_version", "release_is_layered",
	"base_product_name", "base_product_short", "base_product_version", "arch", "build_timestamp", "instimage", "mainimage",
	"discnum", "totaldiscs", "digest"}

// fileAdder is a PortOut that also exports a file of a unit that pith does not store
// as one of the unit's files (a ContentArtifact row and its artifact). pulp_rpm stores
// a tree's .treeinfo as a file of the tree, which its publish requires; pith keeps it in
// the tree's attrs.
type fileAdder interface {
	AddFile(u meta.Content, relativePath string, data []byte) error
}

// exportTree is a tree unit with its parsed .treeinfo and sub-repositories by path.
type exportTree struct {
	u    meta.Content
	t    *treeinfo.DistributionTree
	subs map[string]meta.Repository
}

// subName is the name of the sub-repository at path, "" for none.
func (t exportTree) subName(path string) string { return t.subs[path].Name }

// trees writes the distribution tree resources, each file after the other.
func (e *exporter) trees(ctx context.Context) error {
	var trees []exportTree
	w, err := e.contentResource(treeResource, treeColumns...)
	if err != nil {
		return err
	}
	err = e.each(ctx, DistributionTreeType, true, func(u meta.Content) error {
		var ta struct {
			Treeinfo string `json:"treeinfo"`
		}
		if err := json.Unmarshal(u.Attrs, &ta); err != nil {
			return fmt.Errorf("distribution tree %s: %w", u.PulpID, err)
		}
		t, err := treeinfo.Parse(strings.NewReader(ta.Treeinfo), ".treeinfo")
		if err != nil {
			return fmt.Errorf("distribution tree %s: %w", u.PulpID, err)
		}
		if fa, ok := e.x.(fileAdder); ok {
			if err := fa.AddFile(u, ".treeinfo", []byte(ta.Treeinfo)); err != nil {
				return fmt.Errorf("distribution tree %s: .treeinfo: %w", u.PulpID, err)
			}
		}
		trees = append(trees, exportTree{u: u, t: t, subs: e.subs[u.ID]})
		return w.Row(u, t.HeaderVersion, t.ReleaseName, t.ReleaseShort, t.ReleaseVersion, t.ReleaseIsLayered,
			t.BaseProductName, t.BaseProductShort, t.BaseProductVersion, t.Arch, pythonFloat(t.BuildTimestamp), t.InstImage, t.MainImage,
			t.DiscNum, t.TotalDiscs, u.NaturalKey)
	})
	if err == nil {
		err = w.Close()
	} else {
		w.Close()
	}
	if err != nil {
		return err
	}
	parts := []struct {
		name    string
		columns []string
		rows    func(t exportTree) [][]any
	}{
		{treeRepoResource, []string{"name", "pulp_type", "description", "user_hidden"}, func(t exportTree) [][]any {
			var out [][]any
			for _, ref := range t.t.Files() {
				if sub, ok := t.subs[ref.Local]; ok && ref.Kind == treeinfo.KindRepository {
					out = append(out, []any{sub.Name, sub.Type, sub.Description, true})
				}
			}
			return out
		}},
		{checksumResource, []string{"path", "checksum", "distribution_tree"}, func(t exportTree) [][]any {
			var out [][]any
			for _, c := range t.t.Checksums {
				out = append(out, []any{c.Path, c.Checksum, t.u.PulpID})
			}
			return out
		}},
		{imageResource, []string{"name", "path", "platforms", "distribution_tree"}, func(t exportTree) [][]any {
			var out [][]any
			for _, img := range t.t.Images {
				out = append(out, []any{img.Name, img.Path, img.Platforms, t.u.PulpID})
			}
			return out
		}},
		{addonResource, []string{"addon_id", "uid", "name", "type", "packages", "distribution_tree", "repository"}, func(t exportTree) [][]any {
			var out [][]any
			for _, a := range t.t.Addons {
				out = append(out, []any{a.AddonID, a.UID, a.Name, a.Type, a.Packages, t.u.PulpID, t.subName(a.Repository)})
			}
			return out
		}},
		{variantResource, []string{"variant_id", "uid", "name", "type", "packages", "source_packages", "source_repository",
			"debug_packages", "debug_repository", "identity", "distribution_tree", "repository"}, func(t exportTree) [][]any {
			var out [][]any
			for _, v := range t.t.Variants {
				out = append(out, []any{v.VariantID, v.UID, v.Name, v.Type, v.Packages, v.SourcePackages, v.SourceRepository,
					v.DebugPackages, v.DebugRepository, v.Identity, t.u.PulpID, t.subName(v.Repository)})
			}
			return out
		}},
	}
	for _, part := range parts {
		w, err := e.x.Resource(part.name, part.columns...)
		if err != nil {
			return fmt.Errorf("%s: %w", part.name, err)
		}
		for _, t := range trees {
			for _, row := range part.rows(t) {
				if err := w.Row(row...); err != nil {
					w.Close()
					return fmt.Errorf("%s: distribution tree %s: %w", part.name, t.u.PulpID, err)
				}
			}
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	return nil
}

// importTree is a tree being read, with the sub-repository names its variants and
// addons give, by their paths.
type importTree struct {
	upstream string
	digest   string
	t        treeinfo.DistributionTree
	subs     map[string]string
}

// trees reads the distribution tree resources and stores each tree, writing its
// .treeinfo from them, with its sub-repositories.
func (im *importer) trees(ctx context.Context) error {
	trees := map[string]*importTree{}
	var order []*importTree
	err := im.rows(treeResource, func(c *cells) error {
		it := &importTree{upstream: c.upstreamID(), digest: c.need("digest"), subs: map[string]string{}}
		t := &it.t
		t.ReleaseName, t.ReleaseShort, t.ReleaseVersion = c.str("release_name"), c.str("release_short"), c.str("release_version")
		t.ReleaseIsLayered = c.flag("release_is_layered")
		t.BaseProductName, t.BaseProductShort, t.BaseProductVersion = c.opt("base_product_name"), c.opt("base_product_short"), c.opt("base_product_version")
		t.Arch, t.InstImage, t.MainImage = c.need("arch"), c.opt("instimage"), c.opt("mainimage")
		if ts := c.str("build_timestamp"); ts != "" {
			f, err := strconv.ParseFloat(ts, 64)
			if err != nil {
				return fmt.Errorf("column build_timestamp: %q is not a number", ts)
			}
			t.BuildTimestamp = f
		}
		for col, dst := range map[string]**int64{"discnum": &t.DiscNum, "totaldiscs": &t.TotalDiscs} {
			if n, ok := c.int(col); ok {
				*dst = &n
			}
		}
		if c.err != nil {
			return c.err
		}
		if trees[it.upstream] != nil {
			return fmt.Errorf("column upstream_id: distribution tree %s is listed twice", it.upstream)
		}
		trees[it.upstream], order = it, append(order, it)
		return nil
	})
	if err != nil {
		return err
	}
	treeOf := func(c *cells) *importTree {
		id := c.need("distribution_tree")
		if c.err != nil {
			return nil
		}
		if trees[id] == nil {
			c.fail(fmt.Errorf("column distribution_tree: no distribution tree has the upstream id %q", id))
		}
		return trees[id]
	}
	// The sub-repositories' own rows add nothing the variants and addons do not say.
	parts := []struct {
		name string
		read func(c *cells, it *importTree)
	}{
		{checksumResource, func(c *cells, it *importTree) {
			it.t.Checksums = append(it.t.Checksums, treeinfo.Checksum{Path: c.need("path"), Checksum: c.need("checksum")})
		}},
		{imageResource, func(c *cells, it *importTree) {
			it.t.Images = append(it.t.Images, treeinfo.Image{Name: c.need("name"), Path: c.need("path"), Platforms: c.need("platforms")})
		}},
		{addonResource, func(c *cells, it *importTree) {
			a := treeinfo.Addon{AddonID: c.need("addon_id"), UID: c.need("uid"), Name: c.str("name"), Type: c.str("type"),
				Packages: c.str("packages")}
			a.Repository, a.RemoteRepository = a.AddonID, a.AddonID
			if name := c.str("repository"); name != "" {
				it.subs[a.Repository] = name
			}
			it.t.Addons = append(it.t.Addons, a)
		}},
		{variantResource, func(c *cells, it *importTree) {
			v := treeinfo.Variant{VariantID: c.need("variant_id"), UID: c.need("uid"), Name: c.str("name"), Type: c.str("type"),
				Packages: c.str("packages"), SourcePackages: c.opt("source_packages"), SourceRepository: c.opt("source_repository"),
				DebugPackages: c.opt("debug_packages"), DebugRepository: c.opt("debug_repository"), Identity: c.opt("identity")}
			v.Repository = treeinfo.Main
			if name := c.str("repository"); name != "" {
				v.Repository = v.VariantID
				it.subs[v.Repository] = name
			}
			v.RemoteRepository = v.Repository
			it.t.Variants = append(it.t.Variants, v)
		}},
	}
	for _, part := range parts {
		err := im.rows(part.name, func(c *cells) error {
			if it := treeOf(c); it != nil {
				part.read(c, it)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, it := range order {
		if err := im.storeTree(ctx, it); err != nil {
			return fmt.Errorf("%s: distribution tree %s: %w", treeResource, it.upstream, err)
		}
	}
	return nil
}

// storeTree stores a tree read, and its sub-repositories, each named as sync names it.
// Its .treeinfo is the one exported with it (pulp_rpm exports the file synced), keyed
// by its sha256 as sync keys it; without one it is written from the tree's fields.
func (im *importer) storeTree(ctx context.Context, it *importTree) error {
	raw, files, err := im.treeinfoFile(ctx, im.x.Files(it.upstream))
	if err != nil {
		return err
	}
	key := ""
	if raw != nil {
		key = sha256Hex(raw)
	} else {
		for i, a := range it.t.Addons {
			it.t.Addons[i].Parent = addonParent(&it.t, a.UID)
		}
		var buf bytes.Buffer
		if err := treeinfo.Write(&buf, &it.t, nil); err != nil {
			return err
		}
		raw = buf.Bytes()
		key, _, _ = strings.Cut(it.digest, "-")
		if b, err := hex.DecodeString(key); err != nil || len(b) != 32 {
			key = sha256Hex(raw)
		}
	}
	t, err := treeinfo.Parse(bytes.NewReader(raw), ".treeinfo")
	if err != nil {
		return err
	}
	attrs, err := json.Marshal(treeAttrs{DistributionTree: t, Treeinfo: string(raw)})
	if err != nil {
		return err
	}
	u, _, err := meta.PutContent(ctx, im.x.Tx(), meta.Content{Type: DistributionTreeType, NaturalKey: key, RepoKey: "distribution_tree",
		Digest: key, Attrs: attrs}, files)
	if err != nil {
		return err
	}
	im.x.Imported(it.upstream, u.ID)
	for path, name := range it.subs {
		repo, err := meta.SubRepository(ctx, im.x.Tx(), u.ID, path, RepoType, path+"-"+key)
		if err != nil {
			return err
		}
		if im.subs == nil {
			im.subs = map[string]meta.Repository{}
		}
		im.subs[name] = repo
	}
	return nil
}

// treeinfoNames are where a tree's .treeinfo is among its files.
var treeinfoNames = []string{".treeinfo", "treeinfo"}

// treeinfoFile reads the .treeinfo among a tree's exported files, nil when there is
// none with an artifact, and returns the other files: a tree's own files are those it
// names (publish writes its .treeinfo).
func (im *importer) treeinfoFile(ctx context.Context, files []meta.ContentFile) ([]byte, []meta.ContentFile, error) {
	var raw []byte
	var rest []meta.ContentFile
	for _, f := range files {
		if !slices.Contains(treeinfoNames, f.RelativePath) {
			rest = append(rest, f)
			continue
		}
		if raw != nil || f.ArtifactID == nil || im.store == nil {
			continue
		}
		sum, err := fileSHA256(ctx, im.x.Tx(), []meta.ContentFile{f}, f.RelativePath)
		if err != nil {
			return nil, nil, err
		}
		r, err := im.store.Open(ctx, sum)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.RelativePath, err)
		}
		raw, err = io.ReadAll(io.LimitReader(r, treeinfo.MaxSize+1))
		r.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f.RelativePath, err)
		}
		if len(raw) > treeinfo.MaxSize {
			return nil, nil, fmt.Errorf("%s: larger than %d bytes", f.RelativePath, treeinfo.MaxSize)
		}
	}
	return raw, rest, nil
}

// addonParent is the variant an addon belongs to, which the format does not say: the
// variant whose uid begins its uid ("BaseOS-HighAvailability"), else the main variant,
// else the first.
func addonParent(t *treeinfo.DistributionTree, uid string) string {
	parent := ""
	for _, v := range t.Variants {
		if strings.HasPrefix(uid, v.UID+"-") && len(v.UID) > len(parent) {
			parent = v.UID
		}
	}
	if parent != "" {
		return parent
	}
	for _, v := range t.Variants {
		if v.Repository == treeinfo.Main {
			return v.UID
		}
	}
	if len(t.Variants) > 0 {
		return t.Variants[0].UID
	}
	return ""
}

// pythonFloat renders a float as Python's str does for a timestamp: "1700000000.0".
func pythonFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
