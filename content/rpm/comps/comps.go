package comps

import (
	"encoding/json"
)

// Comps is what Pulp keeps of a comps.xml document.
type Comps struct {
	Groups       []Group
	Categories   []Category
	Environments []Environment
	Langpacks    *Langpacks // nil when the document has no langpacks match
}

// Group is a <group>: a named set of packages installed together.
type Group struct {
	ID           string            `json:"id"`
	Default      bool              `json:"default"`
	UserVisible  bool              `json:"user_visible"`
	DisplayOrder *int              `json:"display_order"` // nil when the file gives none
	Name         string            `json:"name"`
	Description  string            `json:"description"`
	Packages     []Package         `json:"packages"`
	BiarchOnly   bool              `json:"biarch_only"`
	DescByLang   map[string]string `json:"desc_by_lang"` // xml:lang -> description
	NameByLang   map[string]string `json:"name_by_lang"` // xml:lang -> name
	Digest       string            `json:"digest"`       // Sum at parse time
}

// PackageType is how a group's package is installed with it. The values are libcomps'
// and are what Pulp's API shows.
type PackageType int

// The package types, numbered as libcomps numbers them.
const (
	TypeDefault     PackageType = 0
	TypeOptional    PackageType = 1
	TypeConditional PackageType = 2
	TypeMandatory   PackageType = 3
	TypeUnknown     PackageType = 4
)

// String returns the type's name in comps.xml; TypeUnknown reads "default", as libcomps
// writes it.
func (t PackageType) String() string {
	switch t {
	case TypeOptional:
		return "optional"
	case TypeConditional:
		return "conditional"
	case TypeMandatory:
		return "mandatory"
	}
	return "default"
}

func packageType(s string) PackageType {
	switch s {
	case "default":
		return TypeDefault
	case "optional":
		return TypeOptional
	case "conditional":
		return TypeConditional
	case "mandatory", "":
		return TypeMandatory
	}
	return TypeUnknown
}

// Package is one <packagereq> of a group.
type Package struct {
	Name         string      `json:"name"`
	Type         PackageType `json:"type"`
	BaseArchOnly bool        `json:"basearchonly"`
	Requires     string      `json:"requires"` // for TypeConditional: the package that pulls it in
}

// MarshalJSON renders p as Pulp does: basearchonly and requires are null when unset.
func (p Package) MarshalJSON() ([]byte, error) {
	v := struct {
		Name         string      `json:"name"`
		Type         PackageType `json:"type"`
		BaseArchOnly *bool       `json:"basearchonly"`
		Requires     *string     `json:"requires"`
	}{Name: p.Name, Type: p.Type}
	if p.BaseArchOnly {
		v.BaseArchOnly = &p.BaseArchOnly
	}
	if p.Requires != "" {
		v.Requires = &p.Requires
	}
	return json.Marshal(v)
}

// GroupID is a <groupid>: a group listed by a category or an environment.
type GroupID struct {
	Name    string `json:"name"`
	Default bool   `json:"default"`
}

// Category is a <category>: groups shown together.
type Category struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Description  string            `json:"description"`
	DisplayOrder *int              `json:"display_order"`
	GroupIDs     []GroupID         `json:"group_ids"`
	DescByLang   map[string]string `json:"desc_by_lang"`
	NameByLang   map[string]string `json:"name_by_lang"`
	Digest       string            `json:"digest"`
}

// Environment is an <environment>: groups that make up an installation type, and
// groups offered as options on top.
type Environment struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Description  string            `json:"description"`
	DisplayOrder *int              `json:"display_order"`
	GroupIDs     []GroupID         `json:"group_ids"`  // <grouplist>
	OptionIDs    []GroupID         `json:"option_ids"` // <optionlist>
	DescByLang   map[string]string `json:"desc_by_lang"`
	NameByLang   map[string]string `json:"name_by_lang"`
	Digest       string            `json:"digest"`
}

// Langpacks is the document's <langpacks>: for a package name, the pattern of the
// package that holds its translations ("aspell" -> "aspell-%s").
type Langpacks struct {
	Matches map[string]string `json:"matches"`
	Digest  string            `json:"digest"`
}
