package content

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strings"

	"pith/api/rest"
	"pith/blob"
	"pith/meta"
	"pith/task"
)

// Core is what the content types of a process share: the metadata and blob stores, the
// task queue, the content app's invalidation, and the registry of types with the table
// of their declarations. Generic repository-version behaviour (new versions with
// retention and autopublish, modify, version deletion, repair, orphan cleanup, task
// purge, upload commit and cleanup) lives here and works for every type.
type Core struct {
	DB    *meta.DB
	Store *blob.Store
	Log   *slog.Logger
	env   *rest.Env
	table *rest.Table
	types []Type
	owner map[string]Type // a kind's type ("rpm.package", "rpm.rpm") → the type declaring it
	// maxMetadata is the most bytes FetchTemp stages for one file.
	maxMetadata int64
	// ExportPaths and ImportPaths are the directories exports may write below and
	// imports read from (AllowedPath).
	ExportPaths, ImportPaths []string
	// ExportVersions are component versions an export's versions.json names instead
	// of those pith claims (--export-versions).
	ExportVersions map[string]string
}

// Config is what a Core is made of.
type Config struct {
	DB    *meta.DB
	Store *blob.Store
	Queue *task.Queue // nil in a process that dispatches nothing
	Log   *slog.Logger
	// Invalidate tells the content app that what it serves may have changed; nil: no
	// content app to tell.
	Invalidate func()
	// MaxMetadataSize bounds a metadata file a sync stages (FetchTemp), in bytes;
	// 0 is DefaultMaxMetadataSize.
	MaxMetadataSize int64
	// AllowedExportPaths and AllowedImportPaths are the directories exports may write
	// below and imports read from; none refuses every export or import.
	AllowedExportPaths, AllowedImportPaths []string
	// ExportVersions are component versions exports name instead of pith's claims.
	ExportVersions map[string]string
}

// DefaultMaxMetadataSize is the default bound of a staged metadata file: several times
// the largest compressed metadata of real repositories (RHEL's and Fedora's filelists
// are tens of MiB compressed).
const DefaultMaxMetadataSize = 1 << 30

// NewCore makes a core without types; Register adds them.
func NewCore(cfg Config) *Core {
	if cfg.Invalidate == nil {
		cfg.Invalidate = func() {}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	env := &rest.Env{DB: cfg.DB, Store: cfg.Store, Queue: cfg.Queue, Invalidate: cfg.Invalidate}
	if cfg.MaxMetadataSize <= 0 {
		cfg.MaxMetadataSize = DefaultMaxMetadataSize
	}
	c := &Core{DB: cfg.DB, Store: cfg.Store, Log: cfg.Log, maxMetadata: cfg.MaxMetadataSize, env: env,
		ExportPaths: cfg.AllowedExportPaths, ImportPaths: cfg.AllowedImportPaths, ExportVersions: cfg.ExportVersions, owner: map[string]Type{}}
	c.table = rest.NewTable(env)
	return c
}

// Register adds content types: each declares its kinds on the table. Every kind a type
// declares is named after its plugin ("rpm.package" for rpm), and no two types declare
// the same kind.
func (c *Core) Register(types ...Type) error {
	for _, t := range types {
		before := kindsOf(c.table)
		if err := t.Declare(c.table); err != nil {
			return fmt.Errorf("content type %s: %w", t.Name(), err)
		}
		after := kindsOf(c.table)
		for list, names := range after {
			for _, k := range names[len(before[list]):] {
				if !strings.HasPrefix(k, t.Name()+".") {
					return fmt.Errorf("content type %s: kind %q is not named after the plugin", t.Name(), k)
				}
				if prev, dup := c.owner[k]; dup && prev != t {
					return fmt.Errorf("content type %s: kind %q is declared by %s too", t.Name(), k, prev.Name())
				}
				c.owner[k] = t
			}
		}
		c.types = append(c.types, t)
	}
	return nil
}

// kindsOf lists the type names of the declared kinds, one list per sort of kind.
func kindsOf(t *rest.Table) [6][]string {
	var out [6][]string
	for _, k := range t.Units() {
		out[0] = append(out[0], k.Type)
	}
	for _, k := range t.Repositories() {
		out[1] = append(out[1], k.Type)
	}
	for _, k := range t.Remotes() {
		out[2] = append(out[2], k.Type)
	}
	for _, k := range t.Distributions() {
		out[3] = append(out[3], k.Type)
	}
	for _, k := range t.Publications() {
		out[4] = append(out[4], k.Type)
	}
	for _, k := range t.ACSKinds() {
		out[5] = append(out[5], k.Type)
	}
	return out
}

// Types are the registered types.
func (c *Core) Types() []Type { return c.types }

// Table is the table of every registered type's declarations.
func (c *Core) Table() *rest.Table { return c.table }

// Env is the handler environment of the table.
func (c *Core) Env() *rest.Env { return c.env }

// Invalidate tells the content app that what it serves may have changed.
func (c *Core) Invalidate() { c.env.Invalidate() }

// TypeOf is the type that declared a kind: a repository, remote, publication or
// distribution type ("rpm.rpm") or a unit type ("rpm.package").
func (c *Core) TypeOf(kind string) (Type, bool) {
	t, ok := c.owner[kind]
	return t, ok
}

// Tasks are the task functions of the core and of every registered type.
func (c *Core) Tasks() map[string]task.Func {
	out := map[string]task.Func{
		ModifyTask:        c.runModify,
		DeleteVersionTask: c.runDeleteVersion,
		RepairTask:        c.runRepair,
		RepairAllTask:     c.runRepairAll,
		ReclaimTask:       c.runReclaim,
		CommitTask:        c.runCommit,
		OrphanTask:        c.runOrphans,
		PurgeTask:         c.runPurge,
		UploadCleanupTask: c.runUploadCleanup,
		TempCleanupTask:   c.runTempCleanup,
		BulkModifyTask:    c.runBulkModify,
	}
	for _, t := range c.types {
		maps.Copy(out, t.Tasks())
	}
	return out
}

// repoSettings are the members of a repository's attrs the core reads.
type repoSettings struct {
	Autopublish bool `json:"autopublish"`
}

func settingsOf(repo meta.Repository) repoSettings {
	var s repoSettings
	json.Unmarshal(repo.Attrs, &s)
	return s
}
