package api

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"pith/api/href"
	"pith/api/rest"
	"pith/blob"
	"pith/content"
	"pith/meta"
	"pith/task"
)

func uploadListSpec() rest.ListSpec {
	fs := []rest.Filter{{Name: "size", Col: "u.size", Type: rest.Int, Lookups: []string{"exact", "gt", "lt", "range"}}}
	fs = append(fs, rest.IdentityFilters("u.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("u", map[string]string{"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "size": "size"})}
}

func renderUpload(u meta.Upload) uploadResponse {
	return uploadResponse{PulpHref: href.Upload(u.PulpID), Prn: href.PRN("core.upload", u.PulpID), PulpCreated: rest.Time(u.Created),
		PulpLastUpdated: rest.Time(u.Updated), Size: u.Size, Completed: rest.TimePtr(u.Completed)}
}

func (s *Server) uploadList() rest.HandlerFunc {
	return lister(s, uploadListSpec(), s.scope(scoping{viewset: "uploads", id: "u.pulp_id"}, nil), meta.ListUploads, each(func(u meta.Upload) any { return renderUpload(u) }))
}

func (s *Server) uploadCreate(w http.ResponseWriter, r *http.Request) error {
	var in uploadIn
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Require(raw, "size"); err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	if in.Size < 0 {
		return rest.BadField("size", "Ensure this value is greater than or equal to 0.")
	}
	u, err := meta.CreateUpload(r.Context(), s.db, in.Size)
	if err != nil {
		return err
	}
	if err := s.created(r.Context(), "uploads", meta.Object{Type: "core.upload", ID: u.PulpID}); err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusCreated, renderUpload(u))
}

func (s *Server) uploadRead(w http.ResponseWriter, r *http.Request) error {
	u, err := meta.UploadByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	chunks, err := meta.Chunks(r.Context(), s.db, u.ID)
	if err != nil {
		return err
	}
	out := uploadDetailResponse{uploadResponse: renderUpload(u), Chunks: make([]uploadChunkResponse, len(chunks))}
	for i, c := range chunks {
		out.Chunks[i] = uploadChunkResponse{Offset: c.Offset, Size: c.Size}
	}
	return rest.WriteOne(w, r, http.StatusOK, out)
}

func (s *Server) uploadDelete(w http.ResponseWriter, r *http.Request) error {
	u, err := meta.UploadByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := rest.DeleteUpload(r.Context(), s.db, s.core.Store, u); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

var contentRange = regexp.MustCompile(`^bytes (\d+)-(\d+)/(\d+|\*)$`)

// uploadChunk writes one chunk (PUT with Content-Range) at its offset. Chunks that
// overlap a received one, or lie past the declared size, are refused before anything is
// written; the overlap is checked again in the transaction that records the chunk, so
// of two overlapping chunks sent at once exactly one is recorded. Each chunk's bytes go
// to a part of its own (a random key), so a refused chunk never replaces the bytes of
// a recorded one; its part goes with the upload.
func (s *Server) uploadChunk(w http.ResponseWriter, r *http.Request) error {
	u, err := meta.UploadByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	if u.Completed != nil {
		return rest.Status(http.StatusBadRequest, "upload %s is already committed", u.PulpID)
	}
	cr := r.Header.Get("Content-Range")
	m := contentRange.FindStringSubmatch(cr)
	if m == nil {
		return rest.Status(http.StatusBadRequest, "Content-Range header %q is missing or malformed; want \"bytes start-end/total\"", cr)
	}
	start, _ := strconv.ParseInt(m[1], 10, 64)
	end, _ := strconv.ParseInt(m[2], 10, 64)
	if end < start {
		return rest.Status(http.StatusBadRequest, "Content-Range %q: end is before start", cr)
	}
	if m[3] != "*" {
		if total, _ := strconv.ParseInt(m[3], 10, 64); total != u.Size {
			return rest.Status(http.StatusBadRequest, "Content-Range %q: total %d differs from the upload's size %d", cr, total, u.Size)
		}
	}
	if end >= u.Size {
		return rest.Status(http.StatusBadRequest, "Content-Range %q: chunk ends past the upload's size of %d bytes", cr, u.Size)
	}
	want := end - start + 1
	chunk := meta.Chunk{Offset: start, Size: want, Part: partKey()}
	if err := overlapping(cr, meta.Overlapping(r.Context(), s.db, u.ID, chunk)); err != nil {
		return err
	}
	var in uploadChunkIn
	var sum string
	raw, err := rest.ReadBody(r, &in, func(name, filename string, body io.Reader) error {
		if name != "file" {
			return rest.BadField(name, "Unexpected file field.")
		}
		var err error
		sum, err = s.core.Store.PutPart(r.Context(), u.PulpID, chunk.Part, want, body)
		var me *blob.MismatchError
		if errors.As(err, &me) {
			return rest.Status(http.StatusBadRequest, "chunk size differs from Content-Range %q (%d bytes): %s", cr, want, me.Error())
		}
		return err
	})
	if err == nil {
		err = rest.Decode(raw, &in)
	}
	if err == nil && sum == "" {
		err = rest.BadField("file", "No file was submitted.")
	}
	if err == nil && in.SHA256 != nil && *in.SHA256 != "" && !strings.EqualFold(sum, *in.SHA256) {
		err = rest.BadField("sha256", "Checksum does not match chunk upload: expected %s, got %s.", *in.SHA256, sum)
	}
	if err != nil {
		return err
	}
	if err := overlapping(cr, meta.AddChunk(r.Context(), s.db, u.ID, chunk)); err != nil {
		return err
	}
	u, err = meta.UploadByPulpID(r.Context(), s.db, u.PulpID)
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderUpload(u))
}

// overlapping answers an overlap with the 400 a client sees for it, before the chunk's
// bytes are read or after they were, alike; other errors pass unchanged.
func overlapping(cr string, err error) error {
	var oe *meta.OverlapError
	if errors.As(err, &oe) {
		c := oe.Received
		return rest.Status(http.StatusBadRequest, "Content-Range %q overlaps the chunk already uploaded at bytes %d-%d", cr, c.Offset, c.Offset+c.Size-1)
	}
	return err
}

// partKey is a new random key for the part of a chunk.
func partKey() int64 {
	var b [8]byte
	rand.Read(b[:])
	return int64(binary.BigEndian.Uint64(b[:]) >> 1)
}

// uploadCommit checks that the chunks cover the upload exactly, verifies the whole
// file's sha256 into the blob store, and dispatches the task that records the artifact.
func (s *Server) uploadCommit(w http.ResponseWriter, r *http.Request) error {
	u, err := meta.UploadByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	var in uploadCommitIn
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Require(raw, "sha256"); err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	digests, err := s.env.StoreUpload(r.Context(), u, "sha256", blob.Expect{Size: u.Size, SHA256: strings.ToLower(in.SHA256)})
	if err != nil {
		return err
	}
	return s.env.Dispatch(w, r, task.Spec{Name: content.CommitTask, Args: content.CommitArgs{Upload: u.PulpID, Digests: digests},
		Exclusive: []string{href.Upload(u.PulpID)}})
}
