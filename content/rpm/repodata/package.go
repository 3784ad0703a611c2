package repodata

// Package is one rpm as yum metadata describes it: the union of its primary, filelists
// and other entries. The RPM header reader (content/rpm/rpmfile) fills the same type from
// an .rpm file, and the writers turn it back into metadata fragments, so a package's
// metadata is derived once, at import, and publishing never re-reads packages.
//
// Field names follow Pulp's rpm Package (the API exposes them under those names).
type Package struct {
	Name    string `json:"name"`
	Epoch   string `json:"epoch"` // "0" when the package has none
	Version string `json:"version"`
	Release string `json:"release"`
	Arch    string `json:"arch"` // "src" for source packages

	PkgID        string `json:"pkgId"`         // checksum of the .rpm file, lower-case hex
	ChecksumType string `json:"checksum_type"` // "sha256", "sha1", "md5", ...

	Summary     string `json:"summary"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Packager    string `json:"rpm_packager"`
	License     string `json:"rpm_license"`
	Vendor      string `json:"rpm_vendor"`
	Group       string `json:"rpm_group"`
	BuildHost   string `json:"rpm_buildhost"`
	SourceRPM   string `json:"rpm_sourcerpm"` // empty for source packages

	TimeFile  int64 `json:"time_file"`  // seconds since the epoch
	TimeBuild int64 `json:"time_build"` // seconds since the epoch

	SizePackage   int64 `json:"size_package"`
	SizeInstalled int64 `json:"size_installed"`
	SizeArchive   int64 `json:"size_archive"`

	LocationHref string `json:"location_href"` // relative to the repository root
	LocationBase string `json:"location_base"` // usually empty

	// HeaderStart and HeaderEnd are the byte range of the header in the .rpm file
	// (primary's rpm:header-range).
	HeaderStart int64 `json:"rpm_header_start"`
	HeaderEnd   int64 `json:"rpm_header_end"`

	Provides    []Dep `json:"provides"`
	Requires    []Dep `json:"requires"`
	Conflicts   []Dep `json:"conflicts"`
	Obsoletes   []Dep `json:"obsoletes"`
	Suggests    []Dep `json:"suggests"`
	Enhances    []Dep `json:"enhances"`
	Recommends  []Dep `json:"recommends"`
	Supplements []Dep `json:"supplements"`

	// IsModular says a module of the same repository lists the package among its
	// artifacts (sync sets it; yum metadata has no such field).
	IsModular bool `json:"is_modular,omitempty"`

	Files      []File      `json:"files"`      // every file (filelists), not just primary's subset
	Changelogs []Changelog `json:"changelogs"` // as other.xml lists them: oldest first (rpmfile gives header order, newest first)
}

// Dep is one capability (a requires, provides, ... entry). A rich dependency such as
// "(foo if bar)" is carried whole in Name with Flags empty.
type Dep struct {
	Name    string `json:"name"`
	Flags   string `json:"flags,omitempty"` // "EQ", "LT", "LE", "GT", "GE", or "" for no version
	Epoch   string `json:"epoch,omitempty"`
	Version string `json:"version,omitempty"`
	Release string `json:"release,omitempty"`
	Pre     bool   `json:"pre,omitempty"` // requires only: needed before install (pre="1")
}

// File is one path the package installs.
type File struct {
	Type string `json:"type,omitempty"` // "" for a regular file, "dir" or "ghost"
	Path string `json:"path"`           // absolute
}

// Changelog is one changelog entry.
type Changelog struct {
	Author string `json:"author"`
	Date   int64  `json:"date"` // seconds since the epoch
	Text   string `json:"text"`
}

// NEVRA is the package's name-epoch:version-release.arch, the form dnf prints.
func (p *Package) NEVRA() string {
	e := p.Epoch
	if e == "" {
		e = "0"
	}
	return p.Name + "-" + e + ":" + p.Version + "-" + p.Release + "." + p.Arch
}
