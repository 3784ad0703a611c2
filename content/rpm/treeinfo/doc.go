// Package treeinfo reads and writes .treeinfo files, the INI description of an
// installable (kickstart) tree: productmd formats 1.x and the older [general] format.
// It fills a DistributionTree with the fields Pulp's rpm plugin exposes, lists the
// files a sync must fetch (Files), and writes the .treeinfo a publication serves.
//
// Invariants:
//   - Every path that names a file inside the tree (images, [stage2], checksummed
//     files) is relative and stays inside the tree: no leading "/", no "..", checked
//     with content.CleanRelativePath. A variant's or addon's repository may climb
//     ("../../AppStream/x86_64/os", as RHEL and Rocky trees have it) because it only
//     locates the sub-repository on the remote; where the sub-repository lands is
//     Pulp's: "." for the main repository, else the variant's ID, which must match
//     Pulp's pattern [A-Za-z0-9._-]+ and not be "." or "..".
//   - Like Pulp, a variant's Packages is where its packages are published ("Packages"
//     or "<id>/Packages"), and HeaderVersion is "1.2", the format Write produces.
//   - Lists come out sorted (checksums by path, images by name and path, variants
//     and addons by UID), and Write writes sections and keys sorted, as productmd
//     does, so Parse(Write(t)) equals t except remote repository paths, which Write
//     replaces by local ones.
//   - Fields tagged json:"-" (repository paths, parents, platforms, main variant) are
//     not part of Pulp's API; like Pulp, publish re-parses the stored .treeinfo and
//     writes the published one from that.
//   - Input is bounded (MaxSize) and any problem is an *Error naming the file, the
//     line, the section and the key.
package treeinfo
