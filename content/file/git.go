package file

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"pith/api/rest"
	"pith/content"
	"pith/content/gitsource"
	"pith/meta"
	"pith/secret"
	"pith/task"
)

// Git sync, as pulp_file's: a git remote names a repository and a ref (git_ref, HEAD by
// default), and every file of the ref's tree becomes a file unit at its path, its bytes
// as git stores them (no .gitattributes conversion). A symbolic link is a file holding
// its target, as git stores it: never followed. Submodules are not fetched and add
// nothing. The files are stored (the remote has no download policy) and recorded with
// no remote source: a git remote cannot serve one file again.

// GitRemoteType is pulp_file's git remote.
const GitRemoteType = "file.git"

// gitRemoteIn is a git remote's body. policy is pulp_file's hidden field: accepted and
// ignored.
type gitRemoteIn struct {
	rest.RemoteIn
	GitRef string          `json:"git_ref" openapi:"minLength=1,default=HEAD"`
	Policy json.RawMessage `json:"policy,omitempty" openapi:"hidden"`
}

type gitRemoteResponse struct {
	rest.RemoteResponse
	GitRef string    `json:"git_ref" openapi:"default=HEAD"`
	Policy *struct{} `json:"policy,omitempty" openapi:"omit"`
}

// gitAttrs is what a git remote adds (its attrs).
type gitAttrs struct {
	GitRef string `json:"git_ref"`
}

// syncGit fetches the remote's ref, stores every file of its tree and makes the new
// version. A failed fetch (a missing ref, a tree past GitLimits) stores nothing.
func (p *Plugin) syncGit(ctx context.Context, r *task.Run, repo meta.Repository, remote meta.Remote, mirror bool) error {
	cfg, err := content.DownloadConfig(remote)
	if err != nil {
		return fmt.Errorf("remote %q: %w", remote.Name, err)
	}
	var ga gitAttrs
	json.Unmarshal(remote.Attrs, &ga)
	pc := r.Progress("sync.git.cloning", "Cloning Git Repository", 1)
	co, err := gitsource.Fetch(ctx, gitsource.Options{URL: remote.URL, Ref: ga.GitRef, Remote: cfg, Limits: p.GitLimits, Raw: true})
	if err != nil {
		pc.Finish(err)
		return fmt.Errorf("remote %q: %w", remote.Name, err)
	}
	defer co.Close()
	pc.Add(1)
	pc.Finish(nil)

	pt := r.Progress("sync.git.parsing_tree", "Parsing Git tree", -1)
	var ptrs lfsPointers
	entries, err := p.storeTree(ctx, co.Dir, &ptrs, func() { pt.Add(1) })
	if err == nil {
		var lfs []*entryResult
		lfs, err = p.resolveLFS(ctx, remote, &ptrs, p.GitLimits.Or(gitsource.DefaultLimits()).Checkout, func() { pt.Add(1) })
		entries = append(entries, lfs...)
	}
	pt.Finish(err)
	if err != nil {
		return fmt.Errorf("remote %q: git %s at %s: %w", remote.Name, secret.Redact(remote.URL), co.Commit, err)
	}
	return p.saveSync(ctx, r, repo, remote, entries, mirror, nil)
}

// storeTree stores every file and link of a checkout; each is an entry at its path. A
// small file that is a Git LFS pointer is recorded in ptrs instead.
func (p *Plugin) storeTree(ctx context.Context, dir string, ptrs *lfsPointers, stored func()) ([]*entryResult, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var entries []*entryResult
	err = fs.WalkDir(root.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, err := content.CleanRelativePath(path); err != nil {
			return err
		}
		var src io.Reader
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := root.Readlink(path)
			if err != nil {
				return err
			}
			src = strings.NewReader(target)
		case d.Type().IsRegular():
			f, err := root.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			src = f
			if info, err := f.Stat(); err == nil && info.Size() < maxLFSPointer {
				small, err := io.ReadAll(f)
				if err != nil {
					return err
				}
				if ptrs.add(path, small) {
					return nil
				}
				src = bytes.NewReader(small)
			}
		default:
			return nil
		}
		art, err := content.StoreFrom(ctx, p.core.Store, src, "")
		if err != nil {
			return fmt.Errorf("storing %s: %w", path, err)
		}
		entries = append(entries, &entryResult{Entry: Entry{RelativePath: path, Digest: art.SHA256, Size: art.Size}, artifact: &art})
		stored()
		return nil
	})
	return entries, err
}
