package treeinfo

import (
	"regexp"
	"strings"
)

// legacy reads a pre-productmd treeinfo, a [general] section (family, version, arch,
// timestamp, variant, packagedir, repository, discnum, totaldiscs) beside [images-*],
// [stage2] and [checksums], into the values productmd's conversion gives Pulp.
func (b *builder) legacy() error {
	g := b.ini.section("general")
	if g == nil {
		return b.errf(0, "", "", ErrInvalid, "neither [header] nor [general]: not a treeinfo")
	}
	var f [3]entry
	for i, key := range []string{"family", "version", "arch"} {
		e, err := b.need("general", key)
		if err != nil {
			return err
		}
		f[i] = e
	}
	family := f[0].value
	b.t.ReleaseName, b.t.ReleaseShort = legacyRelease(family)
	b.t.ReleaseVersion = f[1].value
	for _, part := range regexp.MustCompile(`[-_]`).Split(f[1].value, -1) {
		if versionPattern.MatchString(part) {
			b.t.ReleaseVersion = part
		}
	}
	b.t.Arch = f[2].value
	if p, ok := g.get("platforms"); ok {
		b.addPlatforms(p.value)
	}
	if ts, ok := g.get("timestamp"); ok {
		var err error
		if b.t.BuildTimestamp, err = b.timestamp(ts, "general"); err != nil {
			return err
		}
	}
	disc, hasDisc := g.get("discnum")
	total, hasTotal := g.get("totaldiscs")
	if hasDisc || hasTotal {
		n, t := int64(1), int64(0)
		var err error
		if hasDisc {
			if n, err = b.integer(disc, "general"); err != nil {
				return err
			}
		}
		t = n
		if hasTotal {
			if t, err = b.integer(total, "general"); err != nil {
				return err
			}
		}
		b.t.DiscNum, b.t.TotalDiscs = &n, &t
	}

	ref, hasVariant := g.get("variant")
	uid := ref.value
	if hasVariant {
		b.t.MainVariant = uid
	} else {
		ref = entry{key: "family", value: family, line: f[0].line}
		uid = map[string]string{"Red Hat Enterprise Linux Server": "Server",
			"Red Hat Enterprise Linux Client": "Client", "CentOS": "CentOS"}[family]
	}
	var uids []string
	if uid != "" {
		uids = []string{uid}
	} else {
		for _, s := range b.ini.sections {
			if v, ok := strings.CutPrefix(s.name, "variant-"); ok && !strings.Contains(v, "-") {
				uids = append(uids, v)
			}
		}
		if len(uids) == 0 && b.t.ReleaseShort != "" {
			uids = []string{b.t.ReleaseShort}
		}
	}
	for _, u := range uids {
		if err := b.legacyVariant(u, "", ref); err != nil {
			return err
		}
	}
	return nil
}

var versionPattern = regexp.MustCompile(`^\d+(\.\d+)*$`)

// legacyVariant reads a variant (or, under parent, an addon) the old format implies.
func (b *builder) legacyVariant(uid, parent string, ref entry) error {
	if !validID(uid) {
		return b.errf(ref.line, "general", ref.key, ErrInvalid, "%q is not a valid variant UID", uid)
	}
	if prev, dup := b.seen[uid]; dup {
		return b.errf(ref.line, "general", ref.key, ErrInvalid, "lists %q, already read from [%s]", uid, prev)
	}
	id := uid[strings.LastIndexByte(uid, '-')+1:]
	if !validID(id) {
		return b.errf(ref.line, "general", ref.key, ErrInvalid, "%q is not a valid variant ID", id)
	}
	var s *section
	sec, typ := "general", "variant"
	for _, name := range []string{"addon-" + uid, "addon-" + id, "variant-" + uid, "variant-" + id} {
		if s = b.ini.section(name); s != nil {
			sec = name
			switch t, ok := s.get("type"); {
			case ok:
				typ = t.value
			case strings.HasPrefix(name, "addon-"):
				typ = "addon"
			case strings.Contains(id, "optional"):
				typ = "optional"
			}
			break
		}
	}
	if parent != "" {
		typ = "addon" // as productmd forces it
	} else if typ == "addon" {
		typ = "variant"
	}
	if typ != "variant" && typ != "optional" && typ != "addon" {
		t, _ := s.get("type")
		return b.errf(t.line, sec, "type", ErrInvalid, "%q is not variant, optional or addon", typ)
	}
	if b.seen == nil {
		b.seen = map[string]string{}
	}
	b.seen[uid] = sec
	name := id
	if n, ok := s.get("name"); ok {
		name = n.value
	}
	repo, ok := b.lookup([][2]string{{"variant-" + id, "repository"}, {"addon-" + id, "repository"}, {"general", "repository"}})
	if !ok {
		repo = entry{key: "repository", value: Main, line: ref.line}
		if parent != "" {
			repo.value = id // an addon lives in its own directory
		}
	}
	repo.value = strings.TrimRight(repo.value, "/")
	repo.value = strings.TrimSuffix(repo.value, "/repodata")
	if repo.value == "" || repo.value == "repodata" {
		repo.value = Main
	}
	if err := b.add(uid, id, name, typ, parent, sec, repo, s); err != nil {
		return err
	}
	if typ != "variant" {
		return nil
	}
	children, ok := b.lookup([][2]string{{sec, "addons"}, {sec, "variants"}, {"general", "addons"}})
	if !ok || sec == "general" && children.key != "addons" {
		return nil
	}
	for _, a := range splitList(children.value) {
		if !strings.HasPrefix(a, uid+"-") {
			a = uid + "-" + a
		}
		if err := b.legacyVariant(a, uid, children); err != nil {
			return err
		}
	}
	return nil
}

// lookup returns the first of the (section, key) pairs the file has.
func (b *builder) lookup(pairs [][2]string) (entry, bool) {
	for _, p := range pairs {
		if e, ok := b.ini.section(p[0]).get(p[1]); ok {
			return e, true
		}
	}
	return entry{}, false
}

// legacyRelease turns [general] family into the release name and short name, as
// productmd does for the families it knows; others keep their family and no short.
func legacyRelease(family string) (name, short string) {
	for _, r := range []struct{ prefix, name, short string }{
		{"Red Hat Enterprise Linux", "Red Hat Enterprise Linux", "RHEL"},
		{"Fedora", "Fedora", "Fedora"},
		{"CentOS", "CentOS", "CentOS"},
		{"EulerOS", "EulerOS", "EulerOS"},
		{"Kylin", "Kylin", "Kylin"},
		{"UnionTech OS", "UnionTech OS", "UOS"},
	} {
		if strings.HasPrefix(family, r.prefix) {
			return r.name, r.short
		}
	}
	switch family {
	case "Subscription Asset Manager":
		return family, "SAM"
	case "Red Hat Storage":
		return family, "RHS"
	case "JBEAP":
		return family, "JBEAP"
	case "Red Hat Storage Software Appliance":
		return family, "SSA"
	}
	return family, ""
}
