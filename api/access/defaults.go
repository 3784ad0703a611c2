package access

import (
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Defaults are what a Pulp app ships: the default access policy of each of its
// viewsets (by Pulp's viewset name, "repositories/file/file"), its built-in (locked)
// roles and the permissions of its models. They come from the Pulp release pith claims,
// written by scripts/pulp-access.py; the core's are here, each content type embeds its
// own and declares them on the API's table.
type Defaults struct {
	Policies    map[string]DefaultPolicy `json:"policies"`
	Roles       map[string]Role          `json:"roles"`
	Permissions map[string][]string      `json:"permissions"` // by model ("file.filerepository")
}

// DefaultPolicy is a viewset's policy as shipped.
type DefaultPolicy struct {
	Policy
	// ScopePermission is the permission a list's rows need (Pulp's
	// queryset_filtering_required_permission); empty for none.
	ScopePermission string `json:"scope_permission"`
	// Unlisted policies apply but are not stored as access policies (Pulp's views
	// outside its named viewsets, such as rpm's copy).
	Unlisted bool `json:"unlisted"`
}

// Role is a built-in role.
type Role struct {
	Description *string  `json:"description"`
	Permissions []string `json:"permissions"`
}

//go:embed pulp/*.json
var pulpFiles embed.FS

// Core are the defaults of pulpcore's own apps (core and certguard).
func Core() (Defaults, error) {
	var out Defaults
	for _, name := range []string{"pulp/core.json", "pulp/certguard.json"} {
		b, err := pulpFiles.ReadFile(name)
		if err != nil {
			return Defaults{}, err
		}
		d, err := Parse(b)
		if err != nil {
			return Defaults{}, fmt.Errorf("%s: %w", name, err)
		}
		if err := out.Merge(d); err != nil {
			return Defaults{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	return out, nil
}

// Parse reads defaults as scripts/pulp-access.py writes them.
func Parse(b []byte) (Defaults, error) {
	var d Defaults
	if err := json.Unmarshal(b, &d); err != nil {
		return Defaults{}, fmt.Errorf("access defaults: %w", err)
	}
	for name, p := range d.Policies {
		if err := p.Validate(func(string) bool { return true }); err != nil {
			return Defaults{}, fmt.Errorf("access defaults: policy %s: %w", name, err)
		}
	}
	return d, nil
}

// Merge adds o's policies, roles and permissions; a name both define is an error.
func (d *Defaults) Merge(o Defaults) error {
	if d.Policies == nil {
		d.Policies, d.Roles, d.Permissions = map[string]DefaultPolicy{}, map[string]Role{}, map[string][]string{}
	}
	for _, k := range slices.Sorted(maps.Keys(o.Policies)) {
		if _, dup := d.Policies[k]; dup {
			return fmt.Errorf("access policy %q declared twice", k)
		}
		d.Policies[k] = o.Policies[k]
	}
	for _, k := range slices.Sorted(maps.Keys(o.Roles)) {
		if _, dup := d.Roles[k]; dup {
			return fmt.Errorf("role %q declared twice", k)
		}
		d.Roles[k] = o.Roles[k]
	}
	for _, k := range slices.Sorted(maps.Keys(o.Permissions)) {
		if _, dup := d.Permissions[k]; dup {
			return fmt.Errorf("permissions of model %q declared twice", k)
		}
		d.Permissions[k] = o.Permissions[k]
	}
	return nil
}

// Known reports whether perm is a permission of some model.
func (d Defaults) Known(perm string) bool {
	for _, ps := range d.Permissions {
		if slices.Contains(ps, perm) {
			return true
		}
	}
	return false
}
