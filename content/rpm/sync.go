package rpm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"strings"
	"sync"

	"pith/api/href"
	"pith/blob"
	"pith/content"
	"pith/content/download"
	"pith/content/rpm/comps"
	"pith/content/rpm/modulemd"
	"pith/content/rpm/repodata"
	"pith/content/rpm/updateinfo"
	"pith/meta"
	"pith/task"
)

// batchSize is how many packages are written per transaction.
const batchSize = 500

// syncRun is one sync's state.
type syncRun struct {
	p       *Plugin
	r       *task.Run
	d       *download.Downloader
	remote  meta.Remote
	base    string // repository URL ending in "/"
	url     string // what the sync state records as the upstream: the remote's URL, or a sub-repository's
	args    SyncArgs
	units   []int64         // every unit of the upstream repository
	fetch   *fetchQueue     // immediate: packages without a stored artifact, queued as stored
	modular map[string]bool // NEVRAs the repository's modules list
	mirror  *mirror         // mirror_complete: what the publication republishes
	// treeSHA256 is the sha256 of the distribution tree's .treeinfo (the main
	// repository's sync only), part of the state optimize compares.
	treeSHA256 string
}

type pkgToFetch struct {
	contentID int64
	href, url string
	size      int64
	sha256    string
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
	d, err := content.Downloader(remote)
	if err != nil {
		return err
	}
	defer d.CloseIdleConnections()
	s := &syncRun{p: p, r: r, d: d, remote: remote, base: strings.TrimSuffix(remote.URL, "/") + "/", url: remote.URL, args: a}
	if a.SyncPolicy == MirrorComplete {
		s.mirror = newMirror()
	}

	// The distribution tree first: its variants and addons in other directories are
	// repositories of their own (sub-repositories), synced before this one, as in Pulp.
	var tree *syncedTree
	if !slices.Contains(a.SkipTypes, "treeinfo") {
		if tree, err = s.tree(ctx); err != nil {
			return err
		}
	}
	if tree != nil {
		for _, ref := range tree.subs {
			if err := s.syncSub(ctx, tree, ref); err != nil {
				return err
			}
		}
		s.units = append(s.units, tree.unit.ID)
		s.treeSHA256 = tree.sum
	}
	v, created, err := s.sync(ctx, repo)
	if err != nil || v == nil {
		return err
	}
	if created {
		p.core.Invalidate()
		if repo, err = meta.RepositoryByID(ctx, p.db, repo.ID); err != nil {
			return err
		}
		if err := p.core.VersionMade(ctx, r, repo, *v); err != nil {
			return err
		}
	}
	if s.mirror != nil {
		// After VersionMade: an autopublished publication must not be newer than the
		// mirror, which distributions of the repository serve.
		pub, err := p.mirrorPublication(ctx, repo, v.Number, s.mirror)
		if err != nil {
			return fmt.Errorf("publish the mirror of repository %q: %w", repo.Name, err)
		}
		r.Created(href.Publication(pub.Type, pub.PulpID))
		p.core.Invalidate()
	}
	return nil
}

// sync brings repo to the upstream repository at s.base: repomd.xml, then every
// metadata file it lists, then a new version of what they name. It returns nil when
// optimize found nothing changed, else the new version (or the latest, when the sync
// changed nothing; created is false then).
func (s *syncRun) sync(ctx context.Context, repo meta.Repository) (*meta.Version, bool, error) {
	a := s.args

	// 1. repomd.xml, and whether anything changed since the last sync.
	pm := s.r.Progress("sync.downloading.metadata", "Downloading Metadata Files", 1)
	rf, repomdSHA, err := s.fetchTemp(ctx, s.base+"repodata/repomd.xml", "sha256", download.Expect{Size: -1})
	if err != nil {
		pm.Finish(err)
		return nil, false, fmt.Errorf("repodata/repomd.xml: %w", err)
	}
	md, err := repodata.ParseRepomd(rf, "repodata/repomd.xml")
	if err == nil && s.mirror != nil {
		if err = checkMirrorable(md); err == nil {
			err = s.keep(ctx, rf, "repodata/repomd.xml")
		}
	}
	rf.Close()
	if err != nil {
		pm.Finish(err)
		return nil, false, err
	}
	var attrs repoAttrs
	json.Unmarshal(repo.Attrs, &attrs)
	state := syncState{RepomdSHA256: repomdSHA, URL: s.url, Policy: s.remote.Policy, SyncPolicy: a.SyncPolicy, SkipTypes: a.SkipTypes,
		Version: repo.LatestVersion, TreeinfoSHA256: s.treeSHA256}
	// A mirror is never skipped: its publication is made by the sync (as in Pulp).
	if a.Optimize && s.mirror == nil && attrs.LastSync != nil && equalState(*attrs.LastSync, state) {
		pm.Finish(nil)
		s.r.Progress("sync.skipped", "Skipping sync: repomd.xml and the settings have not changed since the last sync", 0).Finish(nil)
		return nil, false, nil
	}

	// 2. Every metadata file the sync reads, downloaded at once and checked against
	// repomd.xml; a mirror keeps every file repomd.xml lists, as it is.
	files := map[string]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if md.Record("primary") == nil {
		err := errors.New("repodata/repomd.xml: no primary metadata listed")
		pm.Finish(err)
		return nil, false, err
	}
	var records []metadataFile
	for i, rec := range md.Records {
		read := slices.Contains(parsed, rec.Type) && !(rec.Type == "group_gz" && md.Record("group") != nil)
		custom := isRepoMetadataFile(rec.Type)
		if read || custom || s.mirror != nil {
			records = append(records, metadataFile{rec: &md.Records[i], read: read, custom: custom})
		}
	}
	if err := s.fetchMetadata(ctx, records); err != nil {
		pm.Finish(err)
		return nil, false, err
	}
	for i, m := range records {
		f, err := s.keepMetadata(ctx, m)
		if err != nil {
			for _, m := range records[i+1:] {
				m.f.Close()
			}
			pm.Finish(err)
			return nil, false, err
		}
		if !m.read {
			f.Close()
			continue
		}
		files[m.rec.Type] = f
	}
	if s.mirror != nil {
		if err := s.mirrorExtras(ctx); err != nil {
			pm.Finish(err)
			return nil, false, err
		}
	}
	pm.Add(1)
	pm.Finish(nil)

	// 3. Modules first (their artifacts mark packages modular), then packages and the
	// other units. With policy immediate the packages' files download meanwhile, from
	// the first stored batch on; a failure on either side stops both.
	downloaded := func(err error) error { return err }
	if s.remote.Policy == "immediate" {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		if downloaded, err = s.startDownloads(ctx, cancel); err != nil {
			return nil, false, err
		}
	}
	if err := s.storeMetadata(ctx, md, files); err != nil {
		return nil, false, downloaded(err)
	}
	if err := downloaded(nil); err != nil {
		return nil, false, err
	}

	// 4. The new version, and what it was made from.
	var v meta.Version
	var created bool
	err = s.p.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		v, created, err = meta.NewVersion(ctx, tx, repo.ID, meta.Change{RemoveAll: a.SyncPolicy != Additive, Add: s.units})
		if err != nil {
			return err
		}
		state.Version = v.Number
		return meta.SetRepositoryAttr(ctx, tx, repo.ID, "last_sync", state)
	})
	if err != nil {
		return nil, false, fmt.Errorf("save sync of repository %q: %w", repo.Name, err)
	}
	return &v, created, nil
}

// storeMetadata stores the units the metadata files list: modules first (their artifacts mark
// packages modular), then packages, advisories and comps.
func (s *syncRun) storeMetadata(ctx context.Context, md *repodata.Repomd, files map[string]*os.File) error {
	if f := files["modules"]; f != nil {
		if err := s.modules(ctx, md.Record("modules").LocationHref, f); err != nil {
			return err
		}
	}
	if err := s.packages(ctx, md, files); err != nil {
		return err
	}
	if f := files["updateinfo"]; f != nil {
		if err := s.advisories(ctx, md.Record("updateinfo").LocationHref, f); err != nil {
			return err
		}
	}
	for _, typ := range []string{"group", "group_gz"} {
		if f := files[typ]; f != nil {
			if err := s.comps(ctx, md.Record(typ).LocationHref, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// parsed are the metadata types the sync reads (group_gz only without group).
var parsed = []string{"primary", "filelists", "other", "updateinfo", "group", "group_gz", "modules"}

// metadataFile is a file repomd.xml lists that the sync downloads: to read it (read), to
// keep it as a repo metadata file (custom), or because a mirror keeps everything.
type metadataFile struct {
	rec          *repodata.Record
	read, custom bool
	f            *os.File // downloaded and checked against rec
}

// fetchMetadata downloads the files at once (the remote's concurrency bounds them),
// each checked against its record. The first failure cancels the others and is the
// error; no file is left open then.
func (s *syncRun) fetchMetadata(ctx context.Context, files []metadataFile) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for i := range files {
		wg.Go(func() {
			f, err := s.fetchRecord(ctx, files[i].rec)
			if err != nil {
				cancel(err) // the first one is the cause
				return
			}
			files[i].f = f
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		for _, m := range files {
			if m.f != nil {
				m.f.Close()
			}
		}
		return err
	}
	return nil
}

// keepMetadata stores a downloaded metadata file when it must be kept. A mirror
// keeps it, and a type pith does not parse (custom) becomes a repo metadata file; the
// file is stored once for both.
func (s *syncRun) keepMetadata(ctx context.Context, m metadataFile) (*os.File, error) {
	f, rec, custom := m.f, m.rec, m.custom
	if s.mirror == nil && !custom {
		return f, nil
	}
	art, err := s.store(ctx, f, rec.LocationHref)
	if err == nil && s.mirror != nil {
		s.mirror.add(rec.LocationHref, art)
	}
	if err == nil && custom {
		err = s.repoMetadataFile(ctx, rec, art)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func equalState(a, b syncState) bool {
	return a.RepomdSHA256 == b.RepomdSHA256 && a.URL == b.URL && a.Policy == b.Policy && a.SyncPolicy == b.SyncPolicy &&
		slices.Equal(a.SkipTypes, b.SkipTypes) && a.Version == b.Version && a.TreeinfoSHA256 == b.TreeinfoSHA256
}

// open decompresses a staged metadata file, named as repomd.xml names it.
func open(f *os.File, href string) (io.ReadCloser, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return repodata.Decompress(f, href)
}

// packages reads primary, filelists and other together and stores the packages in
// batches. Parsing, with the attrs and fragments of each package, runs beside the
// transactions that store the batch before: each costs about as much as the other.
func (s *syncRun) packages(ctx context.Context, md *repodata.Repomd, files map[string]*os.File) error {
	srcs := map[string]repodata.Source{}
	for _, typ := range []string{"primary", "filelists", "other"} {
		f := files[typ]
		if f == nil {
			continue
		}
		href := md.Record(typ).LocationHref
		rc, err := open(f, href)
		if err != nil {
			return err
		}
		defer rc.Close()
		srcs[typ] = repodata.Source{Name: href, R: rc}
	}
	pp := s.r.Progress("sync.parsing.packages", "Parsing Packages", -1)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	batches := make(chan []packageRow, 1)
	stored := make(chan error, 1)
	go func() {
		var err error
		for b := range batches { // drained to the end even after a failure
			if err != nil {
				continue
			}
			if err = s.storeBatch(ctx, b); err != nil {
				cancel(err)
				continue
			}
			pp.Add(int64(len(b)))
		}
		stored <- err
	}()
	var batch []packageRow
	send := func() error {
		select {
		case batches <- batch:
			batch = make([]packageRow, 0, batchSize)
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	err := repodata.ReadPackages(srcs["primary"], srcs["filelists"], srcs["other"], func(pkg *repodata.Package) error {
		if pkg.Arch == "src" && slices.Contains(s.args.SkipTypes, "srpm") {
			return nil
		}
		if _, err := content.CleanRelativePath(pkg.LocationHref); err != nil {
			return fmt.Errorf("%s: package %s: location %q: %w", srcs["primary"].Name, pkg.NEVRA(), pkg.LocationHref, err)
		}
		if s.mirror != nil {
			if err := checkMirrorablePackage(pkg, srcs["primary"].Name); err != nil {
				return err
			}
		}
		pkg.IsModular = s.modular[pkg.NEVRA()]
		row, err := newPackageRow(pkg)
		if err != nil {
			return err
		}
		batch = append(batch, row)
		if len(batch) == batchSize {
			return send()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = send()
	}
	close(batches)
	if serr := <-stored; serr != nil {
		err = serr // the writer's failure is the cause; the parser saw only the cancel
	}
	pp.Finish(err)
	return err
}

// packageKey is a package's natural key: its NEVRA and its checksum.
func packageKey(p *repodata.Package) string {
	return p.NEVRA() + " " + p.ChecksumType + ":" + p.PkgID
}

// packageRow is a package ready to store: its attrs and its primary, filelists and
// other fragments.
type packageRow struct {
	pkg   *repodata.Package
	attrs []byte
	frags [3]string
	// files, when set, are the unit's files (an import's), instead of its location
	// with the remote's source.
	files []meta.ContentFile
}

func newPackageRow(pkg *repodata.Package) (packageRow, error) {
	slim := *pkg
	slim.Files, slim.Changelogs = nil, nil // they live in the fragments
	attrs, err := json.Marshal(slim)
	return packageRow{pkg: pkg, attrs: attrs, frags: [3]string{string(repodata.PrimaryFragment(pkg)),
		string(repodata.FilelistsFragment(pkg)), string(repodata.OtherFragment(pkg, 0))}}, err
}

// storeBatch writes a batch of packages with their fragments and remote sources, and
// queues the files to download once the transaction is committed.
func (s *syncRun) storeBatch(ctx context.Context, batch []packageRow) error {
	var units []meta.Content
	var fetch []*pkgToFetch
	err := s.p.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		units, fetch, err = storePackages(ctx, tx, batch, &s.remote.ID, s.base, s.remote.Policy == "immediate")
		return err
	})
	if err != nil {
		return err
	}
	for _, c := range units {
		s.units = append(s.units, c.ID)
	}
	if s.mirror != nil {
		for i, row := range batch {
			if href := row.pkg.LocationHref; !slices.Contains(s.mirror.locations[units[i].ID], href) {
				s.mirror.locations[units[i].ID] = append(s.mirror.locations[units[i].ID], href)
			}
		}
	}
	if s.fetch != nil {
		s.fetch.push(fetch)
	}
	return nil
}

// storePackages writes package units (or finds them) with their fragments, a few
// statements for the whole batch; units[i] is rows[i]'s. With a remote, each file's
// source is its location under base; with fetch, it also returns what must be
// downloaded: the files without an artifact yet.
func storePackages(ctx context.Context, tx *meta.Tx, rows []packageRow, remoteID *int64, base string, fetch bool) (units []meta.Content, get []*pkgToFetch, err error) {
	var digests []string
	for _, row := range rows {
		if row.pkg.ChecksumType == "sha256" {
			digests = append(digests, strings.ToLower(row.pkg.PkgID))
		}
	}
	have, err := meta.ArtifactIDsBySHA256(ctx, tx, digests)
	if err != nil {
		return nil, nil, err
	}
	in := make([]meta.NewUnit, len(rows))
	for i, row := range rows {
		pkg := row.pkg
		digest := ""
		if pkg.ChecksumType == "sha256" {
			digest = strings.ToLower(pkg.PkgID)
		}
		size := pkg.SizePackage
		file := meta.ContentFile{RelativePath: pkg.LocationHref, Size: &size, SHA256: digest}
		if remoteID != nil {
			file.RemoteID, file.URL = remoteID, content.JoinURL(base, pkg.LocationHref)
		}
		if id, ok := have[digest]; ok && digest != "" {
			file.ArtifactID = &id
		}
		files := []meta.ContentFile{file}
		if len(row.files) > 0 {
			files = row.files
		}
		in[i] = meta.NewUnit{Content: meta.Content{Type: PackageType, NaturalKey: packageKey(pkg), RepoKey: pkg.NEVRA(),
			RelativePath: pkg.LocationHref, Digest: digest, Attrs: row.attrs}, Files: files}
	}
	units, created, err := meta.PutContents(ctx, tx, in)
	if err != nil {
		return nil, nil, err
	}
	if err := storeFragments(ctx, tx, rows, units, created); err != nil {
		return nil, nil, err
	}
	if !fetch {
		return units, nil, nil
	}
	var ids []int64
	for i, u := range in {
		if u.Files[0].ArtifactID == nil {
			ids = append(ids, units[i].ID)
		}
	}
	files, err := meta.ContentArtifactsOf(ctx, tx, ids)
	if err != nil {
		return nil, nil, err
	}
	queued := map[int64]bool{}
	for i, u := range in {
		f, id := u.Files[0], units[i].ID
		if f.ArtifactID != nil || queued[id] || slices.ContainsFunc(files[id], func(r meta.ContentArtifactRef) bool { return r.ArtifactPulpID != nil }) {
			continue
		}
		queued[id] = true
		get = append(get, &pkgToFetch{contentID: id, href: f.RelativePath, url: f.URL, size: *f.Size, sha256: f.SHA256})
	}
	return units, get, nil
}

// fragmentRows is how many packages' fragments one statement writes.
const fragmentRows = 100

// storeFragments writes the primary, filelists and other fragments of the packages
// just created.
func storeFragments(ctx context.Context, tx *meta.Tx, rows []packageRow, units []meta.Content, created []bool) error {
	var q strings.Builder
	var args []any
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, `INSERT INTO rpm_fragments (content_id, primary_xml, filelists_xml, other_xml) VALUES `+q.String()+
			` ON CONFLICT (content_id) DO NOTHING`, args...)
		q.Reset()
		args = args[:0]
		return err
	}
	for i, row := range rows {
		if !created[i] {
			continue
		}
		if len(args) > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?)")
		args = append(args, units[i].ID, row.frags[0], row.frags[1], row.frags[2])
		if len(args) == 4*fragmentRows {
			if err := flush(); err != nil {
				return fmt.Errorf("store metadata of %s: %w", row.pkg.NEVRA(), err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("store the metadata of %d packages: %w", len(rows), err)
	}
	return nil
}

// startDownloads fetches the packages without a stored artifact (policy immediate) as
// storePackages queues them, so that the upstream is busy while the rest of the
// metadata is stored. A download slot is held for the transfer only: the artifacts are
// recorded by one goroutine, in transactions of whatever has arrived (SQLite has one
// writer; twenty slots each waiting for it would leave the upstream idle). A failure
// cancels ctx through cancel, which stops the storing too. The function returned closes
// the queue, waits for the downloads to finish and returns their error; given the
// storing's error it cancels, waits and returns the first cause (a download's failure
// makes the storing fail with a cancel).
func (s *syncRun) startDownloads(ctx context.Context, cancel context.CancelCauseFunc) (func(error) error, error) {
	alt, err := s.p.core.Alternates(ctx, s.r)
	if err != nil {
		return nil, err
	}
	pd := s.r.Progress("sync.downloading.artifacts", "Downloading Artifacts", 0)
	s.fetch = newFetchQueue(ctx, pd)
	fetched := make(chan fetchedPkg, 2*s.d.Concurrency())
	recorded := make(chan error, 1)
	go func() { recorded <- s.record(ctx, fetched, pd, cancel) }()
	done := make(chan error, 1)
	go func() {
		err := content.Parallel(ctx, s.d.Concurrency(), s.fetch.all(), func(f *pkgToFetch) string { return f.href },
			func(ctx context.Context, f *pkgToFetch) error {
				var srcs map[string][]meta.ACSSource
				if f.sha256 != "" {
					var err error
					if srcs, err = alt.Lookup(ctx, []string{f.sha256}); err != nil {
						cancel(err)
						return err
					}
				}
				dg, err := alt.FetchBlob(ctx, srcs[f.sha256], s.d, f.url, download.Expect{Size: f.size, SHA256: f.sha256})
				if err != nil {
					cancel(fmt.Errorf("%s: %w", f.href, err)) // stop the storing and the queue
					return err
				}
				select {
				case fetched <- fetchedPkg{f, dg}:
					return nil
				case <-ctx.Done():
					return context.Cause(ctx)
				}
			})
		close(fetched)
		if rerr := <-recorded; err == nil {
			err = rerr
		}
		done <- err
	}()
	return func(failed error) error {
		if failed != nil {
			cancel(failed)
		}
		s.fetch.close()
		err := <-done
		if failed != nil {
			err = context.Cause(ctx)
		}
		alt.Finish()
		pd.Finish(err)
		return err
	}, nil
}

// fetchQueue is what storePackages has queued for download: all yields each package
// once, waiting for more until the queue is closed (by the sync, or when ctx ends).
type fetchQueue struct {
	pd     *task.Progress
	mu     sync.Mutex
	more   *sync.Cond
	items  []*pkgToFetch
	closed bool
}

func newFetchQueue(ctx context.Context, pd *task.Progress) *fetchQueue {
	q := &fetchQueue{pd: pd}
	q.more = sync.NewCond(&q.mu)
	context.AfterFunc(ctx, q.close)
	return q
}

func (q *fetchQueue) push(fs []*pkgToFetch) {
	if len(fs) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, fs...)
	q.pd.SetTotal(int64(len(q.items)))
	q.more.Broadcast()
}

func (q *fetchQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.more.Broadcast()
}

func (q *fetchQueue) all() iter.Seq[*pkgToFetch] {
	return func(yield func(*pkgToFetch) bool) {
		for i := 0; ; i++ {
			q.mu.Lock()
			for i >= len(q.items) && !q.closed {
				q.more.Wait()
			}
			if i >= len(q.items) {
				q.mu.Unlock()
				return
			}
			f := q.items[i]
			q.mu.Unlock()
			if !yield(f) {
				return
			}
		}
	}
}

type fetchedPkg struct {
	f  *pkgToFetch
	dg blob.Digests
}

// record stores the artifacts of downloaded packages and links them to their units,
// batching what has arrived into one transaction. A failure cancels the downloads; the
// channel is drained to its end either way.
func (s *syncRun) record(ctx context.Context, in <-chan fetchedPkg, pd *task.Progress, cancel context.CancelCauseFunc) error {
	var failed error
	for first := range in {
		batch := []fetchedPkg{first}
	more:
		for len(batch) < 500 {
			select {
			case p, ok := <-in:
				if !ok {
					break more
				}
				batch = append(batch, p)
			default:
				break more
			}
		}
		if failed != nil {
			continue
		}
		failed = s.p.db.Tx(ctx, func(tx *meta.Tx) error {
			for _, p := range batch {
				art, _, err := meta.PutArtifact(ctx, tx, meta.ArtifactOf(p.dg))
				if err != nil {
					return err
				}
				if err := meta.AttachArtifact(ctx, tx, p.f.contentID, p.f.href, art.ID); err != nil {
					return fmt.Errorf("%s: %w", p.f.href, err)
				}
			}
			return nil
		})
		if failed != nil {
			cancel(failed)
			continue
		}
		pd.Add(int64(len(batch)))
	}
	return failed
}

// units stores units without files in one transaction.
func (s *syncRun) storeUnits(ctx context.Context, units []meta.Content) error {
	return s.p.db.Tx(ctx, func(tx *meta.Tx) error {
		for _, u := range units {
			c, _, err := meta.PutContent(ctx, tx, u, nil)
			if err != nil {
				return err
			}
			s.units = append(s.units, c.ID)
		}
		return nil
	})
}

func (s *syncRun) advisories(ctx context.Context, href string, f *os.File) error {
	rc, err := open(f, href)
	if err != nil {
		return err
	}
	defer rc.Close()
	var units []meta.Content
	err = updateinfo.Parse(rc, href, func(u *updateinfo.Update) error {
		c, err := advisoryUnit(u)
		units = append(units, c)
		return err
	})
	if err != nil {
		return err
	}
	p := s.r.Progress("sync.parsing.advisories", "Parsing Advisories", int64(len(units)))
	err = s.storeUnits(ctx, units)
	p.Add(int64(len(units)))
	p.Finish(err)
	return err
}

func (s *syncRun) comps(ctx context.Context, href string, f *os.File) error {
	rc, err := open(f, href)
	if err != nil {
		return err
	}
	defer rc.Close()
	c, err := comps.Parse(rc, href)
	if err != nil {
		return err
	}
	units, err := compsUnits(c)
	if err != nil {
		return err
	}
	p := s.r.Progress("sync.parsing.comps", "Parsing Comps", int64(len(units)))
	err = s.storeUnits(ctx, units)
	p.Add(int64(len(units)))
	p.Finish(err)
	return err
}

func (s *syncRun) modules(ctx context.Context, href string, f *os.File) error {
	rc, err := open(f, href)
	if err != nil {
		return err
	}
	defer rc.Close()
	mf, err := modulemd.Parse(rc, href)
	if err != nil {
		return err
	}
	var units []meta.Content
	add := func(u meta.Content, err error) error {
		units = append(units, u)
		return err
	}
	s.modular = map[string]bool{}
	for i := range mf.Modules {
		for _, a := range mf.Modules[i].Artifacts {
			s.modular[a] = true
		}
		if err := add(ModulemdUnit(&mf.Modules[i])); err != nil {
			return err
		}
	}
	for i := range mf.Defaults {
		if err := add(ModulemdDefaultsUnit(&mf.Defaults[i])); err != nil {
			return err
		}
	}
	for i := range mf.Obsoletes {
		if err := add(ModulemdObsoleteUnit(&mf.Obsoletes[i])); err != nil {
			return err
		}
	}
	p := s.r.Progress("sync.parsing.modulemds", "Parsing Modulemd", int64(len(units)))
	err = s.storeUnits(ctx, units)
	p.Add(int64(len(units)))
	p.Finish(err)
	return err
}
