package api

import (
	"net/http"
	"time"

	"pith/api/rest"
	"pith/content"
	"pith/task"
)

func (s *Server) orphansCleanup(w http.ResponseWriter, r *http.Request) error {
	var in orphansCleanupIn
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	a := content.OrphanArgs{ProtectionMins: int64(s.cfg.OrphanProtection / time.Minute)}
	if in.OrphanProtectionTime != nil {
		if *in.OrphanProtectionTime < 0 {
			return rest.BadField("orphan_protection_time", "Ensure this value is greater than or equal to 0.")
		}
		a.ProtectionMins = *in.OrphanProtectionTime
	}
	if in.ContentHrefs != nil {
		a.HasContentHrefs = true
		if a.ContentIDs, err = s.env.ContentIDs(r.Context(), "content_hrefs", in.ContentHrefs); err != nil {
			return err
		}
	}
	return s.env.Dispatch(w, r, task.Spec{Name: content.OrphanTask, Args: a, Exclusive: []string{"/pulp/api/v3/orphans/cleanup/"}})
}

// orphansDelete is the deprecated DELETE /orphans/: cleanup with default protection.
func (s *Server) orphansDelete(w http.ResponseWriter, r *http.Request) error {
	return s.env.Dispatch(w, r, task.Spec{Name: content.OrphanTask,
		Args: content.OrphanArgs{ProtectionMins: int64(s.cfg.OrphanProtection / time.Minute)}, Exclusive: []string{"/pulp/api/v3/orphans/cleanup/"}})
}
