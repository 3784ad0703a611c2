package content

import (
	"context"
	"net/http"

	"pith/api/rest"
	"pith/meta"
	"pith/task"
)

// Type is one content type (a Pulp plugin: file, rpm). It declares its kinds (units,
// repositories, remotes, publications, distributions) with their REST shapes, filters
// and renderers, and its own operations, on the API's table; the API makes the generic
// operations of every kind from those declarations. Its task functions run its syncs,
// publications and the rest. cmd/pith lists the types a process serves.
//
// Optional capabilities, found by type assertion: Autopublisher, Claimer,
// DistributionFiles, Finalizer, Replicator, Router.
type Type interface {
	// Name is the plugin's label ("file", "rpm"), as Pulp's status lists it.
	Name() string
	// Declare adds the type's kinds and operations to the table.
	Declare(t *rest.Table) error
	// Tasks are the type's task functions by Pulp's task names.
	Tasks() map[string]task.Func
}

// Autopublisher is a type that publishes a repository's new version itself when the
// repository asks for it (its attrs hold "autopublish": true).
type Autopublisher interface {
	Autopublish(ctx context.Context, r *task.Run, repo meta.Repository, v meta.Version) (meta.Publication, error)
}

// DistributionFiles is a type whose distributions answer some paths from their own
// settings rather than from what they serve (rpm's config.repo).
type DistributionFiles interface {
	// Generates reports whether a distribution of the type may answer path itself. It is
	// asked on every request, so it decides from the path alone.
	Generates(path string) bool
	// DistributionFile answers path of distribution d, whose URL is base; pub is the
	// publication it serves (nil for none) and has reports whether it serves a path. ok
	// is false when d has no such file.
	DistributionFile(ctx context.Context, d meta.Distribution, pub *meta.Publication, path, base string, has func(path string) bool) (body []byte, contentType string, ok bool)
}

// Finalizer is a type whose repositories keep a rule over what a version holds: when a
// change removes units from repositories, it removes what depends on them from the
// versions being made (ansible: a removed collection version's signatures and marks).
// It is meta.Change's Finalize; it must leave repositories of other types alone.
type Finalizer interface {
	Finalize(ctx context.Context, tx *meta.Tx, next map[int64]int64, removed map[int64]map[string]int64) (bool, error)
}

// Component is a Pulp component pith claims to be, as status and the OpenAPI document
// name it.
type Component struct{ Component, Version, Package, Module string }

// Claimer is a type that is a Pulp plugin release of its own (rpm: pulp_rpm 3.35.6);
// status and the OpenAPI document claim it. A type without it belongs to a component
// the core claims (file: pulpcore's pulp_file).
type Claimer interface {
	Claims() Component
}

// Router is a type that speaks a protocol of its own beside the Pulp API (the Galaxy
// API of ansible): its routes are served by the API processes.
type Router interface {
	Routes() []Route
}

// Route is one route of a Router: a mux pattern and its handler.
type Route struct {
	Pattern string
	Handler http.Handler
}
