package collection

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// MaxVersionLen is galaxy-importer's MAX_LENGTH_VERSION (pulp_ansible's version column).
const MaxVersionLen = 128

// SemVer is a SemVer 2.0.0 version, as python-semanticversion's Version parses it.
type SemVer struct {
	Major, Minor, Patch int // each fits pulp_ansible's version_major/minor/patch (int32)
	Prerelease          []string
	Build               []string
}

// ParseVersion parses a strict SemVer 2.0.0 version: three numbers without leading
// zeros, then optional "-prerelease" and "+build" of dot-separated [0-9A-Za-z-]
// identifiers, none empty, numeric prerelease identifiers without leading zeros.
func ParseVersion(s string) (SemVer, error) {
	var v SemVer
	if s == "" {
		return v, errors.New("empty version")
	}
	if len(s) > MaxVersionLen {
		return v, errors.New("longer than " + strconv.Itoa(MaxVersionLen) + " characters")
	}
	core, build, hasBuild := strings.Cut(s, "+")
	core, pre, hasPre := strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, errors.New("not major.minor.patch")
	}
	nums := [3]*int{&v.Major, &v.Minor, &v.Patch}
	for i, p := range parts {
		n, err := versionNumber(p)
		if err != nil {
			return v, err
		}
		*nums[i] = n
	}
	var err error
	if hasPre {
		if v.Prerelease, err = identifiers(pre, false); err != nil {
			return v, err
		}
	}
	if hasBuild {
		if v.Build, err = identifiers(build, true); err != nil {
			return v, err
		}
	}
	return v, nil
}

func versionNumber(p string) (int, error) {
	if p == "" || strings.Trim(p, "0123456789") != "" {
		return 0, errors.New("version number " + strconv.Quote(p) + " is not a number")
	}
	if len(p) > 1 && p[0] == '0' {
		return 0, errors.New("leading zero in " + strconv.Quote(p))
	}
	n, err := strconv.ParseInt(p, 10, 64)
	if err != nil || n > math.MaxInt32 {
		return 0, errors.New("version number " + p + " is too large")
	}
	return int(n), nil
}

// identifiers splits a prerelease or build part; leadingZeros allows "007" (build only).
func identifiers(s string, leadingZeros bool) ([]string, error) {
	ids := strings.Split(s, ".")
	for _, id := range ids {
		if id == "" {
			return nil, errors.New("empty identifier in " + strconv.Quote(s))
		}
		numeric := true
		for i := 0; i < len(id); i++ {
			c := id[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-':
				numeric = false
			default:
				return nil, errors.New("invalid character in identifier " + strconv.Quote(id))
			}
		}
		if numeric && !leadingZeros && len(id) > 1 && id[0] == '0' {
			return nil, errors.New("leading zero in identifier " + strconv.Quote(id))
		}
	}
	return ids, nil
}

// String formats the version as it was written (SemVer has one spelling).
func (v SemVer) String() string {
	s := strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch)
	if len(v.Prerelease) > 0 {
		s += "-" + strings.Join(v.Prerelease, ".")
	}
	if len(v.Build) > 0 {
		s += "+" + strings.Join(v.Build, ".")
	}
	return s
}

// Compare orders versions by SemVer precedence (build metadata ignored): -1, 0 or +1.
func (v SemVer) Compare(w SemVer) int {
	for _, d := range [3]int{v.Major - w.Major, v.Minor - w.Minor, v.Patch - w.Patch} {
		if d != 0 {
			return sign(d)
		}
	}
	switch {
	case len(v.Prerelease) == 0 && len(w.Prerelease) == 0:
		return 0
	case len(v.Prerelease) == 0:
		return 1
	case len(w.Prerelease) == 0:
		return -1
	}
	for i := 0; i < len(v.Prerelease) && i < len(w.Prerelease); i++ {
		if c := compareIdentifier(v.Prerelease[i], w.Prerelease[i]); c != 0 {
			return c
		}
	}
	return sign(len(v.Prerelease) - len(w.Prerelease))
}

// compareIdentifier: numeric identifiers compare as numbers and sort before
// alphanumeric ones, which compare as ASCII.
func compareIdentifier(a, b string) int {
	an, bn := isDigits(a), isDigits(b)
	switch {
	case an && bn:
		if len(a) != len(b) { // no leading zeros in prerelease numbers
			return sign(len(a) - len(b))
		}
		return strings.Compare(a, b)
	case an:
		return -1
	case bn:
		return 1
	}
	return strings.Compare(a, b)
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func sign(d int) int {
	switch {
	case d < 0:
		return -1
	case d > 0:
		return 1
	}
	return 0
}
