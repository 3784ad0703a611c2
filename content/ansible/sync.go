package ansible

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"pith/api/href"
	"pith/api/rest"
	"pith/content"
	"pith/content/ansible/collection"
	"pith/content/download"
	"pith/meta"
	"pith/task"
)

// The sync of an ansible repository from a collection remote (a Galaxy server), as
// pulp_ansible's: the versions the remote's settings ask for (sync_resolve.go) are
// stored as they are decided (sync_store.go), then the repository gets a new version
// of them (added to what it holds, or instead of it with mirror). A sync that fails
// leaves no version and takes back the units and artifacts it created.

// SyncTask is pulp_ansible's collection sync task.
const SyncTask = "pulp_ansible.app.tasks.collections.sync"

// SyncArgs are the arguments of a sync task.
type SyncArgs struct {
	Repository string `json:"repository"`
	Remote     string `json:"remote"`
	Mirror     bool   `json:"mirror"`
	// Optimize skips the sync when the upstream was not published anew since the last
	// sync (and nothing else changed).
	Optimize bool `json:"optimize"`
}

// syncRepository is repositories_ansible_ansible_sync: a sync from the remote given, or
// the repository's.
func (p *Plugin) syncRepository(w http.ResponseWriter, r *http.Request) error {
	env := p.core.Env()
	repo, err := env.RepoByPath(r)
	if err != nil {
		return err
	}
	var in syncIn
	if _, err := rest.DecodeBody(r, &in); err != nil {
		return err
	}
	remote, err := env.SyncRemote(r, repo, in.Remote)
	if err != nil {
		return err
	}
	spec := task.Spec{
		Exclusive: []string{href.Repository(repo.Type, repo.PulpID)},
		Shared:    []string{href.Remote(remote.Type, remote.PulpID)},
	}
	// One sync action for the three remote kinds, each its own task as in pulp_ansible.
	switch remote.Type {
	case CollectionRemoteType:
		spec.Name = SyncTask
		spec.Args = SyncArgs{Repository: repo.PulpID, Remote: remote.PulpID, Mirror: in.Mirror, Optimize: in.Optimize == nil || *in.Optimize}
	case RoleRemoteType:
		spec.Name, spec.Args = RoleSyncTask, RoleSyncArgs{Repository: repo.PulpID, Remote: remote.PulpID, Mirror: in.Mirror}
	case GitRemoteType:
		spec.Name, spec.Args = GitSyncTask, GitSyncArgs{Repository: repo.PulpID, Remote: remote.PulpID, Mirror: in.Mirror}
	default:
		return rest.BadField("remote", "An ansible repository cannot sync from a %s remote.", remote.Type)
	}
	return env.Dispatch(w, r, spec)
}

// syncState is what the last sync was made from; with an unchanged upstream, a sync
// that would be made from the same is skipped (optimize).
type syncState struct {
	Remote              string `json:"remote"`
	URL                 string `json:"url"`
	Requirements        string `json:"requirements_sha256"`
	SyncDependencies    bool   `json:"sync_dependencies"`
	SignedOnly          bool   `json:"signed_only"`
	SyncHighestVersions int    `json:"sync_highest_versions"`
	Policy              string `json:"policy"`
	Mirror              bool   `json:"mirror"`
	Version             int64  `json:"version"` // the version it made
}

// syncedAttrs are the members of an ansible repository's attrs a sync reads and writes.
type syncedAttrs struct {
	LastSyncedMetadataTime *string    `json:"last_synced_metadata_time"`
	LastSync               *syncState `json:"last_sync"`
}

// syncRun is one sync's state.
type syncRun struct {
	p          *Plugin
	r          *task.Run
	d          *download.Downloader
	remote     meta.Remote
	highest    int  // sync_highest_versions, 0 for all
	signedOnly bool // signed_only
	apis       galaxies
	stage      stage
	kept       []*os.File // staged answers spans point into
}

func (p *Plugin) runSync(ctx context.Context, r *task.Run) error {
	var a SyncArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	repo, err := meta.RepositoryByPulpID(ctx, p.db, a.Repository)
	if err != nil {
		return err
	}
	remote, err := meta.RemoteByPulpID(ctx, p.db, a.Remote)
	if err != nil {
		return err
	}
	var settings collectionRemoteIn
	json.Unmarshal(remote.Attrs, &settings)
	var reqs []requirement
	if f := settings.RequirementsFile; f != nil && *f != "" {
		if reqs, err = parseRequirements(*f); err != nil {
			return fmt.Errorf("remote %q: requirements_file: %w", remote.Name, err)
		}
	}
	d, err := content.Downloader(remote)
	if err != nil {
		return err
	}
	defer d.CloseIdleConnections()
	s := &syncRun{p: p, r: r, d: d, remote: remote, signedOnly: settings.SignedOnly}
	if h := settings.SyncHighestVersions; h != nil {
		s.highest = int(*h)
	}
	defer s.close()

	state := syncState{Remote: remote.PulpID, URL: remote.URL, SyncDependencies: settings.SyncDependencies, SignedOnly: settings.SignedOnly,
		SyncHighestVersions: s.highest, Policy: remote.Policy, Mirror: a.Mirror, Version: repo.LatestVersion}
	if f := settings.RequirementsFile; f != nil {
		sum := sha256.Sum256([]byte(*f))
		state.Requirements = hex.EncodeToString(sum[:])
	}
	published, skip, err := s.unchanged(ctx, repo, a, reqs, state)
	if err != nil || skip {
		return err
	}

	// The versions, decided and stored at once: either side's failure stops both.
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	decided := make(chan *upstreamVersion, 2*storeBatch)
	pm := r.Progress("sync.parsing.metadata", "Parsing CollectionVersion Metadata", 0)
	res := &resolver{s: s, out: decided, addDeps: len(reqs) > 0 && settings.SyncDependencies, excludes: map[string]collection.Range{},
		pending: map[string]bool{}, seen: map[string]map[string]collection.SemVer{}, artifact: map[string]string{},
		progress: func(n int64) { pm.Add(n) }}
	resolved := make(chan error, 1)
	go func() {
		err := res.run(sctx, reqs)
		if err != nil {
			cancel(err)
		}
		close(decided)
		resolved <- err
	}()
	st := newStorer(s)
	err = st.run(sctx, decided)
	if err != nil {
		cancel(err)
	}
	if rerr := <-resolved; err == nil {
		err = rerr
	}
	if c := context.Cause(sctx); err != nil && c != nil {
		err = c // the first failure, not the cancel it caused on the other side
	}
	pm.Finish(err)
	st.finish(err)
	if err != nil {
		st.undo(ctx)
		return err
	}

	// The new version, and what it was made from.
	var v meta.Version
	var created bool
	err = p.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		v, created, err = meta.NewVersion(ctx, tx, repo.ID, meta.Change{RemoveAll: a.Mirror, Add: st.units})
		if err != nil || !created {
			return err
		}
		// As pulp_ansible: the upstream's publication time is kept with a new version only,
		// and only when the sync read it (the repository's own remote).
		var t *string
		if published != nil {
			s := published.UTC().Format("2006-01-02T15:04:05.000000Z")
			t = &s
		}
		if err := meta.SetRepositoryAttr(ctx, tx, repo.ID, "last_synced_metadata_time", t); err != nil {
			return err
		}
		state.Version = v.Number
		return meta.SetRepositoryAttr(ctx, tx, repo.ID, "last_sync", state)
	})
	if err != nil {
		st.undo(ctx)
		return fmt.Errorf("save sync of repository %q: %w", repo.Name, err)
	}
	if !created {
		return nil
	}
	p.core.Invalidate()
	if repo, err = meta.RepositoryByID(ctx, p.db, repo.ID); err != nil {
		return err
	}
	return p.core.VersionMade(ctx, r, repo, v)
}

// unchanged reads when the upstream was last published and decides whether the sync
// can be skipped, as pulp_ansible's _should_we_sync does: only a sync from the
// repository's own remote reads it, from a v3 API; it skips when optimizing, when
// every requirement comes from the remote, and when the time is the one kept by the
// last sync (which pith keeps only with the same settings, remote and repository
// version; pulp_ansible forgets it when the remote changes).
func (s *syncRun) unchanged(ctx context.Context, repo meta.Repository, a SyncArgs, reqs []requirement, state syncState) (*time.Time, bool, error) {
	if repo.RemotePulpID == nil || *repo.RemotePulpID != s.remote.PulpID {
		return nil, false, nil
	}
	p := s.r.Progress("sync.no_change", "no_change: Checking if remote changed since last sync.", -1)
	published, skip, err := s.published(ctx, repo, a, reqs, state)
	if err != nil {
		p.Finish(err)
		return nil, false, err
	}
	if skip {
		// The report's message says so, as pulp_ansible's does.
		p.Finish(nil)
		s.r.Progress("sync.no_change", fmt.Sprintf("no-op: %s did not change since last sync - %s", s.remote.URL, published.UTC().Format(time.RFC3339Nano)), 0).Finish(nil)
		return published, true, nil
	}
	p.Finish(nil)
	return published, false, nil
}

func (s *syncRun) published(ctx context.Context, repo meta.Repository, a SyncArgs, reqs []requirement, state syncState) (*time.Time, bool, error) {
	g, err := s.galaxy(ctx, s.remote.URL)
	if err != nil || g.v != 3 {
		return nil, false, err
	}
	var root struct {
		Published *string `json:"published"`
	}
	if err := s.getSmall(ctx, g.api+"/", &root); errors.Is(err, errNotFound) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	if root.Published == nil {
		return nil, false, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *root.Published)
	if err != nil {
		return nil, false, fmt.Errorf("%s/: published %q is not a time", g.api, *root.Published)
	}
	if !a.Optimize {
		return &t, false, nil
	}
	for _, r := range reqs {
		if r.Source != "" && r.Source != s.remote.URL {
			return &t, false, nil
		}
	}
	var attrs syncedAttrs
	json.Unmarshal(repo.Attrs, &attrs)
	if attrs.LastSyncedMetadataTime == nil || attrs.LastSync == nil || *attrs.LastSync != state {
		return &t, false, nil
	}
	last, err := time.Parse(time.RFC3339Nano, *attrs.LastSyncedMetadataTime)
	return &t, err == nil && last.Equal(t), nil
}

// stage holds the answers whose large values a sync reads later (a version's detail,
// a docs blob), in one unnamed temporary file, appended to at once by many readers.
type stage struct {
	mu  sync.Mutex
	f   *os.File
	end int64
}

// add copies n bytes of src to the stage and returns where they are.
func (st *stage) add(src *os.File, n int64) (*os.File, int64, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.f == nil {
		f, err := content.TempFile()
		if err != nil {
			return nil, 0, err
		}
		st.f = f
	}
	off := st.end
	if _, err := io.Copy(io.NewOffsetWriter(st.f, off), io.NewSectionReader(src, 0, n)); err != nil {
		return nil, 0, fmt.Errorf("stage an answer: %w", err)
	}
	st.end += n
	return st.f, off, nil
}

// stageWalk fetches an answer into the stage and walks it there, so that the spans fn
// records stay readable until the sync ends.
func (s *syncRun) stageWalk(ctx context.Context, u string, limit int64, fn func(w *walker) error) error {
	f, n, err := s.fetch(ctx, u, limit)
	if err != nil {
		return err
	}
	sf, off, err := s.stage.add(f, n)
	f.Close()
	if err != nil {
		return err
	}
	if err := fn(newWalker(sf, off, n)); err != nil {
		return malformed(u, err)
	}
	return nil
}

// keep holds a staged answer open until the sync ends.
func (s *syncRun) keep(f *os.File) { s.kept = append(s.kept, f) }

func (s *syncRun) close() {
	for _, f := range s.kept {
		f.Close()
	}
	if s.stage.f != nil {
		s.stage.f.Close()
	}
}
