package api

import (
	"net/http"
	"time"

	"pith/task"
)

// OrphanArgs are the arguments of the orphan cleanup task.
type OrphanArgs struct {
	ContentIDs      []int64 `json:"content_ids"`
	HasContentHrefs bool    `json:"has_content_hrefs"`
	ProtectionMins  int64   `json:"protection_minutes"`
}

func (s *Server) orphansCleanup(w http.ResponseWriter, r *http.Request) error {
	var in orphansCleanupIn
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	a := OrphanArgs{ProtectionMins: int64(s.cfg.OrphanProtection / time.Minute)}
	if in.OrphanProtectionTime != nil {
		if *in.OrphanProtectionTime < 0 {
			return badField("orphan_protection_time", "Ensure this value is greater than or equal to 0.")
		}
		a.ProtectionMins = *in.OrphanProtectionTime
	}
	if in.ContentHrefs != nil {
		a.HasContentHrefs = true
		if a.ContentIDs, err = s.contentIDs(r.Context(), "content_hrefs", in.ContentHrefs); err != nil {
			return err
		}
	}
	t, err := s.dispatch(r, task.Spec{Name: "pulpcore.app.tasks.orphan.orphan_cleanup", Args: a, Exclusive: []string{"/pulp/api/v3/orphans/cleanup/"}})
	if err != nil {
		return err
	}
	return accepted(w, t)
}

// orphansDelete is the deprecated DELETE /orphans/: cleanup with default protection.
func (s *Server) orphansDelete(w http.ResponseWriter, r *http.Request) error {
	t, err := s.dispatch(r, task.Spec{Name: "pulpcore.app.tasks.orphan.orphan_cleanup",
		Args: OrphanArgs{ProtectionMins: int64(s.cfg.OrphanProtection / time.Minute)}, Exclusive: []string{"/pulp/api/v3/orphans/cleanup/"}})
	if err != nil {
		return err
	}
	return accepted(w, t)
}
