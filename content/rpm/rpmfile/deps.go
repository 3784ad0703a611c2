package rpmfile

import (
	"strings"

	"pith/content/rpm/repodata"
)

// Dependency flag bits (rpmds.h RPMSENSE_*).
const (
	senseLess       = 1 << 1
	senseGreater    = 1 << 2
	senseEqual      = 1 << 3
	sensePostTrans  = 1 << 5
	sensePreReq     = 1 << 6
	sensePreTrans   = 1 << 7
	senseScriptPre  = 1 << 9
	senseScriptPost = 1 << 10
	senseMissingOK  = 1 << 19
	senseStrong     = 1 << 27 // old SUSE weak deps: a recommends, not a suggests

	sensePre = sensePreReq | senseScriptPre | senseScriptPost | sensePreTrans | sensePostTrans
)

type depKind int

// The kinds in the order createrepo_c reads them; the order matters: requires are filtered
// against all provides, and requires(missingok) and the old weak tags are appended to the
// new weak-dependency lists after the entries read before them.
const (
	depProvides depKind = iota
	depConflicts
	depObsoletes
	depRequires
	depSuggests
	depEnhances
	depRecommends
	depSupplements
	depOldSuggests
	depOldEnhances
)

var depTags = [...]struct{ name, flags, version uint32 }{
	depProvides:    {tagProvideName, tagProvideFlags, tagProvideVersion},
	depConflicts:   {tagConflictName, tagConflictFlags, tagConflictVersion},
	depObsoletes:   {tagObsoleteName, tagObsoleteFlags, tagObsoleteVersion},
	depRequires:    {tagRequireName, tagRequireFlags, tagRequireVersion},
	depSuggests:    {tagSuggestName, tagSuggestFlags, tagSuggestVersion},
	depEnhances:    {tagEnhanceName, tagEnhanceFlags, tagEnhanceVersion},
	depRecommends:  {tagRecommendName, tagRecommendFlags, tagRecommendVersion},
	depSupplements: {tagSupplementName, tagSupplementFlags, tagSupplementVer},
	depOldSuggests: {tagOldSuggestName, tagOldSuggestFlags, tagOldSuggestVer},
	depOldEnhances: {tagOldEnhanceName, tagOldEnhanceFlags, tagOldEnhanceVer},
}

// flagString is createrepo_c's cr_flag_to_str.
func flagString(f uint64) string {
	switch f & 0xf {
	case senseLess:
		return "LT"
	case senseGreater:
		return "GT"
	case senseEqual:
		return "EQ"
	case senseLess | senseEqual:
		return "LE"
	case senseGreater | senseEqual:
		return "GE"
	}
	return ""
}

// readDeps fills the dependency lists as createrepo_c's cr_package_from_header does.
// files are the package's raw full paths, for dropping requires on its own files.
func readDeps(h *header, p *repodata.Package, files []string) error {
	owned, err := ownedRequires(h, files)
	if err != nil {
		return err
	}
	provided := map[string]struct{}{}
	type seen struct {
		flags, version string
		pre            bool
	}
	required := map[string]seen{}
	for kind, tags := range depTags {
		kind := depKind(kind)
		names, err := h.strs(tags.name)
		if err != nil {
			return err
		}
		flags, okf, err := h.nums(tags.flags, typeInt32)
		if err != nil {
			return err
		}
		versions, err := h.strs(tags.version)
		if err != nil {
			return err
		}
		if names == nil || !okf || versions == nil {
			continue
		}
		var libc *repodata.Dep // only the highest libc.so.6 requirement is kept
		var libcName string
		n := min(len(names), flags.len(), len(versions))
		for i := range n {
			name, f, ver := names[i], flags.at(i), versions[i]
			fs := flagString(f)
			nfv := name + fs + ver
			pre := false
			if kind == depRequires {
				if strings.HasPrefix(name, "rpmlib(") {
					continue
				}
				if owned[name] {
					continue
				}
				if _, ok := provided[nfv]; ok {
					continue
				}
				pre = f&sensePre != 0
				if s, ok := required[name]; ok && s.flags == fs && s.version == ver && s.pre == pre {
					continue
				}
			}
			e, v, r, ok := splitEVR(ver)
			if !ok {
				continue // createrepo_c skips a dependency with a non-numeric epoch
			}
			d := repodata.Dep{Name: text(name), Flags: fs, Epoch: text(e), Version: text(v), Release: text(r)}
			switch kind {
			case depProvides:
				provided[nfv] = struct{}{}
				p.Provides = append(p.Provides, d)
			case depConflicts:
				p.Conflicts = append(p.Conflicts, d)
			case depObsoletes:
				p.Obsoletes = append(p.Obsoletes, d)
			case depRequires:
				if f&senseMissingOK != 0 {
					p.Recommends = append(p.Recommends, d)
					break
				}
				d.Pre = pre
				if strings.HasPrefix(name, "libc.so.6") {
					if libc == nil || compareLibc(libcName, name) == 2 {
						libc, libcName = &d, name
					}
					break
				}
				p.Requires = append(p.Requires, d)
				required[name] = seen{fs, ver, pre}
			case depSuggests:
				p.Suggests = append(p.Suggests, d)
			case depEnhances:
				p.Enhances = append(p.Enhances, d)
			case depRecommends:
				p.Recommends = append(p.Recommends, d)
			case depSupplements:
				p.Supplements = append(p.Supplements, d)
			case depOldSuggests:
				if f&senseStrong != 0 {
					p.Recommends = append(p.Recommends, d)
				} else {
					p.Suggests = append(p.Suggests, d)
				}
			case depOldEnhances:
				if f&senseStrong != 0 {
					p.Supplements = append(p.Supplements, d)
				} else {
					p.Enhances = append(p.Enhances, d)
				}
			}
		}
		if libc != nil {
			p.Requires = append(p.Requires, *libc)
		}
	}
	return nil
}

// ownedRequires returns the required paths that are the package's own files of the kind
// primary.xml lists, which createrepo_c drops from the requires. Memory goes with the
// number of requires, not of files.
func ownedRequires(h *header, files []string) (map[string]bool, error) {
	names, err := h.strs(tagRequireName)
	if err != nil {
		return nil, err
	}
	owned := map[string]bool{}
	for _, n := range names {
		if strings.HasPrefix(n, "/") && primaryFile(n) {
			owned[n] = false
		}
	}
	if len(owned) > 0 {
		for _, f := range files {
			if _, ok := owned[f]; ok {
				owned[f] = true
			}
		}
	}
	return owned, nil
}

// primaryFile is createrepo_c's cr_is_primary: the files primary.xml lists, and so the
// only ones a requirement may be dropped for.
func primaryFile(name string) bool {
	return strings.HasPrefix(name, "/etc/") || name == "/usr/lib/sendmail" || strings.Contains(name, "bin/")
}

// splitEVR splits "epoch:version-release" as createrepo_c's cr_str_to_evr does: the epoch
// defaults to "0" when there is a version, the version ends at the first '-'. ok is false
// for a non-numeric epoch.
func splitEVR(s string) (epoch, version, release string, ok bool) {
	if s == "" {
		return "", "", "", true
	}
	rest := s
	if i := strings.IndexByte(s, ':'); i >= 0 {
		if strtolEnd(s) != i {
			return "", "", "", false
		}
		epoch, rest = s[:i], s[i+1:]
	}
	if epoch == "" {
		epoch = "0"
	}
	version = rest
	if i := strings.IndexByte(rest, '-'); i >= 0 {
		version, release = rest[:i], rest[i+1:]
	}
	return epoch, version, release, true
}

// strtolEnd returns where C's strtol(s, &end, 10) stops: past leading white space, a sign
// and digits; 0 when there are no digits.
func strtolEnd(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return 0
	}
	return j
}

// compareLibc is createrepo_c's cr_compare_dependency for two "libc.so.6(...)" names:
// 0 same, 1 first bigger, 2 second bigger, -1 undecidable.
func compareLibc(a, b string) int {
	if a == b {
		return 0
	}
	v1, v2 := strings.IndexByte(a, '('), strings.IndexByte(b, '(')
	switch {
	case v1 < 0 && v2 < 0:
		return 0
	case v1 < 0:
		return 2
	case v2 < 0:
		return 1
	}
	e1, e2 := strings.IndexByte(a[v1:], ')'), strings.IndexByte(b[v2:], ')')
	switch {
	case e1 < 0 && e2 < 0:
		return -1
	case e1 < 0:
		return 2
	case e2 < 0:
		return 1
	}
	e1, e2 = v1+e1, v2+e2
	v1, v2 = v1+1, v2+1
	switch {
	case v1 == e1 && v2 == e2:
		return 0
	case v1 == e1:
		return 2
	case v2 == e2:
		return 1
	}
	for v1 < len(a) && (a[v1] < '0' || a[v1] > '9') {
		v1++
	}
	for v2 < len(b) && (b[v2] < '0' || b[v2] > '9') {
		v2++
	}
	switch {
	case v1 > e1 && v2 > e2:
		return 0
	case v1 > e1:
		return 2
	case v2 > e2:
		return 1
	}
	switch Vercmp(a[v1:e1], b[v2:e2]) {
	case 1:
		return 1
	case -1:
		return 2
	}
	return 0
}

// Vercmp compares two version (or release) strings as rpm's rpmvercmp does: -1, 0 or 1.
func Vercmp(a, b string) int {
	if a == b {
		return 0
	}
	alnum := func(c byte) bool { return isDigit(c) || isAlpha(c) }
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		for i < len(a) && !alnum(a[i]) && a[i] != '~' && a[i] != '^' {
			i++
		}
		for j < len(b) && !alnum(b[j]) && b[j] != '~' && b[j] != '^' {
			j++
		}
		ca, cb := at(a, i), at(b, j)
		if ca == '~' || cb == '~' {
			if ca != '~' {
				return 1
			}
			if cb != '~' {
				return -1
			}
			i, j = i+1, j+1
			continue
		}
		if ca == '^' || cb == '^' {
			switch {
			case i == len(a):
				return -1
			case j == len(b):
				return 1
			case ca != '^':
				return 1
			case cb != '^':
				return -1
			}
			i, j = i+1, j+1
			continue
		}
		if i == len(a) || j == len(b) {
			break
		}
		si, sj := i, j
		isNum := isDigit(a[i])
		class := isAlpha
		if isNum {
			class = isDigit
		}
		for si < len(a) && class(a[si]) {
			si++
		}
		for sj < len(b) && class(b[sj]) {
			sj++
		}
		if sj == j {
			if isNum {
				return 1
			}
			return -1
		}
		x, y := a[i:si], b[j:sj]
		if isNum {
			x, y = strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
			if len(x) != len(y) {
				if len(x) > len(y) {
					return 1
				}
				return -1
			}
		}
		if c := strings.Compare(x, y); c != 0 {
			return c
		}
		i, j = si, sj
	}
	switch {
	case i == len(a) && j == len(b):
		return 0
	case i == len(a):
		return -1
	}
	return 1
}

func at(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
