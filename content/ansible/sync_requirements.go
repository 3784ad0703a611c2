package ansible

import (
	"fmt"
	"net/url"
	"strings"

	"gopkg.in/yaml.v3"

	"pith/api/rest"
	"pith/content/ansible/collection"
)

// A collection remote's requirements_file: the YAML ansible-galaxy reads
// (`collections:` entries, each a "namespace.name" or {name, version, source, type}),
// checked whole when the remote is created or changed, so a sync never meets a bad one.

// Bounds of a requirements file.
const (
	maxRequirementsFile = 1 << 20
	maxRequirements     = 10000
	// maxYAMLNodes bounds the nodes read, aliases counted each time they are used.
	maxYAMLNodes = 100000
)

// requirement is a collection a sync wants and the versions of it, from the requirements
// file, a dependency of a version synced, or a collection of the upstream.
type requirement struct {
	Name    string // namespace.name
	Version string // the range as written; "*" is any version
	Source  string // another Galaxy's URL, or "" for the remote's
	rng     collection.Range
	// neededBy is the version that depends on it ("cisco.iosxr 4.0.2"), for errors.
	neededBy string
}

// key identifies a requirement as pulp_ansible's RequirementsFileEntry tuple does.
func (r requirement) key() string { return r.Name + " " + r.Version + " " + r.Source }

// split is the requirement's namespace and name.
func (r requirement) split() (string, string) {
	ns, name, _ := strings.Cut(r.Name, ".")
	return ns, name
}

// newRequirement checks a collection name and a version range.
func newRequirement(name, version string) (requirement, error) {
	ns, n, ok := strings.Cut(name, ".")
	if !ok || strings.Contains(n, ".") {
		return requirement{}, fmt.Errorf("%q is not a collection name in the format <namespace>.<name>", name)
	}
	for _, p := range []string{ns, n} {
		if err := collection.ValidName(p); err != nil {
			return requirement{}, fmt.Errorf("collection %q: %q %v", name, p, err)
		}
	}
	rng, err := collection.ParseRange(version)
	if err != nil {
		return requirement{}, fmt.Errorf("collection %s: version %q: %v", name, version, err)
	}
	return requirement{Name: name, Version: version, rng: rng}, nil
}

// lineError is a problem at a line of a YAML document.
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func lineErrorf(n *yaml.Node, format string, args ...any) error {
	return &lineError{line: n.Line, msg: fmt.Sprintf(format, args...)}
}

// parseRequirements reads a requirements file as pulp_ansible's
// parse_collections_requirements_file does (a mapping whose collections list holds
// names or mappings with a name), and checks more than it does: names are
// namespace.name, versions are ranges, sources are Galaxy URLs ending in "/", and an
// entry of another type than galaxy (git, url, file, dir), which pulp_ansible cannot
// sync either, is refused. Errors name the line.
func parseRequirements(text string) ([]requirement, error) {
	if len(text) > maxRequirementsFile {
		return nil, fmt.Errorf("larger than %d bytes", maxRequirementsFile)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %v", err)
	}
	nodes := 0
	root := yamlDeref(&doc, &nodes)
	if root != nil && root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = yamlDeref(root.Content[0], &nodes)
	}
	const shape = "expecting a mapping with the key collections that holds a list of collections"
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, &lineError{line: max(1, doc.Line), msg: shape}
	}
	list := member(root, "collections", &nodes)
	if list == nil {
		return nil, lineErrorf(root, "%s", shape)
	}
	if list.Kind != yaml.SequenceNode {
		return nil, lineErrorf(list, "%s", shape)
	}
	if len(list.Content) > maxRequirements {
		return nil, lineErrorf(list, "more than %d collections", maxRequirements)
	}
	var out []requirement
	for _, item := range list.Content {
		if nodes > maxYAMLNodes {
			return nil, lineErrorf(item, "more than %d YAML nodes", maxYAMLNodes)
		}
		r, err := parseEntry(yamlDeref(item, &nodes), &nodes)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// parseEntry reads one entry of the collections list.
func parseEntry(item *yaml.Node, nodes *int) (requirement, error) {
	name, version, source := item, (*yaml.Node)(nil), (*yaml.Node)(nil)
	if item.Kind == yaml.MappingNode {
		if name = member(item, "name", nodes); name == nil {
			return requirement{}, lineErrorf(item, "a collection entry needs a name")
		}
		version, source = member(item, "version", nodes), member(item, "source", nodes)
		if typ := member(item, "type", nodes); typ != nil && scalar(typ) != "galaxy" {
			return requirement{}, lineErrorf(typ, "collections of type %q cannot be synced; only collections on a Galaxy server (type galaxy)", typ.Value)
		}
	}
	if name.Kind != yaml.ScalarNode || name.Tag == "!!null" {
		return requirement{}, lineErrorf(name, "a collection entry is a name or a mapping with a name")
	}
	rng := "*"
	if version != nil && version.Tag != "!!null" {
		if version.Kind != yaml.ScalarNode {
			return requirement{}, lineErrorf(version, "a version is a range such as \">=1.0.0,<2.0.0\"")
		}
		rng = version.Value
	}
	r, err := newRequirement(name.Value, rng)
	if err != nil {
		return requirement{}, lineErrorf(name, "%v", err)
	}
	if source != nil && source.Tag != "!!null" {
		if err := checkGalaxyURL(scalar(source)); err != nil {
			return requirement{}, lineErrorf(source, "source: %v", err)
		}
		r.Source = source.Value
	}
	return r, nil
}

// checkGalaxyURL checks a Galaxy's URL as pulp_ansible does: http(s), ending in "/"
// (https://galaxy.ansible.com may leave it out).
func checkGalaxyURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http or https URL", s)
	}
	if !strings.HasSuffix(s, "/") && s != "https://galaxy.ansible.com" {
		return fmt.Errorf("invalid URL %s: ensure the URL ends '/'", s)
	}
	return nil
}

// yamlDeref follows an alias, counting the nodes read.
func yamlDeref(n *yaml.Node, nodes *int) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	*nodes++
	return n
}

// member is the value of a mapping's key, the last one when it is given twice (as
// PyYAML keeps it).
func member(m *yaml.Node, key string, nodes *int) *yaml.Node {
	var v *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := yamlDeref(m.Content[i], nodes); k.Kind == yaml.ScalarNode && k.Value == key {
			v = yamlDeref(m.Content[i+1], nodes)
		}
	}
	return v
}

func scalar(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// Validate checks a collection remote as pulp_ansible's serializer does, with the
// requirements file read whole: a url ending in "/", an auth_url only with a token.
func (r *collectionRemoteIn) Validate() error {
	if !strings.HasSuffix(r.URL, "/") && r.URL != "https://galaxy.ansible.com" {
		return rest.BadField("url", "Invalid URL %s. Ensure the URL ends '/'.", r.URL)
	}
	if r.RequirementsFile != nil && *r.RequirementsFile != "" {
		if _, err := parseRequirements(*r.RequirementsFile); err != nil {
			return rest.BadField("requirements_file", "Invalid requirements file: %v", err)
		}
	}
	if r.AuthURL != nil && *r.AuthURL != "" && (r.Token == nil || *r.Token == "") {
		return rest.NonField("When specifying 'auth_url' you must also specify 'token'.")
	}
	if r.SyncHighestVersions != nil && *r.SyncHighestVersions < 1 {
		return rest.BadField("sync_highest_versions", "Ensure this value is greater than or equal to 1.")
	}
	return nil
}
