package rpmgen

import (
	"fmt"
	"strings"

	"pith/content/rpm/repodata"
)

// depTags are the name, flags and version tags of one kind of dependency.
type depTags struct{ name, flags, version uint32 }

var senseFlags = map[string]uint32{
	"":   0,
	"LT": senseLess,
	"LE": senseLess | senseEqual,
	"EQ": senseEqual,
	"GE": senseGreater | senseEqual,
	"GT": senseGreater,
}

// rpmlibDep is a requirement on a feature of rpm itself, as rpmbuild adds them.
type rpmlibDep struct{ name, version string }

// rpmlibRequires are the rpm features every package written here uses: compressed file
// names (basenames and dirnames), "./" prefixed payload names and sha256 file digests.
var rpmlibRequires = []rpmlibDep{
	{"rpmlib(CompressedFileNames)", "3.0.4-1"},
	{"rpmlib(FileDigests)", "4.6.0-1"},
	{"rpmlib(PayloadFilesHavePrefix)", "4.0-1"},
}

// richRequire is the rpm feature a package with a rich dependency ("(a if b)") needs.
var richRequire = rpmlibDep{"rpmlib(RichDependencies)", "4.12.0-1"}

// addDeps adds the name, flags and version tags of one kind of dependency; extra are
// rpmlib() requirements appended after the package's own.
func addDeps(b *headerBuilder, kind string, tags depTags, deps []repodata.Dep, extra []rpmlibDep) error {
	if len(deps)+len(extra) == 0 {
		return nil
	}
	names := make([]string, 0, len(deps)+len(extra))
	flags := make([]uint32, 0, len(deps)+len(extra))
	versions := make([]string, 0, len(deps)+len(extra))
	for _, d := range deps {
		f, err := depFlags(d)
		if err != nil {
			return fmt.Errorf("%s %q: %w", kind, d.Name, err)
		}
		names = append(names, d.Name)
		flags = append(flags, f)
		versions = append(versions, depEVR(d))
	}
	for _, d := range extra {
		names = append(names, d.name)
		flags = append(flags, senseRPMLib|senseLess|senseEqual)
		versions = append(versions, d.version)
	}
	b.strs(tags.name, names)
	b.i32(tags.flags, flags...)
	b.strs(tags.version, versions)
	return nil
}

// depFlags returns the RPMSENSE bits of d: its comparison, and for a Pre requirement
// the bit rpmbuild sets for Requires(pre).
func depFlags(d repodata.Dep) (uint32, error) {
	if d.Name == "" {
		return 0, fmt.Errorf("empty dependency name")
	}
	f, ok := senseFlags[d.Flags]
	if !ok {
		return 0, fmt.Errorf("unknown flags %q", d.Flags)
	}
	if f != 0 && d.Version == "" {
		return 0, fmt.Errorf("flags %q without a version", d.Flags)
	}
	if d.Pre {
		f |= senseScriptPre
	}
	return f, nil
}

// depEVR is the dependency's version as rpm stores it: "[epoch:]version[-release]",
// empty for an unversioned dependency.
func depEVR(d repodata.Dep) string {
	if d.Flags == "" {
		return ""
	}
	s := d.Version
	if d.Epoch != "" {
		s = d.Epoch + ":" + s
	}
	if d.Release != "" {
		s += "-" + d.Release
	}
	return s
}

// hasRich reports whether any of the dependency lists holds a rich dependency.
func hasRich(lists ...[]repodata.Dep) bool {
	for _, l := range lists {
		for _, d := range l {
			if strings.HasPrefix(d.Name, "(") {
				return true
			}
		}
	}
	return false
}
