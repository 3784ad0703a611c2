package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"pith/api/href"
	"pith/api/openapi"
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

// taskProfileArtifacts answers {task_href}profile_artifacts/. Pulp's URLs are
// preauthenticated ones of its content app or object storage; pith's name its own
// profileArtifactPattern on the API origin with a token sealed by the installation's
// key, valid for profileURLLife: a client fetches them without credentials, as
// pulp-cli's --download does.
func (s *Server) taskProfileArtifacts(w http.ResponseWriter, r *http.Request) error {
	t, files, err := s.profilesOf(r)
	if err != nil {
		return err
	}
	keys := s.db.Keys()
	out := profileArtifactResponse{URLs: map[string]string{}}
	if len(files) > 0 && keys == nil {
		return errors.New("profile artifact urls: no key to seal their tokens with")
	}
	expires := time.Now().Add(profileURLLife).Unix()
	for name := range files {
		out.URLs[name] = rest.Origin(r) + href.Task(t.PulpID) + "profile_artifacts/" + name + "/?token=" +
			url.QueryEscape(keys.Seal(profileClaim(t.PulpID, name, expires)))
	}
	return rest.WriteOne(w, r, http.StatusOK, out)
}

// profileURLLife is how long a profile artifact URL works (Pulp's preauthenticated
// URLs: an hour).
const profileURLLife = time.Hour

// profileClaim is what a profile artifact URL's token seals.
func profileClaim(taskID, name string, expires int64) string {
	return fmt.Sprintf("profile_artifact %s %s %d", taskID, name, expires)
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

// profileArtifactPattern serves one profile file of a task to the holder of a URL
// taskProfileArtifacts gave: a pith path, not in the OpenAPI document.
const profileArtifactPattern = "/pulp/api/v3/tasks/{id}/profile_artifacts/{name}/{$}"

func (s *Server) profileArtifactRoute() route {
	return route{op: openapi.Operation{Method: "GET", Path: profileArtifactPattern, Anonymous: true},
		pattern: profileArtifactPattern, h: s.taskProfileArtifact}
}

func (s *Server) taskProfileArtifact(w http.ResponseWriter, r *http.Request) error {
	denied := rest.Status(http.StatusForbidden, "The URL's token is missing, expired or not for this file.")
	keys := s.db.Keys()
	token := r.URL.Query().Get("token")
	if keys == nil || len(token) > 1024 {
		return denied
	}
	claim, err := keys.Open(token)
	if err != nil {
		return denied
	}
	var id, name string
	var expires int64
	if _, err := fmt.Sscanf(claim, "profile_artifact %s %s %d", &id, &name, &expires); err != nil ||
		id != r.PathValue("id") || name != r.PathValue("name") || time.Now().Unix() > expires {
		return denied
	}
	t, files, err := s.profilesOf(r)
	if err != nil {
		return err
	}
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
