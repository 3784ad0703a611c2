package collection

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// MaxRangeLen bounds a dependency's version range (MANIFEST.json gives no bound; a
// range longer than this is no range a person wrote).
const MaxRangeLen = 1024

// Range is a dependency's version range in the syntax galaxy-importer accepts
// (python-semanticversion's SimpleSpec): comma-separated clauses, all of which must
// hold, each an operator (none, =, ==, !=, <, <=, >, >=, ^, ~, ~=) and a version whose
// minor and patch may be left out or be "*" ("*" alone means any version).
type Range struct {
	Clauses []Clause
}

// Clause is one comma-separated part of a Range.
type Clause struct {
	Op                  string // as written; "" means ==
	Major, Minor, Patch string // digits, "*", or "" when left out (Minor, Patch)
	Prerelease, Build   string // after "-" / "+", without the sign
	HasPre, HasBuild    bool   // the sign was written, even with nothing after it
}

// clauseRE is SimpleSpec's NAIVE_SPEC: operator, major[.minor[.patch]], -pre, +build.
var clauseRE = regexp.MustCompile(`^(<|<=|=|==|>=|>|!=|\^|~|~=)?(\*|0|[1-9][0-9]*)(?:\.(\*|0|[1-9][0-9]*)(?:\.(\*|0|[1-9][0-9]*))?)?(-[a-zA-Z0-9.-]*)?(\+[a-zA-Z0-9.-]*)?$`)

// ParseRange parses and checks a dependency's version range as galaxy-importer does
// (semantic_version.SimpleSpec): "*", ">=1.0.0,<2.0.0", "!=1.2.3", "==1.0.0", "^1.2",
// "~=2.2". Spaces are not allowed, not even after a comma.
func ParseRange(s string) (Range, error) {
	if len(s) > MaxRangeLen {
		return Range{}, fmt.Errorf("longer than %d characters", MaxRangeLen)
	}
	var r Range
	for _, block := range strings.Split(s, ",") {
		c, err := parseClause(block)
		if err != nil {
			return Range{}, err
		}
		r.Clauses = append(r.Clauses, c)
	}
	return r, nil
}

func parseClause(block string) (Clause, error) {
	m := clauseRE.FindStringSubmatch(block)
	if m == nil {
		return Clause{}, fmt.Errorf("invalid simple block %q", block)
	}
	c := Clause{Op: m[1], Major: m[2], Minor: m[3], Patch: m[4]}
	if m[5] != "" {
		c.HasPre, c.Prerelease = true, m[5][1:]
	}
	if m[6] != "" {
		c.HasBuild, c.Build = true, m[6][1:]
	}
	op := c.Op
	if op == "" || op == "=" {
		op = "=="
	}
	partial := c.Minor == "" || c.Minor == "*" || c.Patch == "" || c.Patch == "*"
	switch {
	case c.Major == "*" && op != "==" && op != ">=":
		return Clause{}, fmt.Errorf("invalid simple spec %q: a wildcard version needs ==, = or >=", block)
	case (c.Major == "*" || partial) && (c.Prerelease != "" || c.Build != ""):
		return Clause{}, fmt.Errorf("invalid simple spec %q: a partial version has no prerelease or build", block)
	case c.HasBuild && op != "==" && op != "!=":
		return Clause{}, fmt.Errorf("invalid simple spec %q: build metadata only with == or !=", block)
	}
	if c.Major != "*" && !partial {
		// The full version is built as a Version, which refuses empty identifiers and
		// leading zeros in numeric prerelease identifiers.
		if c.Prerelease != "" {
			if _, err := identifiers(c.Prerelease, false); err != nil {
				return Clause{}, fmt.Errorf("invalid simple spec %q: %v", block, err)
			}
		}
		if c.Build != "" {
			if _, err := identifiers(c.Build, true); err != nil {
				return Clause{}, fmt.Errorf("invalid simple spec %q: %v", block, err)
			}
		}
	}
	return c, nil
}

// String writes the range back as parsed.
func (r Range) String() string {
	parts := make([]string, len(r.Clauses))
	for i, c := range r.Clauses {
		parts[i] = c.String()
	}
	return strings.Join(parts, ",")
}

// String writes the clause back as parsed.
func (c Clause) String() string {
	s := c.Op + c.Major
	if c.Minor != "" {
		s += "." + c.Minor
		if c.Patch != "" {
			s += "." + c.Patch
		}
	}
	if c.HasPre {
		s += "-" + c.Prerelease
	}
	if c.HasBuild {
		s += "+" + c.Build
	}
	return s
}

// PEP 440 version specifiers, as packaging.specifiers.Specifier reads them (case
// insensitive; whitespace between operator and version allowed).
const (
	pepPre   = `(?:[-_.]?(?:alpha|a|beta|b|preview|pre|c|rc)[-_.]?[0-9]*)?`
	pepPost  = `(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?`
	pepDev   = `(?:[-_.]?dev[-_.]?[0-9]*)?`
	pepLocal = `(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?`
	pepStart = `(?i)^v?(?:[0-9]+!)?[0-9]+`
)

var (
	pepEqual      = regexp.MustCompile(pepStart + `(?:\.[0-9]+)*(?:\.\*|` + pepPre + pepPost + pepDev + pepLocal + `)$`)
	pepCompatible = regexp.MustCompile(pepStart + `(?:\.[0-9]+)+` + pepPre + pepPost + pepDev + `$`)
	pepOrdered    = regexp.MustCompile(pepStart + `(?:\.[0-9]+)*` + pepPre + pepPost + pepDev + `$`)
	pepArbitrary  = regexp.MustCompile(`^[^\s;)]*$`)
)

// ValidRequiresAnsible checks meta/runtime.yml's requires_ansible as galaxy-importer
// does: a non-empty PEP 440 specifier set (">=2.9.10", ">=2.14.0,<2.17") of at most
// MaxRequiresAnsibleLen characters.
func ValidRequiresAnsible(s string) error {
	if s == "" {
		return errors.New("is empty")
	}
	if len(s) > MaxRequiresAnsibleLen {
		return fmt.Errorf("must not be greater than %d characters", MaxRequiresAnsibleLen)
	}
	for _, spec := range strings.Split(s, ",") {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue // packaging drops empty items: ">=2.9," is ">=2.9"
		}
		if !validPEP440Specifier(spec) {
			return fmt.Errorf("%q is not a valid requirement specification", spec)
		}
	}
	return nil
}

func validPEP440Specifier(spec string) bool {
	for _, op := range []string{"===", "~=", "==", "!=", "<=", ">=", "<", ">"} {
		rest, ok := strings.CutPrefix(spec, op)
		if !ok {
			continue
		}
		rest = strings.TrimLeft(rest, " \t\n\r\f\v")
		switch op {
		case "===":
			return pepArbitrary.MatchString(rest)
		case "~=":
			return pepCompatible.MatchString(rest)
		case "==", "!=":
			return pepEqual.MatchString(rest)
		}
		return pepOrdered.MatchString(rest)
	}
	return false
}
