package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	"pith/api/href"
	"pith/api/rest"
	"pith/blob"
	"pith/meta"
	"pith/task"
)

// profileArtifactResponse is Pulp's ProfileArtifactResponse: a download URL per
// profile file of a task.
type profileArtifactResponse struct {
	URLs map[string]string `json:"urls" openapi:"required"`
}

// taskProfileArtifacts answers {task_href}profile_artifacts/. Pulp's URLs point at its
// content app or object storage; pith's at profileArtifactPattern, on the API origin and
// under the same permission, which pulp-cli's --download fetches with its session.
func (s *Server) taskProfileArtifacts(w http.ResponseWriter, r *http.Request) error {
	t, files, err := s.profilesOf(r)
	if err != nil {
		return err
	}
	out := profileArtifactResponse{URLs: map[string]string{}}
	for name := range files {
		out.URLs[name] = rest.Origin(r) + href.Task(t.PulpID) + "profile_artifacts/" + name + "/"
	}
	return rest.WriteOne(w, r, http.StatusOK, out)
}

// profileArtifactPattern serves one profile file of a task: a pith path, not in the
// OpenAPI document, guarded as the profile_artifacts action.
const profileArtifactPattern = "/pulp/api/v3/tasks/{id}/profile_artifacts/{name}/{$}"

func (s *Server) profileArtifactRoute() route {
	return route{pattern: profileArtifactPattern, h: s.taskProfileArtifact,
		guard: s.guardOf(rest.Op{Viewset: "tasks", Action: "profile_artifacts", Method: "GET", Pattern: profileArtifactPattern})}
}

// profilesOf is the task the request's {id} names and its profile files.
func (s *Server) profilesOf(r *http.Request) (task.Task, map[string]string, error) {
	t, err := task.Get(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return t, nil, err
	}
	files, err := task.ProfileArtifacts(r.Context(), s.db, t.ID)
	return t, files, err
}

func (s *Server) taskProfileArtifact(w http.ResponseWriter, r *http.Request) error {
	t, files, err := s.profilesOf(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	sha, ok := files[name]
	if !ok {
		return fmt.Errorf("profile artifact %q of task %s: %w", name, t.PulpID, meta.ErrNotFound)
	}
	f, err := s.core.Store.Open(r.Context(), sha)
	if err != nil {
		return fmt.Errorf("profile artifact %q of task %s: %w", name, t.PulpID, err)
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	http.ServeContent(w, r, "", time.Time{}, f)
	return nil
}

// storeProfile stores a task's profile file as an artifact linked to the task.
func storeProfile(db *meta.DB, store *blob.Store) func(ctx context.Context, t task.Task, name string, data []byte) error {
	return func(ctx context.Context, t task.Task, name string, data []byte) error {
		d, err := store.Put(ctx, bytes.NewReader(data), blob.Expect{Size: int64(len(data))})
		if err != nil {
			return fmt.Errorf("store profile %s of task %s: %w", name, t.PulpID, err)
		}
		return db.Tx(ctx, func(tx *meta.Tx) error {
			a, _, err := meta.PutArtifact(ctx, tx, meta.ArtifactOf(d))
			if err != nil {
				return err
			}
			return task.LinkProfile(ctx, tx, t.ID, name, a.ID)
		})
	}
}
