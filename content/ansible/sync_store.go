package ansible

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"pith/content"
	"pith/content/ansible/collection"
	"pith/content/download"
	"pith/meta"
	"pith/task"
)

// Storing the versions a sync decided, a batch at a time: what the upstream must send
// is fetched for the whole batch at once (the artifacts with policy immediate, verified
// against the sha256 the upstream lists; the docs blobs and, on demand, the versions'
// details), then each new unit is built, one at a time (an artifact read through
// collection.Read, so that one that disagrees with what the upstream says of it fails;
// on demand, what the upstream says), and written with its documents.

// Bounds of the storing.
const (
	// storeBatch is how many versions are fetched for at once.
	storeBatch = 50
	// flushBytes is how many bytes of documents are held before they are written.
	flushBytes = 8 << 20
)

// storer stores the decided versions and remembers what it created, to take it back
// when the sync fails.
type storer struct {
	s         *syncRun
	immediate bool
	units     []int64 // every unit of the sync
	mu        sync.Mutex
	created   []int64 // units the sync created
	artifacts []int64 // artifacts the sync created
	// Progress: artifacts downloaded, docs blobs downloaded, units stored.
	pd, pb, pa *task.Progress
}

func newStorer(s *syncRun) *storer {
	st := &storer{s: s, immediate: s.remote.Policy == "immediate"}
	if st.immediate {
		st.pd = s.r.Progress("sync.downloading.artifacts", "Downloading Artifacts", 0)
	}
	st.pb = s.r.Progress("sync.downloading.docs_blob", "Downloading Docs Blob", 0)
	st.pa = s.r.Progress("associating.content", "Associating Content", 0)
	return st
}

// finish ends the progress reports.
func (st *storer) finish(err error) {
	for _, p := range []*task.Progress{st.pd, st.pb, st.pa} {
		if p != nil {
			p.Finish(err)
		}
	}
}

// item is a decided version being stored.
type item struct {
	v        *upstreamVersion
	unit     *meta.Content // stored before this sync
	artifact *int64        // the stored artifact (immediate)
	docs     span          // the upstream's docs blob
}

// run stores every version in, batching what has arrived.
func (st *storer) run(ctx context.Context, in <-chan *upstreamVersion) error {
	for v := range in {
		batch := []*item{{v: v}}
	fill:
		for len(batch) < storeBatch {
			select {
			case v, ok := <-in:
				if !ok {
					break fill
				}
				batch = append(batch, &item{v: v})
			default:
				break fill
			}
		}
		if err := st.batch(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}

func (st *storer) batch(ctx context.Context, items []*item) error {
	db := st.s.p.db
	for _, it := range items {
		c, err := meta.ContentByKey(ctx, db, CollectionVersionType, it.v.SHA256)
		if err == nil {
			it.unit = &c
		} else if !errors.Is(err, meta.ErrNotFound) {
			return err
		}
	}
	err := content.Parallel(ctx, st.s.d.Concurrency(), slices.Values(items), func(it *item) string { return "collection " + it.v.label },
		func(ctx context.Context, it *item) error { return st.fetch(ctx, it) })
	if err != nil {
		return err
	}
	var units []meta.NewUnit
	var docs []map[string][]byte
	var ups []*upstreamVersion
	held := 0
	for _, it := range items {
		u, d, err := st.build(ctx, it)
		if err != nil {
			return err
		}
		units, docs, ups = append(units, u), append(docs, d), append(ups, it.v)
		for _, b := range d {
			held += len(b)
		}
		if held >= flushBytes {
			if err := st.save(ctx, units, docs, ups); err != nil {
				return err
			}
			units, docs, ups, held = nil, nil, nil, 0
		}
	}
	return st.save(ctx, units, docs, ups)
}

// fetch gets what the upstream must send for a version: its artifact (immediate, when
// not stored), and for a new unit its docs blob (v3) and, on demand, its detail.
func (st *storer) fetch(ctx context.Context, it *item) error {
	s, v := st.s, it.v
	if st.immediate {
		if err := st.fetchArtifact(ctx, it); err != nil {
			return err
		}
	}
	if it.unit != nil || v.Href == "" {
		return nil
	}
	base := v.Href
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	if v.api == 3 {
		err := s.stageWalk(ctx, base+"docs-blob/", maxAnswer, func(w *walker) error {
			return w.object(func(key string) error {
				var err error
				if key == "docs_blob" {
					it.docs, err = w.skip(maxDocument)
				} else {
					_, err = w.skip(maxAnswer)
				}
				return err
			})
		})
		if err != nil && !errors.Is(err, errNotFound) {
			return err
		}
		st.pb.Add(1)
	}
	if !st.immediate && !v.detail {
		d, err := s.detail(ctx, v.api, v.Href)
		if err != nil {
			return err
		}
		if d.Namespace != v.Namespace || d.Name != v.Name || d.Version != v.Version || d.SHA256 != v.SHA256 {
			return fmt.Errorf("the detail at %s is of %s, sha256 %s", v.Href, d.label, d.SHA256)
		}
		v.manifest, v.files, v.detail = d.manifest, d.files, true
	}
	return nil
}

// fetchArtifact downloads a version's artifact unless it is stored, verified against
// the size and sha256 the upstream lists.
func (st *storer) fetchArtifact(ctx context.Context, it *item) error {
	s, v := st.s, it.v
	a, err := meta.ArtifactBySHA256(ctx, s.p.db, v.SHA256)
	if err == nil {
		if _, err := s.p.core.Store.Stat(ctx, v.SHA256); err == nil {
			it.artifact = &a.ID
			return nil
		}
	} else if !errors.Is(err, meta.ErrNotFound) {
		return err
	}
	dg, err := content.FetchBlob(ctx, s.p.core.Store, s.d, v.DownloadURL, download.Expect{Size: v.Size, SHA256: v.SHA256})
	if err != nil {
		return err
	}
	a, created, err := meta.PutArtifact(ctx, s.p.db, meta.ArtifactOf(dg))
	if err != nil {
		return err
	}
	if created {
		st.mu.Lock()
		st.artifacts = append(st.artifacts, a.ID)
		st.mu.Unlock()
	}
	it.artifact = &a.ID
	st.pd.Add(1)
	return nil
}

// build makes a version's unit with its documents; a unit stored before gets only its
// file's remote source (and artifact).
func (st *storer) build(ctx context.Context, it *item) (meta.NewUnit, map[string][]byte, error) {
	v := it.v
	size := v.Size
	file := meta.ContentFile{ArtifactID: it.artifact, RemoteID: &st.s.remote.ID, URL: v.DownloadURL, Size: &size, SHA256: v.SHA256}
	if it.unit != nil {
		file.RelativePath = it.unit.RelativePath
		return meta.NewUnit{Content: *it.unit, Files: []meta.ContentFile{file}}, nil, nil
	}
	cv, err := st.version(ctx, it)
	if err != nil {
		return meta.NewUnit{}, nil, fmt.Errorf("collection %s: %w", v.label, err)
	}
	c, docs, err := cvUnit(cv, nil)
	if err != nil {
		return meta.NewUnit{}, nil, err
	}
	if null, err := it.docs.null(); err != nil {
		return meta.NewUnit{}, nil, err
	} else if !null {
		if docs[docsBlobDoc], err = it.docs.read(); err != nil {
			return meta.NewUnit{}, nil, err
		}
	} else if !st.immediate {
		docs[docsBlobDoc] = []byte("{}") // pulp_ansible's default
	}
	if !st.immediate {
		for name, sp := range map[string]span{manifestDoc: v.manifest, filesDoc: v.files} {
			if docs[name], err = sp.read(); err != nil {
				return meta.NewUnit{}, nil, err
			}
			if null, _ := sp.null(); null {
				docs[name] = []byte("{}")
			}
		}
	}
	file.RelativePath = c.RelativePath
	return meta.NewUnit{Content: c, Files: []meta.ContentFile{file}}, docs, nil
}

// version is what a new unit is made of: with policy immediate, the artifact as
// collection.Read reads it, which must be the version the upstream says it is; on
// demand, what the upstream says. The contents come from the upstream when it lists
// them, as the docs blob does (pulp_ansible keeps both from the upstream's import).
func (st *storer) version(ctx context.Context, it *item) (*collection.Version, error) {
	v := it.v
	var cv *collection.Version
	if st.immediate {
		rc, err := st.s.p.core.Store.Open(ctx, v.SHA256)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		cv, err = collection.Read(rc, collection.Options{Expect: collection.Filename{Namespace: v.Namespace, Name: v.Name, Version: v.Version}})
		if err != nil {
			return nil, fmt.Errorf("the artifact from %s: %w", v.DownloadURL, err)
		}
	} else {
		m := v.meta
		cv = &collection.Version{Namespace: v.Namespace, Name: v.Name, Version: v.Version, SemVer: v.sem, Authors: m.Authors,
			Description: deref(m.Description), Documentation: deref(m.Documentation), Homepage: deref(m.Homepage),
			Issues: deref(m.Issues), Repository: deref(m.Repository), License: m.License, Tags: m.Tags,
			Dependencies: v.Dependencies, RequiresAnsible: deref(v.RequiresAnsible), SHA256: v.SHA256, Size: v.Size}
	}
	if null, err := v.contents.null(); err != nil {
		return nil, err
	} else if !null {
		b, err := v.contents.read()
		if err != nil {
			return nil, err
		}
		var contents []collection.Content
		if err := json.Unmarshal(b, &contents); err != nil {
			return nil, fmt.Errorf("the upstream's contents: %w", err)
		}
		cv.Contents = contents
	}
	return cv, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// save writes units with the documents of those created, and the signatures and marks
// the upstream lists for each (ups[i] is units[i]'s version), which pulp_ansible stores
// as they come, unverified.
func (st *storer) save(ctx context.Context, units []meta.NewUnit, docs []map[string][]byte, ups []*upstreamVersion) error {
	if len(units) == 0 {
		return nil
	}
	var stored []meta.Content
	var created []bool
	err := st.s.p.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		if stored, created, err = meta.PutContents(ctx, tx, units); err != nil {
			return err
		}
		var related []meta.NewUnit
		for i, c := range stored {
			if created[i] && docs[i] != nil {
				if err := meta.PutDocuments(ctx, tx, c.ID, docs[i]); err != nil {
					return err
				}
			}
			for _, sig := range ups[i].Signatures {
				related = append(related, meta.NewUnit{Content: syncedSignature(c.PulpID, sig)})
			}
			for _, mark := range ups[i].Marks {
				related = append(related, meta.NewUnit{Content: markUnit(c.PulpID, mark)})
			}
		}
		if len(related) == 0 {
			return nil
		}
		rs, rc, err := meta.PutContents(ctx, tx, related)
		stored, created = append(stored, rs...), append(created, rc...)
		return err
	})
	if err != nil {
		return fmt.Errorf("store %d collection versions: %w", len(units), err)
	}
	for i, c := range stored {
		st.units = append(st.units, c.ID)
		if created[i] {
			st.created = append(st.created, c.ID)
		}
	}
	st.pa.Add(int64(len(stored)))
	return nil
}

// undo takes back what the failed sync created: its units and artifacts nothing else
// found meanwhile, and their blobs.
func (st *storer) undo(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	var digests []string
	err := st.s.p.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		digests, err = meta.DeleteUnused(ctx, tx, st.created, st.artifacts)
		return err
	})
	if err != nil {
		st.s.p.core.Log.Error("a failed sync's units and artifacts were not taken back; orphan cleanup will", "err", err)
		return
	}
	for _, d := range digests {
		if err := st.s.p.core.Store.Delete(ctx, d); err != nil {
			st.s.p.core.Log.Error("a failed sync's blob was not deleted; orphan cleanup will", "sha256", d, "err", err)
		}
	}
}

// syncedSignature is the unit of a signature an upstream lists for collection version
// cv: its text and key fingerprint as listed, no signing service of this server.
func syncedSignature(cv string, sig upstreamSignature) meta.Content {
	sum := sha256.Sum256([]byte(sig.Signature))
	return sigUnit(cv, sigAttrs{PubkeyFingerprint: sig.PubkeyFingerprint, Data: sig.Signature, Digest: hex.EncodeToString(sum[:])}, nil)
}
