package ansible

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"pith/content"
	"pith/content/ansible/collection"
)

// Which versions a sync takes, as pulp_ansible's CollectionSyncFirstStage decides: every
// version of the upstream, or those of the requirements file that match their ranges
// (only the highest ones with sync_highest_versions), then, with sync_dependencies,
// the dependencies of each version taken, transitively, unless a version already
// taken matches; versions the upstream excludes (its excludes list) or that have no
// signature (signed_only) are left out. Versions are handed on as they are decided, so
// that memory holds what is being decided and a set of the names seen, not the whole
// upstream.

// Bounds of what one sync decides.
const (
	// maxQueued bounds the collections asked for: requirements, dependencies, or the
	// upstream's collections.
	maxQueued = 50000
	// maxVersions bounds the versions considered.
	maxVersions = 500000
)

// resolver decides the versions of one sync and sends them to out.
type resolver struct {
	s        *syncRun
	out      chan<- *upstreamVersion
	addDeps  bool
	excludes map[string]collection.Range
	queue    []requirement
	pending  map[string]bool                         // keys of every requirement queued
	seen     map[string]map[string]collection.SemVer // namespace.name → versions considered
	artifact map[string]string                       // sha256 → the version it is the artifact of
	count    int
	progress func(int64)
}

// run decides every version: the requirements' and their dependencies', or the whole
// upstream's.
func (r *resolver) run(ctx context.Context, reqs []requirement) error {
	g, err := r.s.galaxy(ctx, r.s.remote.URL)
	if err != nil {
		return err
	}
	if g.v == 3 {
		if err := r.readExcludes(ctx, g); err != nil {
			return err
		}
	}
	if len(reqs) == 0 {
		done, err := r.unpaginated(ctx, g)
		if done || err != nil {
			return err
		}
		err = r.s.pages(ctx, g.firstPage(g.api+"/collections/"), func(w *walker) error {
			var c struct {
				Namespace any    `json:"namespace"` // v3: its name; v2: {"name": …}
				Name      string `json:"name"`
			}
			if err := w.decode(&c, maxSmallValue); err != nil {
				return err
			}
			ns, _ := c.Namespace.(string)
			if m, ok := c.Namespace.(map[string]any); ok {
				ns, _ = m["name"].(string)
			}
			req, err := newRequirement(ns+"."+c.Name, "*")
			if err != nil {
				return fmt.Errorf("the collection list: %w", err)
			}
			return r.enqueue(req)
		})
		if err != nil {
			return err
		}
	}
	for _, req := range reqs {
		if err := r.enqueue(req); err != nil {
			return err
		}
	}
	return r.drain(ctx)
}

// enqueue queues a requirement not queued before.
func (r *resolver) enqueue(req requirement) error {
	if r.pending[req.key()] {
		return nil
	}
	if len(r.queue) == maxQueued {
		return &syncError{fmt.Errorf("more than %d collections to sync (requirements, their dependencies, or the upstream's)", maxQueued)}
	}
	r.pending[req.key()] = true
	r.queue = append(r.queue, req)
	return nil
}

// readExcludes reads the upstream's excludes list (galaxy_ng's), a requirements file
// in JSON; a missing or unreadable one excludes nothing, as in pulp_ansible.
func (r *resolver) readExcludes(ctx context.Context, g *galaxy) error {
	f, n, err := r.s.fetch(ctx, g.api+"/excludes/", maxRequirementsFile)
	if errors.Is(err, errNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	text := make([]byte, n)
	if _, err := f.ReadAt(text, 0); err != nil {
		return err
	}
	reqs, err := parseRequirements(string(text))
	if err != nil {
		return nil
	}
	for _, req := range reqs {
		r.excludes[req.Name] = req.rng
	}
	return nil
}

// unpaginated reads every version from the upstream's unpaginated list, when it has
// one (pulp_ansible's collection_versions/all/): staged whole, indexed by collection,
// then taken collection by collection. done is false when there is no such list.
func (r *resolver) unpaginated(ctx context.Context, g *galaxy) (done bool, err error) {
	if g.v != 3 {
		return false, nil
	}
	u := g.api + "/collection_versions/all/"
	f, n, err := r.s.fetch(ctx, u, 1<<62) // the setting bounds it
	if errors.Is(err, errNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	r.s.keep(f)
	type entry struct {
		version collection.SemVer
		at      span
	}
	index := map[string][]entry{}
	w := newWalker(f, 0, n)
	err = w.array(func() error {
		at, err := w.skip(maxAnswer)
		if err != nil {
			return err
		}
		v, err := readVersion(spanWalker(at), g.url, g.v, false)
		if err != nil {
			return err
		}
		if r.count++; r.count > maxVersions {
			return &syncError{fmt.Errorf("more than %d collection versions", maxVersions)}
		}
		name := v.Namespace + "." + v.Name
		index[name] = append(index[name], entry{v.sem, at})
		return nil
	})
	if err != nil {
		return true, malformed(u, err)
	}
	r.count = 0
	for _, name := range slices.Sorted(maps.Keys(index)) {
		es := index[name]
		if h := r.s.highest; h > 0 {
			vs := make([]collection.SemVer, len(es))
			for i, e := range es {
				vs[i] = e.version
			}
			keep := highest(vs, h)
			es = slices.DeleteFunc(es, func(e entry) bool {
				return !slices.ContainsFunc(keep, func(k collection.SemVer) bool { return k.Compare(e.version) == 0 })
			})
		}
		for _, e := range es {
			v, err := readVersion(spanWalker(e.at), g.url, g.v, false)
			if err != nil {
				return true, malformed(u, err)
			}
			if err := r.take(ctx, v); err != nil {
				return true, err
			}
		}
		delete(index, name)
	}
	return true, nil
}

// highest is the n highest versions, releases before pre-releases (pulp_ansible's
// _limit_to_highest_versions).
func highest(vs []collection.SemVer, n int) []collection.SemVer {
	vs = slices.Clone(vs)
	slices.SortFunc(vs, func(a, b collection.SemVer) int {
		if ar, br := len(a.Prerelease) == 0, len(b.Prerelease) == 0; ar != br {
			if ar {
				return -1
			}
			return 1
		}
		return b.Compare(a)
	})
	return vs[:min(n, len(vs))]
}

// fetched is what was read of one requirement: its versions, in the order taken.
type fetched struct {
	done chan struct{}
	vs   []*upstreamVersion
	err  error
}

// drain reads the queued requirements, several at a time, and takes their versions in
// queue order, so that what a dependency finds already taken does not depend on which
// answer came first. Dependencies join the end of the queue.
func (r *resolver) drain(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel(nil)
		wg.Wait()
	}()
	window := max(1, r.s.d.Concurrency())
	slots := make([]*fetched, 0, len(r.queue))
	started := 0
	for h := 0; h < len(r.queue); h++ {
		for ; started < len(r.queue) && started < h+window; started++ {
			f := &fetched{done: make(chan struct{})}
			slots = append(slots, f)
			req := r.queue[started]
			wg.Go(func() {
				defer close(f.done)
				f.vs, f.err = r.versions(ctx, req)
				if f.err != nil {
					cancel(f.err)
				}
			})
		}
		f := slots[h]
		<-f.done
		if f.err != nil {
			return f.err
		}
		for _, v := range f.vs {
			if err := r.take(ctx, v); err != nil {
				cancel(err)
				return err
			}
		}
		slots[h] = nil
	}
	return nil
}

// versions reads the versions of a requirement that match its range: the collection's
// versions list, then the detail of each version matched (pulp_ansible's
// _fetch_paginated_collection_metadata).
func (r *resolver) versions(ctx context.Context, req requirement) ([]*upstreamVersion, error) {
	root := req.Source
	if root == "" {
		root = r.s.remote.URL
	}
	g, err := r.s.galaxy(ctx, root)
	if err != nil {
		return nil, err
	}
	ns, name := req.split()
	list := fmt.Sprintf("%s/collections/%s/%s/", g.api, ns, name)
	var matched []versionEntry
	var sems []collection.SemVer
	err = r.s.pages(ctx, g.firstPage(list+"versions/"), func(w *walker) error {
		var e versionEntry
		if err := w.decode(&e, maxSmallValue); err != nil {
			return err
		}
		sv, err := collection.ParseVersion(e.Version)
		if err != nil {
			return fmt.Errorf("collection %s: version %q: %v", req.Name, e.Version, err)
		}
		if req.rng.Match(sv) {
			matched, sems = append(matched, e), append(sems, sv)
		}
		return nil
	})
	if errors.Is(err, errNotFound) {
		return nil, r.notFound(req, g)
	}
	if err != nil {
		return nil, err
	}
	if h := r.s.highest; h > 0 {
		keep := highest(sems, h)
		var kept []versionEntry
		for i, e := range matched {
			if slices.ContainsFunc(keep, func(k collection.SemVer) bool { return k.Compare(sems[i]) == 0 }) {
				kept = append(kept, e)
			}
		}
		matched = kept
	}
	out := make([]*upstreamVersion, len(matched))
	err = content.Parallel(ctx, r.s.d.Concurrency(), slices.Values(indexes(len(matched))), func(i int) string {
		return req.Name + " " + matched[i].Version
	}, func(ctx context.Context, i int) error {
		u := list + "versions/" + matched[i].Version + "/"
		if matched[i].Href != "" {
			u = resolve(list, matched[i].Href)
		}
		v, err := r.s.detail(ctx, g.v, u)
		out[i] = v
		return err
	})
	return out, err
}

func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// notFound is the error of a collection the upstream does not have.
func (r *resolver) notFound(req requirement, g *galaxy) error {
	if req.neededBy != "" {
		return &syncError{fmt.Errorf("collection %s (%s, a dependency of %s) does not exist at %s", req.Name, req.Version, req.neededBy, g.url)}
	}
	return &syncError{fmt.Errorf("collection %s does not exist at %s", req.Name, g.url)}
}

// take decides on one version (pulp_ansible's _add_collection_version) and hands it on.
func (r *resolver) take(ctx context.Context, v *upstreamVersion) error {
	name := v.Namespace + "." + v.Name
	if _, dup := r.seen[name][v.Version]; dup {
		return nil
	}
	if r.count++; r.count > maxVersions {
		return &syncError{fmt.Errorf("more than %d collection versions", maxVersions)}
	}
	if r.seen[name] == nil {
		r.seen[name] = map[string]collection.SemVer{}
	}
	r.seen[name][v.Version] = v.sem
	r.progress(1)
	if rng, ok := r.excludes[name]; ok && rng.Match(v.sem) {
		return nil
	}
	if r.s.signedOnly && len(v.Signatures) == 0 {
		return nil
	}
	if v.GitURL != "" {
		return &syncError{fmt.Errorf("collection %s comes from git (%s); syncing it is not supported yet", v.label, v.GitURL)}
	}
	if other, dup := r.artifact[v.SHA256]; dup {
		return &syncError{fmt.Errorf("collection %s has the artifact of %s (sha256 %s)", v.label, other, v.SHA256)}
	}
	r.artifact[v.SHA256] = v.label
	if r.addDeps {
		for _, dep := range slices.Sorted(maps.Keys(v.Dependencies)) {
			req, err := newRequirement(dep, v.Dependencies[dep])
			if err != nil {
				return &syncError{fmt.Errorf("collection %s: dependency: %v", v.label, err)}
			}
			req.neededBy = v.label
			if r.pending[req.key()] || slices.ContainsFunc(slices.Collect(maps.Values(r.seen[dep])), req.rng.Match) {
				continue
			}
			if err := r.enqueue(req); err != nil {
				return err
			}
		}
	}
	select {
	case r.out <- v:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// detail reads a version's detail at u, from an API of version api.
func (s *syncRun) detail(ctx context.Context, api int, u string) (*upstreamVersion, error) {
	var v *upstreamVersion
	err := s.stageWalk(ctx, u, maxAnswer, func(w *walker) error {
		var err error
		v, err = readVersion(w, u, api, true)
		return err
	})
	if v != nil && v.Href == "" {
		v.Href = u
	}
	return v, err
}
