package modulemd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Modulemd is one module stream build (a "document: modulemd" of version 2), with the
// fields and JSON names of Pulp's rpm Modulemd.
type Modulemd struct {
	Name    string `json:"name"`
	Stream  string `json:"stream"`
	Version uint64 `json:"version,string"` // Pulp stores and renders it as a string
	// StaticContext is data.static_context; nil when the document does not say.
	StaticContext *bool  `json:"static_context"`
	Context       string `json:"context"`
	Arch          string `json:"arch"`
	// Artifacts are data.artifacts.rpms: the NEVRAs "name-epoch:version-release.arch"
	// of the module's rpms, as written, the form repodata.Package.NEVRA returns.
	Artifacts []string `json:"artifacts"`
	// Dependencies are data.dependencies as Pulp stores them: one entry per
	// dependency set, each with its buildrequires and requires {module: [streams]}.
	Dependencies []Dependency `json:"dependencies"`
	// Packages are the hrefs of the stored packages whose NEVRA is among Artifacts;
	// the parser leaves it nil for the caller, which knows the packages, to fill.
	Packages []string `json:"packages"`
	// Profiles maps each profile with rpms to its rpm names (Pulp drops empty ones).
	Profiles    map[string][]string `json:"profiles"`
	Description string              `json:"description"`
	// Snippet is the document's YAML, framed "---\n...\n...", republished verbatim.
	// Pulp accepts it on create and never renders it.
	Snippet string `json:"-"`
}

// Dependency is one entry of a module's dependencies: module name to stream list.
type Dependency struct {
	BuildRequires map[string][]string `json:"buildrequires,omitempty"`
	Requires      map[string][]string `json:"requires,omitempty"`
}

// ModulemdDefaults is a "document: modulemd-defaults": a module's default stream and
// each stream's default profiles, with the fields of Pulp's rpm ModulemdDefaults.
type ModulemdDefaults struct {
	Module   string              `json:"module"`
	Stream   string              `json:"stream"`   // "" when the module has no default stream
	Profiles map[string][]string `json:"profiles"` // stream -> default profiles
	Snippet  string              `json:"-"`
}

// ModulemdObsolete is a "document: modulemd-obsoletes": the end of life of a module
// stream or its replacement, with the fields of Pulp's rpm ModulemdObsolete.
type ModulemdObsolete struct {
	Modified     string `json:"modified"` // as written, e.g. "2022-01-24T08:54Z"
	ModuleName   string `json:"module_name"`
	ModuleStream string `json:"module_stream"`
	Message      string `json:"message"`
	// OverridePrevious is data.reset; nil when absent.
	OverridePrevious        *Flag   `json:"override_previous"`
	ModuleContext           *string `json:"module_context"`
	EOLDate                 *string `json:"eol_date"`
	ObsoletedByModuleName   *string `json:"obsoleted_by_module_name"`
	ObsoletedByModuleStream *string `json:"obsoleted_by_module_stream"`
	Snippet                 string  `json:"-"`
}

// Digest is Pulp's digest of the module: the SHA-256 of its snippet, lower-case hex.
func (m *Modulemd) Digest() string { return digest(m.Snippet) }

// Digest is Pulp's digest of the defaults: the SHA-256 of its snippet, lower-case hex.
func (d *ModulemdDefaults) Digest() string { return digest(d.Snippet) }

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Flag is a boolean that renders in JSON the way Pulp renders override_previous (a
// Python bool through a CharField): the string "True" or "False".
type Flag bool

// MarshalJSON renders "True" or "False".
func (f Flag) MarshalJSON() ([]byte, error) {
	if f {
		return []byte(`"True"`), nil
	}
	return []byte(`"False"`), nil
}

// UnmarshalJSON accepts a JSON boolean or the strings "True"/"true"/"False"/"false".
func (f *Flag) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v {
	case true, "True", "true":
		*f = true
	case false, "False", "false":
		*f = false
	default:
		return fmt.Errorf("override_previous: %s is not a boolean", b)
	}
	return nil
}
