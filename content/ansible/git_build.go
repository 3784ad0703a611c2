package ansible

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"pith/content/ansible/collection"
	"pith/content/gitsource"
	"pith/secret"
)

// gitBuildOptions say what to fetch and build.
type gitBuildOptions struct {
	gitsource.Options
	// Collection bounds the build and the reading back of the artifact; a zero field
	// takes collection.DefaultLimits' value.
	Collection collection.Limits
	// MetadataOnly is pulp_ansible's metadata_only: the artifact is built and read for
	// its metadata, then not kept (gitArtifact.Path is empty); the collection version
	// records the artifact's digest and size and RemoteURL as its remote artifact.
	MetadataOnly bool
}

// gitArtifact is a collection built from one commit of a git repository.
type gitArtifact struct {
	// Path is the .tar.gz in a temporary file of its own, which the caller removes
	// (Remove); "" with MetadataOnly.
	Path      string
	Version   *collection.Version // the artifact read back as an upload is read
	Built     *collection.Built
	Commit    string
	RemoteURL string // "<url>/commit/<commit>", where pulp_ansible says the artifact came from
}

// Remove removes the artifact's file, if any.
func (a *gitArtifact) Remove() error {
	if a.Path == "" {
		return nil
	}
	return os.Remove(a.Path)
}

// gitLimits are the artifact's own bounds (collection.DefaultLimits: what could be built
// from the tree could not be imported anyway) and ten minutes, for what l leaves zero.
func gitLimits(l gitsource.Limits) gitsource.Limits {
	c := collection.DefaultLimits()
	return l.Or(gitsource.Limits{Fetched: c.Compressed, Files: c.Entries, Checkout: c.Uncompressed, PathLen: c.PathLen, Depth: c.Depth, Timeout: 10 * time.Minute})
}

// buildGit fetches the ref, builds the collection at the root of its tree as
// `ansible-galaxy collection build` would (collection.Build), and reads the artifact
// back (collection.Read) as pulp_ansible's git sync hands it to galaxy-importer. The
// checkout is removed before buildGit returns. Errors are a *gitsource.Error of the fetch, or a
// *collection.Error (wrapped with the URL and commit) of the build or the read.
func buildGit(ctx context.Context, opt gitBuildOptions) (*gitArtifact, error) {
	opt.Limits = gitLimits(opt.Limits)
	co, err := gitsource.Fetch(ctx, opt.Options)
	if err != nil {
		return nil, err
	}
	defer co.Close()
	where := secret.Redact(strings.TrimRight(opt.URL, "/")) + " at " + co.Commit
	fail := func(what string, err error) error {
		return fmt.Errorf("git %s: %s: %w", where, what, err)
	}
	root, err := os.OpenRoot(co.Dir)
	if err != nil {
		return nil, fail("opening the checkout", err)
	}
	defer root.Close()
	f, err := os.CreateTemp(opt.TempDir, "pith-git-artifact-*.tar.gz")
	if err != nil {
		return nil, fail("making a temporary file", err)
	}
	a := &gitArtifact{Path: f.Name(), Commit: co.Commit, RemoteURL: strings.TrimRight(opt.URL, "/") + "/commit/" + co.Commit}
	ok := false
	defer func() {
		if !ok || opt.MetadataOnly {
			os.Remove(f.Name())
		}
	}()
	defer f.Close()
	if a.Built, err = collection.Build(root.FS(), f, collection.BuildOptions{Limits: opt.Collection, Root: co.Dir}); err != nil {
		return nil, fail("building the collection", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil, fail("reading the artifact back", err)
	}
	a.Version, err = collection.Read(f, collection.Options{Limits: opt.Collection, Expect: a.Built.Filename})
	if err != nil {
		return nil, fail("importing the collection", err)
	}
	if a.Version.SHA256 != a.Built.SHA256 {
		return nil, fail("reading the artifact back", errors.New("the file changed after it was written"))
	}
	if opt.MetadataOnly {
		a.Path = ""
	}
	ok = true
	return a, nil
}
