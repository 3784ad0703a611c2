package file

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"pith/blob"
	"pith/content"
	"pith/content/download"
	"pith/meta"
	"pith/task"
)

// Type is the content type "file.file".
const Type = "file.file"

// Plugin runs the file type's tasks.
type Plugin struct {
	db         *meta.DB
	store      *blob.Store
	invalidate func()
}

// New returns the file plugin over a store; invalidate is called when what the content
// app serves may have changed.
func New(db *meta.DB, store *blob.Store, invalidate func()) *Plugin {
	if invalidate == nil {
		invalidate = func() {}
	}
	return &Plugin{db: db, store: store, invalidate: invalidate}
}

// Task names, as Pulp names them (clients filter task lists by name).
const (
	SyncTask    = "pulp_file.app.tasks.synchronizing.synchronize"
	PublishTask = "pulp_file.app.tasks.publishing.publish"
)

// TaskFuncs are the plugin's task functions by name.
func (p *Plugin) TaskFuncs() map[string]task.Func {
	return map[string]task.Func{SyncTask: p.runSync, PublishTask: p.runPublish}
}

// SyncArgs are the arguments of a sync task.
type SyncArgs struct {
	Repository string `json:"repository"`
	Remote     string `json:"remote"`
	Mirror     bool   `json:"mirror"`
}

// PublishArgs are the arguments of a publish task.
type PublishArgs struct {
	Repository string `json:"repository"`
	Version    int64  `json:"version"`
	Manifest   string `json:"manifest"`
}

// repoAttrs is the part of a file repository's attrs this package reads and writes.
type repoAttrs struct {
	Autopublish bool    `json:"autopublish"`
	Manifest    *string `json:"manifest"`
	// LastSync identifies the upstream state of the last sync (optimize).
	LastSync *syncState `json:"last_sync,omitempty"`
}

type syncState struct {
	ManifestSHA256 string `json:"manifest_sha256"`
	URL            string `json:"url"`
	Policy         string `json:"policy"`
	Mirror         bool   `json:"mirror"`
	Version        int64  `json:"version"`
}

// blobSink adapts a blob writer to the downloader's per-attempt sink.
type blobSink struct {
	ctx context.Context
	w   *blob.Writer
}

func (s *blobSink) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s *blobSink) Abort()                      { s.w.Cancel(s.ctx) }

// fetchBlob downloads url into the blob store, verified against want.
func (p *Plugin) fetchBlob(ctx context.Context, d *download.Downloader, url string, want download.Expect) (blob.Digests, error) {
	var last *blobSink
	_, err := d.Fetch(ctx, url, want, func() (download.Sink, error) {
		w, err := p.store.NewWriter(ctx)
		if err != nil {
			return nil, err
		}
		last = &blobSink{ctx: ctx, w: w}
		return last, nil
	})
	if err != nil {
		return blob.Digests{}, err
	}
	digests, err := last.w.Commit(ctx, blob.Expect{Size: want.Size, SHA256: want.SHA256})
	if err != nil {
		return blob.Digests{}, fmt.Errorf("store %s: %w", url, err)
	}
	return digests, nil
}

// FetchURL downloads a URL into an artifact (content create with file_url).
func (p *Plugin) FetchURL(ctx context.Context, url string) (meta.Artifact, error) {
	d, err := download.New(download.Config{URL: url, TLSValidation: true})
	if err != nil {
		return meta.Artifact{}, err
	}
	dg, err := p.fetchBlob(ctx, d, url, download.Expect{Size: -1})
	if err != nil {
		return meta.Artifact{}, err
	}
	a, _, err := meta.PutArtifact(ctx, p.db, content.Artifact(dg))
	return a, err
}

// Refetch stores a missing or corrupt file again from its first working remote source.
func (p *Plugin) Refetch(ctx context.Context, f meta.FileRef) error {
	var errs []error
	for _, src := range sources(ctx, p.db, f) {
		m, err := meta.RemoteByID(ctx, p.db, src.RemoteID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cfg, err := content.DownloadConfig(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d, err := download.New(cfg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		want := download.Expect{Size: -1}
		if f.Artifact != nil {
			want = download.Expect{Size: f.Artifact.Size, SHA256: f.Artifact.SHA256}
		}
		dg, err := p.fetchBlob(ctx, d, src.URL, want)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		a, _, err := meta.PutArtifact(ctx, p.db, content.Artifact(dg))
		if err != nil {
			return err
		}
		return meta.SetContentArtifact(ctx, p.db, f.ContentArtifactID, a.ID)
	}
	if len(errs) == 0 {
		return fmt.Errorf("%s: no remote source to fetch it from", f.RelativePath)
	}
	return errors.Join(errs...)
}

// sources lists where a unit file can be fetched from, whether or not it has an artifact.
func sources(ctx context.Context, q meta.Querier, f meta.FileRef) []meta.RemoteSource {
	if len(f.Remote) > 0 {
		return f.Remote
	}
	out, _ := meta.RemoteSources(ctx, q, f.ContentArtifactID)
	return out
}

// AfterVersion applies autopublish and retention to a repository's new version.
func (p *Plugin) AfterVersion(ctx context.Context, r *task.Run, repo meta.Repository, v meta.Version) error {
	if repo.Type != Type {
		return nil
	}
	var attrs repoAttrs
	json.Unmarshal(repo.Attrs, &attrs)
	if attrs.Autopublish {
		manifest := "PULP_MANIFEST"
		if attrs.Manifest != nil {
			manifest = *attrs.Manifest
		}
		pub, err := p.publish(ctx, r, repo, v.Number, manifest)
		if err != nil {
			return fmt.Errorf("autopublish: %w", err)
		}
		r.Created(publicationHref(pub.PulpID))
	}
	if repo.RetainVersions != nil {
		if err := p.retain(ctx, repo, *repo.RetainVersions); err != nil {
			return fmt.Errorf("retain_repo_versions: %w", err)
		}
	}
	return nil
}

// retain deletes versions older than the newest keep ones (version 0 stays).
func (p *Plugin) retain(ctx context.Context, repo meta.Repository, keep int64) error {
	vs, _, err := meta.ListVersions(ctx, p.db, meta.List{Where: []string{"v.repository_id = ?", "v.number > 0"}, Args: []any{repo.ID}, OrderBy: "v.number DESC"})
	if err != nil {
		return err
	}
	for i, v := range vs {
		if int64(i) < keep {
			continue
		}
		v := v
		if err := p.db.Tx(ctx, func(tx *meta.Tx) error { return meta.DeleteVersion(ctx, tx, v) }); err != nil {
			return err
		}
	}
	p.invalidate()
	return nil
}

func publicationHref(id string) string { return "/pulp/api/v3/publications/file/file/" + id + "/" }

// manifestURLBase is the directory of a manifest URL, against which its relative paths
// resolve.
func manifestURLBase(u string) string {
	i := strings.LastIndex(u, "/")
	if i < 0 {
		return u
	}
	return u[:i+1]
}

func joinURL(base, rel string) string {
	parts := strings.Split(rel, "/")
	for i, s := range parts {
		parts[i] = pathEscape(s)
	}
	return base + path.Join(parts...)
}

func pathEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// tempFile returns an unnamed temporary file for staging metadata.
func tempFile() (*os.File, error) {
	f, err := os.CreateTemp("", "pith-manifest-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}

var _ io.Writer = (*blobSink)(nil)
