package collection

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Galaxy's bounds (galaxy-importer's schema.py, pulp_ansible's columns).
const (
	MaxNameLen            = 64 // namespace and name
	MaxTags               = 20 // tags of one collection
	MaxTagLen             = 64
	MaxAuthorLen          = 64
	MaxLicenseLen         = 32
	MaxURLLen             = 2000
	MaxRequiresAnsibleLen = 255
)

// nameRE is galaxy-importer's NAME_REGEXP without its look-ahead (no "__" anywhere),
// which ValidName checks apart.
var nameRE = regexp.MustCompile(`^[a-z][0-9a-z_]*$`)

// pythonKeywords are Python 3's keywords (keyword.kwlist) that a lower-case name can
// spell: ansible-galaxy refuses them (AnsibleCollectionRef.is_valid_collection_name),
// as the name must be importable as ansible_collections.<namespace>.<name>.
var pythonKeywords = map[string]bool{
	"and": true, "as": true, "assert": true, "async": true, "await": true, "break": true,
	"class": true, "continue": true, "def": true, "del": true, "elif": true, "else": true,
	"except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true,
	"or": true, "pass": true, "raise": true, "return": true, "try": true, "while": true,
	"with": true, "yield": true,
}

// ValidName checks a namespace or collection name: lower-case letters, digits and
// underscores, starting with a letter, no "__", at most MaxNameLen bytes, not a Python
// keyword.
func ValidName(s string) error {
	switch {
	case s == "":
		return errors.New("is required")
	case !nameRE.MatchString(s) || strings.Contains(s, "__"):
		return fmt.Errorf("has invalid format: %s", s)
	case len(s) > MaxNameLen:
		return fmt.Errorf("must not be greater than %d characters", MaxNameLen)
	case pythonKeywords[s]:
		return fmt.Errorf("is a Python keyword: %s", s)
	}
	return nil
}

// ValidTags checks a collection's tags as galaxy-importer does: at most MaxTags, each
// in the name format and at most MaxTagLen bytes.
func ValidTags(tags []string) error {
	if len(tags) > MaxTags {
		return fmt.Errorf("expecting no more than %d tags in metadata", MaxTags)
	}
	for _, t := range tags {
		if !nameRE.MatchString(t) || strings.Contains(t, "__") {
			return fmt.Errorf("'tag' has invalid format: %s", t)
		}
		if len(t) > MaxTagLen {
			return fmt.Errorf("each tag in 'tags' list must not be greater than %d characters", MaxTagLen)
		}
	}
	return nil
}

// Filename is what an artifact's file name, namespace-name-version.tar.gz, says.
type Filename struct {
	Namespace, Name, Version string
}

var filenameRE = regexp.MustCompile(`^([A-Za-z0-9_]+)-([A-Za-z0-9_]+)-([0-9A-Za-z.+-]+)\.tar\.gz$`)

// ParseFilename splits "namespace-name-version.tar.gz" as pulp_ansible's upload does
// (parse_collection_filename): the version must be SemVer, each part within Galaxy's
// lengths. Whether the parts are valid names is the manifest's check.
func ParseFilename(s string) (Filename, error) {
	m := filenameRE.FindStringSubmatch(s)
	if m == nil {
		return Filename{}, &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("invalid filename %q: expected format namespace-name-version.tar.gz", s)}
	}
	f := Filename{Namespace: m[1], Name: m[2], Version: m[3]}
	if _, err := ParseVersion(f.Version); err != nil {
		return Filename{}, &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("invalid version string %q from filename %q: expected semantic version format: %v", f.Version, s, err)}
	}
	for _, p := range [][2]string{{"namespace", f.Namespace}, {"name", f.Name}} {
		if len(p[1]) > MaxNameLen {
			return Filename{}, &Error{Kind: ErrInvalid, Msg: fmt.Sprintf("expected %s to be max length of %d", p[0], MaxNameLen)}
		}
	}
	return f, nil
}

// String is the artifact's file name.
func (f Filename) String() string {
	return f.Namespace + "-" + f.Name + "-" + f.Version + ".tar.gz"
}

// check compares the non-empty parts of f with the manifest's, in galaxy-importer's
// order and words.
func (f Filename) check(namespace, name, version string) error {
	for _, p := range [][3]string{{"namespace", f.Namespace, namespace}, {"name", f.Name, name}, {"version", f.Version, version}} {
		if p[1] != "" && p[1] != p[2] {
			return &Error{Kind: ErrMismatch, Msg: fmt.Sprintf("Filename %s %q did not match metadata %q", p[0], p[1], p[2])}
		}
	}
	return nil
}
