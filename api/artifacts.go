package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"pith/blob"
	"pith/content"
	"pith/meta"
)

func artifactListSpec() listSpec {
	fs := []filter{}
	for _, d := range []string{"md5", "sha1", "sha224", "sha256", "sha384", "sha512"} {
		fs = append(fs, filter{name: d, col: "a." + d, lookups: []string{"exact"}})
	}
	fs = append(fs,
		filter{name: "orphaned_for", kind: kCustom, number: true, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			mins, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return badField("orphaned_for", "A valid number is required.")
			}
			l.And(`NOT EXISTS (SELECT 1 FROM content_artifacts ca WHERE ca.artifact_id = a.id)
				AND NOT EXISTS (SELECT 1 FROM published_files pf WHERE pf.artifact_id = a.id) AND a.timestamp_of_interest < ?`,
				time.Now().Add(-time.Duration(mins*float64(time.Minute))).UnixMicro())
			return nil
		}},
		filter{name: "repository_version", kind: kCustom, lookups: []string{"exact"}, apply: func(l *meta.List, d meta.Dialect, v string) error {
			repo, n, err := versionFilterArgs(v, "repository_version")
			if err != nil {
				return err
			}
			l.And(`a.id IN (SELECT ca.artifact_id FROM content_artifacts ca JOIN repository_content rc ON rc.content_id = ca.content_id
				JOIN repositories r ON r.id = rc.repository_id WHERE r.pulp_id = ? AND rc.version_added <= ? AND (rc.version_removed IS NULL OR rc.version_removed > ?))`, repo, n, n)
			return nil
		}},
	)
	fs = append(fs, identityFilters("a.pulp_id")...)
	return listSpec{filters: fs, ordering: ordering("a", map[string]string{
		"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "size": "size",
		"md5": "md5", "sha1": "sha1", "sha224": "sha224", "sha256": "sha256", "sha384": "sha384", "sha512": "sha512",
	})}
}

// versionFilterArgs parses a repository version href used as a filter value.
func versionFilterArgs(v, field string) (string, int64, error) {
	p, ok := parseHref(v)
	if !ok || !strings.HasPrefix(p.collection, "repositories/") || !strings.HasPrefix(p.rest, "versions/") {
		return "", 0, badField(field, "Invalid hyperlink - No URL match for %q.", v)
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(p.rest, "versions/"), 10, 64)
	if err != nil {
		return "", 0, badField(field, "Invalid hyperlink - No URL match for %q.", v)
	}
	return p.id, n, nil
}

func renderArtifact(a meta.Artifact) artifactResponse {
	return artifactResponse{
		PulpHref: artifactHref(a.PulpID), Prn: prn("core.artifact", a.PulpID), PulpCreated: ts(a.Created), PulpLastUpdated: ts(a.Updated),
		File: "artifact/" + a.SHA256[:2] + "/" + a.SHA256[2:], Size: a.Size,
		MD5: a.MD5, SHA1: a.SHA1, SHA224: a.SHA224, SHA256: &a.SHA256, SHA384: a.SHA384, SHA512: a.SHA512,
	}
}

func (s *Server) artifactList(w http.ResponseWriter, r *http.Request) error {
	q, err := parseList(r, s.db.Dialect(), artifactListSpec())
	if err != nil {
		return err
	}
	as, total, err := meta.ListArtifacts(r.Context(), s.db, q.list)
	if err != nil {
		return err
	}
	items := make([]any, len(as))
	for i, a := range as {
		items[i] = renderArtifact(a)
	}
	return writePage(w, r, q, total, items)
}

func (s *Server) artifactRead(w http.ResponseWriter, r *http.Request) error {
	a, err := meta.ArtifactByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderArtifact(a))
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
	if err := s.cfg.Store.Delete(r.Context(), a.SHA256); err != nil && !errors.Is(err, blob.ErrNotFound) {
		s.cfg.Logger.Warn("artifact blob delete failed", "sha256", a.SHA256, "err", err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// pendingFile is a file part streamed into the blob store but not yet committed: bad
// fields that arrive after it can still cancel it.
type pendingFile struct {
	w    *blob.Writer
	name string
}

// receiveFile returns a fileFunc that streams one file part (named field) into a blob
// writer.
func (s *Server) receiveFile(ctx context.Context, field string, pf **pendingFile) fileFunc {
	return func(name, filename string, body io.Reader) error {
		if name != field {
			return badField(name, "Unexpected file field.")
		}
		if *pf != nil {
			return badField(name, "Only one file may be sent.")
		}
		w, err := s.cfg.Store.NewWriter(ctx)
		if err != nil {
			return err
		}
		*pf = &pendingFile{w: w, name: filename}
		if _, err := io.Copy(w, body); err != nil {
			var de *blob.DriverError
			if errors.As(err, &de) {
				return err // the store failed, not the client: 503
			}
			return errStatus(http.StatusBadRequest, "read file %q: %v", filename, err)
		}
		return nil
	}
}

func (p *pendingFile) cancel(ctx context.Context) {
	if p != nil {
		p.w.Cancel(ctx)
	}
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

// commitArtifact commits a pending blob against expectations and records the artifact.
func (s *Server) commitArtifact(ctx context.Context, pf *pendingFile, want blob.Expect) (meta.Artifact, error) {
	d, err := pf.w.Commit(ctx, want)
	if err != nil {
		var me *blob.MismatchError
		if errors.As(err, &me) {
			return meta.Artifact{}, badField(me.What, "The uploaded file %q does not match: %s.", pf.name, me.Error())
		}
		return meta.Artifact{}, err
	}
	a, _, err := meta.PutArtifact(ctx, s.db, content.Artifact(d))
	return a, err
}

func (s *Server) artifactCreate(w http.ResponseWriter, r *http.Request) error {
	var in artifactIn
	var pf *pendingFile
	raw, err := readBody(r, &in, s.receiveFile(r.Context(), "file", &pf))
	if err == nil {
		err = decode(raw, &in)
	}
	if err == nil && pf == nil {
		err = badField("file", "No file was submitted.")
	}
	if err != nil {
		pf.cancel(r.Context())
		return err
	}
	a, err := s.commitArtifact(r.Context(), pf, expectFrom(in))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusCreated, renderArtifact(a))
}

// rawOf is a helper for tests and handlers that build bodies.
func rawOf(v any) map[string]json.RawMessage {
	b, _ := json.Marshal(v)
	m := map[string]json.RawMessage{}
	json.Unmarshal(b, &m)
	return m
}
