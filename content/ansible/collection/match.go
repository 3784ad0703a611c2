package collection

import (
	"slices"
	"strconv"
	"strings"
)

// Matching a version against a Range, as python-semanticversion's SimpleSpec does (what
// pulp_ansible's sync matches requirements and dependencies with): each clause becomes
// one or two bounds on a target version built from the clause, partial versions
// widening to the next major or minor; a pre-release of a release is below "<release"
// only when the clause says so ("<1.2.3-"); build metadata counts only when the clause
// names it.

// Match reports whether v is in the range: every clause holds. "*" alone matches every
// version, pre-releases included (pulp_ansible's AnsibleSpec; as part of a longer range
// it is ">=0.0.0", which refuses pre-releases of 0.0.0).
func (r Range) Match(v SemVer) bool {
	if len(r.Clauses) == 1 && r.Clauses[0].String() == "*" {
		return true
	}
	for _, c := range r.Clauses {
		if !c.match(v) {
			return false
		}
	}
	return true
}

// bound is one of SimpleSpec's Range matchers: an operator and a target version.
type bound struct {
	op     string // ==, !=, <, <=, >, >=
	target SemVer
	// preAlways: a pre-release of the target's release is below it ("<1.2.3-");
	// otherwise (SimpleSpec's "natural" policy) "<1.2.3" and "!=1.2.3" refuse it.
	preAlways bool
	// buildStrict: build metadata must be equal ("==1.2.3+" or a target with a build);
	// otherwise the version's build is ignored.
	buildStrict bool
}

func (c Clause) match(v SemVer) bool {
	all, anyOf := c.bounds()
	if anyOf {
		return slices.ContainsFunc(all, func(b bound) bool { return b.match(v) })
	}
	for _, b := range all {
		if !b.match(v) {
			return false
		}
	}
	return true
}

// bounds translates the clause as SimpleSpec.Parser.parse_block does; anyOf means one
// bound must hold (a partial "!="), otherwise all of them.
func (c Clause) bounds() (bs []bound, anyOf bool) {
	op := c.Op
	if op == "" || op == "=" {
		op = "=="
	}
	noMinor := c.Minor == "" || c.Minor == "*"
	noPatch := noMinor || c.Patch == "" || c.Patch == "*"
	var t SemVer
	switch {
	case c.Major == "*":
	case noMinor:
		t.Major = atoi(c.Major)
	case noPatch:
		t.Major, t.Minor = atoi(c.Major), atoi(c.Minor)
	default:
		t.Major, t.Minor, t.Patch = atoi(c.Major), atoi(c.Minor), atoi(c.Patch)
		if c.Prerelease != "" {
			t.Prerelease = strings.Split(c.Prerelease, ".")
		}
		if c.Build != "" {
			t.Build = strings.Split(c.Build, ".")
		}
	}
	emptyPre := c.HasPre && c.Prerelease == ""
	emptyBuild := c.HasBuild && c.Build == ""
	span := func(high SemVer) []bound { return []bound{{op: ">=", target: t}, {op: "<", target: high}} }
	switch op {
	case "^":
		switch {
		case t.Major != 0:
			return span(t.nextMajor()), false
		case t.Minor != 0:
			return span(t.nextMinor()), false
		}
		return span(t.nextPatch()), false
	case "~":
		if noMinor {
			return span(t.nextMajor()), false
		}
		return span(t.nextMinor()), false
	case "~=":
		if noPatch {
			return span(t.nextMajor()), false
		}
		return span(t.nextMinor()), false
	case "==":
		switch {
		case c.Major == "*":
			return []bound{{op: ">=", target: t}}, false
		case noMinor:
			return span(t.nextMajor()), false
		case noPatch:
			return span(t.nextMinor()), false
		}
		return []bound{{op: "==", target: t, buildStrict: emptyBuild}}, false
	case "!=":
		switch {
		case noMinor:
			return []bound{{op: "<", target: t}, {op: ">=", target: t.nextMajor()}}, true
		case noPatch:
			return []bound{{op: "<", target: t}, {op: ">=", target: t.nextMinor()}}, true
		case emptyPre:
			return []bound{{op: "!=", target: t, preAlways: true}}, false
		}
		return []bound{{op: "!=", target: t, buildStrict: emptyBuild}}, false
	case ">":
		switch {
		case noMinor:
			return []bound{{op: ">=", target: t.nextMajor()}}, false
		case noPatch:
			return []bound{{op: ">=", target: t.nextMinor()}}, false
		}
		return []bound{{op: ">", target: t}}, false
	case ">=":
		return []bound{{op: ">=", target: t}}, false
	case "<":
		return []bound{{op: "<", target: t, preAlways: emptyPre}}, false
	}
	// "<="
	switch {
	case noMinor:
		return []bound{{op: "<", target: t.nextMajor()}}, false
	case noPatch:
		return []bound{{op: "<", target: t.nextMinor()}}, false
	}
	return []bound{{op: "<=", target: t}}, false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s) // the clause's pattern allows digits only
	return n
}

// nextMajor, nextMinor and nextPatch are python-semanticversion's: the release a
// pre-release leads to when it is the first of its major, minor or patch, else the next.
func (v SemVer) nextMajor() SemVer {
	if len(v.Prerelease) > 0 && v.Minor == 0 && v.Patch == 0 {
		return SemVer{Major: v.Major}
	}
	return SemVer{Major: v.Major + 1}
}

func (v SemVer) nextMinor() SemVer {
	if len(v.Prerelease) > 0 && v.Patch == 0 {
		return SemVer{Major: v.Major, Minor: v.Minor}
	}
	return SemVer{Major: v.Major, Minor: v.Minor + 1}
}

func (v SemVer) nextPatch() SemVer {
	if len(v.Prerelease) > 0 {
		return SemVer{Major: v.Major, Minor: v.Minor, Patch: v.Patch}
	}
	return SemVer{Major: v.Major, Minor: v.Minor, Patch: v.Patch + 1}
}

// match is semantic_version's Range.match.
func (b bound) match(v SemVer) bool {
	strict := b.buildStrict || len(b.target.Build) > 0
	if !strict {
		v.Build = nil
	}
	sameRelease := v.Major == b.target.Major && v.Minor == b.target.Minor && v.Patch == b.target.Patch
	// A pre-release of the target's release is not below (or other than) the release
	// itself unless the clause says so.
	naturalPre := len(v.Prerelease) > 0 && !b.preAlways && sameRelease && len(b.target.Prerelease) == 0
	samePre := sameRelease && slices.Equal(v.Prerelease, b.target.Prerelease)
	switch b.op {
	case "==":
		return samePre && slices.Equal(v.Build, b.target.Build)
	case "!=":
		if strict {
			return !(samePre && slices.Equal(v.Build, b.target.Build))
		}
		return !naturalPre && !(samePre && len(v.Build) == 0 && len(b.target.Build) == 0)
	case ">":
		return v.Compare(b.target) > 0
	case ">=":
		return v.Compare(b.target) >= 0
	case "<":
		return !naturalPre && v.Compare(b.target) < 0
	}
	return v.Compare(b.target) <= 0 // "<="
}
