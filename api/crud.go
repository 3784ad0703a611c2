package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"pith/api/href"
	"pith/api/rest"
	"pith/content"
	"pith/meta"
	"pith/task"
)

// Pulp's general create, update and delete tasks, which every kind of repository, remote
// and distribution uses. A body is validated when the request arrives (bad input is a
// 400 and nothing is queued) and applied again to the current row when the task runs, so
// queued updates compose. A worker process gets these task functions from Tasks without
// building the API.

// The task names, as Pulp names them.
const (
	updateTask = "pulpcore.app.tasks.base.general_update"
	deleteTask = "pulpcore.app.tasks.base.general_delete"
)

// The kinds of rows the general tasks apply to (and kindACS).
const (
	kindRepository   = "repository"
	kindRemote       = "remote"
	kindDistribution = "distribution"
)

// crud applies bodies to rows of the kinds a core's types declare.
type crud struct {
	core        *content.Core
	gracePeriod time.Duration // how long a distribution's previous publication stays servable
}

// Tasks are the task functions of the general create, update and delete tasks, of
// replication and of filesystem exports.
func Tasks(core *content.Core, gracePeriod time.Duration) map[string]task.Func {
	c := &crud{core: core, gracePeriod: gracePeriod}
	return map[string]task.Func{rest.CreateTask: c.create, updateTask: c.runUpdate, deleteTask: c.runDelete,
		replicateTask: c.replicate, finalizeTask: c.finalize, pulpExportTask: c.pulpExport, pulpImportTask: c.pulpImport,
		importRepoTask: c.importRepoTask, fsPublicationTask: c.fsExport, fsVersionTask: c.fsExport}
}

// errDryRun rolls back a validation transaction.
var errDryRun = errors.New("dry run")

// updateArgs are the arguments of the general update task.
type updateArgs struct {
	Kind    string                     `json:"kind"`
	ID      string                     `json:"id"`
	Body    map[string]json.RawMessage `json:"body"`
	Partial bool                       `json:"partial"`
}

// updateHandler validates an update (in a transaction that is rolled back) and queues
// the update task; body is the kind's body, for reading forms.
func (s *Server) updateHandler(kind string, body any, partial bool, lock func(*http.Request) []string) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		raw, err := rest.ReadBody(r, body, nil)
		if err != nil {
			return err
		}
		a := updateArgs{Kind: kind, ID: r.PathValue("id"), Body: raw, Partial: partial}
		err = s.db.Tx(r.Context(), func(tx *meta.Tx) error {
			if err := s.crud.applyUpdate(r.Context(), tx, a); err != nil {
				return err
			}
			return errDryRun
		})
		if !errors.Is(err, errDryRun) {
			return err
		}
		return s.env.Dispatch(w, r, task.Spec{Name: updateTask, Args: a, Exclusive: lock(r)})
	}
}

func (c *crud) runUpdate(ctx context.Context, r *task.Run) error {
	var a updateArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	return c.core.DB.Tx(ctx, func(tx *meta.Tx) error { return c.applyUpdate(ctx, tx, a) })
}

// applyUpdate is the body of the general update task.
func (c *crud) applyUpdate(ctx context.Context, tx *meta.Tx, a updateArgs) error {
	t := c.core.Table()
	switch a.Kind {
	case kindRepository:
		cur, err := meta.RepositoryByPulpID(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		k, ok := t.RepoKind(cur.Type)
		if !ok {
			return fmt.Errorf("repository %s: no content type serves type %q", cur.PulpID, cur.Type)
		}
		next, err := applyRepo(ctx, tx, cur, k, a.Body, a.Partial)
		if err != nil {
			return err
		}
		if err := meta.UpdateRepository(ctx, tx, next); errors.Is(err, meta.ErrConflict) {
			return rest.BadField("name", "This field must be unique.")
		} else if err != nil {
			return err
		}
	case kindRemote:
		cur, err := meta.RemoteByPulpID(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		k, ok := t.RemoteKind(cur.Type)
		if !ok {
			return fmt.Errorf("remote %s: no content type serves type %q", cur.PulpID, cur.Type)
		}
		next, err := applyRemote(cur, k, a.Body, a.Partial)
		if err != nil {
			return err
		}
		if err := meta.UpdateRemote(ctx, tx, next); errors.Is(err, meta.ErrConflict) {
			return rest.BadField("name", "This field must be unique.")
		} else if err != nil {
			return err
		}
	case kindDistribution:
		cur, err := meta.DistributionByPulpID(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		k, ok := t.DistKind(cur.Type)
		if !ok {
			return fmt.Errorf("distribution %s: no content type serves type %q", cur.PulpID, cur.Type)
		}
		next, err := applyDist(ctx, tx, cur, k, a.Body, a.Partial)
		if err != nil {
			return err
		}
		if err := meta.UpdateDistribution(ctx, tx, next, meta.Now()+c.gracePeriod.Microseconds()); err != nil {
			return distError(err)
		}
	case kindACS:
		cur, err := meta.ACSByPulpID(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		k, ok := t.ACSKind(cur.Type)
		if !ok {
			return fmt.Errorf("alternate content source %s: no content type serves type %q", cur.PulpID, cur.Type)
		}
		next, err := applyACS(ctx, tx, cur, k, a.Body, a.Partial)
		if err != nil {
			return err
		}
		if err := meta.UpdateACS(ctx, tx, next); errors.Is(err, meta.ErrConflict) {
			return rest.BadField("name", "This field must be unique.")
		} else if err != nil {
			return err
		}
	case kindPulpExporter, kindFSExporter:
		k, _ := exporterKindOf(a.Kind)
		if err := c.applyExporterUpdate(ctx, tx, k, a); err != nil {
			return err
		}
	default:
		return fmt.Errorf("update of unknown kind %q", a.Kind)
	}
	tx.AfterCommit(c.core.Invalidate)
	return nil
}

type deleteArgs struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

// deleteHandler checks that the row exists and queues the delete task.
func (s *Server) deleteHandler(kind string, lock func(*http.Request) []string) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		a := deleteArgs{Kind: kind, ID: r.PathValue("id")}
		var err error
		switch kind {
		case kindRepository:
			_, err = meta.RepositoryByPulpID(r.Context(), s.db, a.ID)
		case kindRemote:
			_, err = meta.RemoteByPulpID(r.Context(), s.db, a.ID)
		case kindDistribution:
			_, err = meta.DistributionByPulpID(r.Context(), s.db, a.ID)
		case kindACS:
			_, err = meta.ACSByPulpID(r.Context(), s.db, a.ID)
		case kindPulpExporter, kindFSExporter:
			k, _ := exporterKindOf(kind)
			_, err = exporterByID(r.Context(), s.db, k, a.ID)
		}
		if err != nil {
			return err
		}
		return s.env.Dispatch(w, r, task.Spec{Name: deleteTask, Args: a, Exclusive: lock(r)})
	}
}

func (c *crud) runDelete(ctx context.Context, r *task.Run) error {
	var a deleteArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	return c.core.DB.Tx(ctx, func(tx *meta.Tx) error {
		switch a.Kind {
		case kindRepository:
			x, err := meta.RepositoryByPulpID(ctx, tx, a.ID)
			if err != nil {
				return err
			}
			if err := meta.DeleteRepository(ctx, tx, x.ID); err != nil {
				return err
			}
		case kindRemote:
			x, err := meta.RemoteByPulpID(ctx, tx, a.ID)
			if err != nil {
				return err
			}
			if err := meta.DeleteRemote(ctx, tx, x.ID); err != nil {
				return err
			}
		case kindDistribution:
			x, err := meta.DistributionByPulpID(ctx, tx, a.ID)
			if err != nil {
				return err
			}
			if err := meta.DeleteDistribution(ctx, tx, x.ID); err != nil {
				return err
			}
		case kindACS:
			x, err := meta.ACSByPulpID(ctx, tx, a.ID)
			if err != nil {
				return err
			}
			if err := meta.DeleteACS(ctx, tx, x.ID); err != nil {
				return err
			}
		case kindPulpExporter, kindFSExporter:
			k, _ := exporterKindOf(a.Kind)
			x, err := exporterByID(ctx, tx, k, a.ID)
			if err != nil {
				return err
			}
			if err := meta.DeleteExporter(ctx, tx, x.ID); err != nil {
				return err
			}
		default:
			return fmt.Errorf("delete of unknown kind %q", a.Kind)
		}
		tx.AfterCommit(c.core.Invalidate)
		return nil
	})
}

// create is the general create task: a distribution, or content of a kind a type
// declared a creator for.
func (c *crud) create(ctx context.Context, r *task.Run) error {
	var a rest.CreateArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	if a.Kind != kindDistribution {
		create := c.core.Table().Creator(a.Kind)
		if create == nil {
			return fmt.Errorf("create of unknown kind %q", a.Kind)
		}
		body, err := json.Marshal(a.Body)
		if err != nil {
			return err
		}
		return create(ctx, r, body)
	}
	k, ok := c.core.Table().DistKind(a.Type)
	if !ok {
		return fmt.Errorf("create of a distribution of unknown type %q", a.Type)
	}
	var d meta.Distribution
	err := c.core.DB.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		if d, err = applyDist(ctx, tx, meta.Distribution{}, k, a.Body, false); err != nil {
			return err
		}
		if d, err = meta.CreateDistribution(ctx, tx, d); err != nil {
			return distError(err)
		}
		tx.AfterCommit(c.core.Invalidate)
		return nil
	})
	if err != nil {
		return err
	}
	r.Created(href.Distribution(d.Type, d.PulpID))
	return nil
}
