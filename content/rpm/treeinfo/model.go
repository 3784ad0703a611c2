package treeinfo

// DistributionTree is an installable tree as Pulp's rpm DistributionTree exposes it.
type DistributionTree struct {
	HeaderVersion      string  `json:"header_version"`
	ReleaseName        string  `json:"release_name"`
	ReleaseShort       string  `json:"release_short"`
	ReleaseVersion     string  `json:"release_version"`
	ReleaseIsLayered   bool    `json:"release_is_layered"`
	BaseProductName    *string `json:"base_product_name"`
	BaseProductShort   *string `json:"base_product_short"`
	BaseProductVersion *string `json:"base_product_version"`
	Arch               string  `json:"arch"`
	// BuildTimestamp is seconds since the epoch, -1 when an old-format file has none.
	BuildTimestamp float64    `json:"build_timestamp"`
	InstImage      *string    `json:"instimage"` // [stage2] instimage
	MainImage      *string    `json:"mainimage"` // [stage2] mainimage
	DiscNum        *int64     `json:"discnum"`
	TotalDiscs     *int64     `json:"totaldiscs"`
	Addons         []Addon    `json:"addons"`
	Checksums      []Checksum `json:"checksums"`
	Images         []Image    `json:"images"`
	Variants       []Variant  `json:"variants"`

	// Platforms are the tree's platforms ([tree] platforms, with Arch and every
	// platform that has images), sorted; Write needs them.
	Platforms []string `json:"-"`
	// MainVariant is the UID [general] names as the tree's variant, or "".
	MainVariant string `json:"-"`
}

// Checksum is one entry of [checksums].
type Checksum struct {
	Path     string `json:"path"`
	Checksum string `json:"checksum"` // "type:hex", e.g. "sha256:e3b0..."
}

// Image is one boot image; the same file listed for several platforms is one Image.
type Image struct {
	Name      string `json:"name"`      // its key, e.g. "kernel"
	Path      string `json:"path"`      // relative to the tree
	Platforms string `json:"platforms"` // sorted, ", "-separated, e.g. "x86_64, xen"
}

// Variant is a variant of the release ([variant-UID]), other than an addon.
type Variant struct {
	VariantID        string  `json:"variant_id"`
	UID              string  `json:"uid"`
	Name             string  `json:"name"`
	Type             string  `json:"type"`     // "variant" or "optional"
	Packages         string  `json:"packages"` // published: "Packages" or "<id>/Packages"
	SourcePackages   *string `json:"source_packages"`
	SourceRepository *string `json:"source_repository"`
	DebugPackages    *string `json:"debug_packages"`
	DebugRepository  *string `json:"debug_repository"`
	Identity         *string `json:"identity"`

	// Repository is where the variant's repository lives in the synced tree: "." for
	// the main repository, else VariantID.
	Repository string `json:"-"`
	// RemoteRepository is the repository path the remote tree states, which may
	// climb out of it ("../../AppStream/x86_64/os"); sync fetches it from there.
	RemoteRepository string `json:"-"`
	// Parent is the UID of the variant listing this one among its addons, or "".
	Parent string `json:"-"`
}

// Addon is an addon of a variant ([addon-UID]).
type Addon struct {
	AddonID  string `json:"addon_id"`
	UID      string `json:"uid"`
	Name     string `json:"name"`
	Type     string `json:"type"`     // "addon"
	Packages string `json:"packages"` // published: "<id>/Packages"

	Repository       string `json:"-"` // in the synced tree: AddonID
	RemoteRepository string `json:"-"` // as the remote tree states it
	Parent           string `json:"-"` // UID of the variant it belongs to
}
