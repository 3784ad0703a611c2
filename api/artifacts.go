package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"pith/api/href"
	"pith/api/rest"
	"pith/blob"
	"pith/meta"
)

func artifactListSpec() rest.ListSpec {
	fs := []rest.Filter{}
	for _, d := range []string{"md5", "sha1", "sha224", "sha256", "sha384", "sha512"} {
		fs = append(fs, rest.Filter{Name: d, Col: "a." + d, Lookups: []string{"exact"}})
	}
	fs = append(fs,
		rest.Filter{Name: "orphaned_for", Type: rest.Custom, Number: true, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			mins, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return rest.BadField("orphaned_for", "A valid number is required.")
			}
			l.And(meta.Unreferenced("a.id")+` AND a.timestamp_of_interest < ?`,
				time.Now().Add(-time.Duration(mins*float64(time.Minute))).UnixMicro())
			return nil
		}},
		rest.Filter{Name: "repository_version", Type: rest.Custom, Lookups: []string{"exact"}, Apply: func(l *meta.List, d meta.Dialect, v string) error {
			repo, n, err := rest.VersionFilter(v, "repository_version")
			if err != nil {
				return err
			}
			l.And(`a.id IN (SELECT ca.artifact_id FROM content_artifacts ca JOIN repository_content rc ON rc.content_id = ca.content_id
				JOIN repositories r ON r.id = rc.repository_id WHERE r.pulp_id = ? AND `+meta.InVersion("rc", "?")+`)`, repo, n, n)
			return nil
		}},
	)
	fs = append(fs, rest.IdentityFilters("a.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("a", map[string]string{
		"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "size": "size",
		"md5": "md5", "sha1": "sha1", "sha224": "sha224", "sha256": "sha256", "sha384": "sha384", "sha512": "sha512",
	})}
}

func renderArtifact(a meta.Artifact) artifactResponse {
	return artifactResponse{
		PulpHref: href.Artifact(a.PulpID), Prn: href.PRN("core.artifact", a.PulpID), PulpCreated: rest.Time(a.Created), PulpLastUpdated: rest.Time(a.Updated),
		File: "artifact/" + a.SHA256[:2] + "/" + a.SHA256[2:], Size: a.Size,
		MD5: a.MD5, SHA1: a.SHA1, SHA224: a.SHA224, SHA256: &a.SHA256, SHA384: a.SHA384, SHA512: a.SHA512,
	}
}

func (s *Server) artifactList() rest.HandlerFunc {
	return lister(s, artifactListSpec(), nil, meta.ListArtifacts, each(func(a meta.Artifact) any { return renderArtifact(a) }))
}

func (s *Server) artifactRead(w http.ResponseWriter, r *http.Request) error {
	a, err := meta.ArtifactByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderArtifact(a))
}

func (s *Server) artifactDelete(w http.ResponseWriter, r *http.Request) error {
	a, err := meta.ArtifactByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := meta.DeleteArtifact(r.Context(), s.db, a.ID); err != nil {
		return err
	}
	// The row is gone first; a blob without a row is harmless, the reverse is not.
	if err := s.core.Store.Delete(r.Context(), a.SHA256); err != nil && !errors.Is(err, blob.ErrNotFound) {
		s.cfg.Logger.Warn("artifact blob delete failed", "sha256", a.SHA256, "err", err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func expectFrom(in artifactIn) blob.Expect {
	e := blob.Expect{Size: -1, Digests: map[string]string{}}
	if in.Size != nil {
		e.Size = *in.Size
	}
	for name, v := range map[string]*string{"md5": in.MD5, "sha1": in.SHA1, "sha224": in.SHA224, "sha384": in.SHA384, "sha512": in.SHA512} {
		if v != nil && *v != "" {
			e.Digests[name] = strings.ToLower(*v)
		}
	}
	if in.SHA256 != nil {
		e.SHA256 = strings.ToLower(*in.SHA256)
	}
	return e
}

func (s *Server) artifactCreate(w http.ResponseWriter, r *http.Request) error {
	var in artifactIn
	var pf *rest.PendingFile
	raw, err := rest.ReadBody(r, &in, s.env.ReceiveFile(r.Context(), "file", &pf))
	if err == nil {
		err = rest.Decode(raw, &in)
	}
	if err == nil && pf == nil {
		err = rest.BadField("file", "No file was submitted.")
	}
	if err != nil {
		pf.Cancel(r.Context())
		return err
	}
	a, err := s.env.CommitArtifact(r.Context(), pf, expectFrom(in))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusCreated, renderArtifact(a))
}
