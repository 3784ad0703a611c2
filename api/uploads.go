package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"pith/blob"
	"pith/meta"
	"pith/task"
)

func uploadListSpec() listSpec {
	fs := []filter{{name: "size", col: "u.size", kind: kInt, lookups: []string{"exact", "gt", "lt", "range"}}}
	fs = append(fs, identityFilters("u.pulp_id")...)
	return listSpec{filters: fs, ordering: ordering("u", map[string]string{"pulp_id": "pulp_id", "pulp_created": "created", "pulp_last_updated": "updated", "size": "size"})}
}

func renderUpload(u meta.Upload) uploadResponse {
	return uploadResponse{PulpHref: uploadHref(u.PulpID), Prn: prn("core.upload", u.PulpID), PulpCreated: ts(u.Created),
		PulpLastUpdated: ts(u.Updated), Size: u.Size, Completed: tsPtr(u.Completed)}
}

func (s *Server) uploadList(w http.ResponseWriter, r *http.Request) error {
	q, err := parseList(r, s.db.Dialect(), uploadListSpec())
	if err != nil {
		return err
	}
	us, total, err := meta.ListUploads(r.Context(), s.db, q.list)
	if err != nil {
		return err
	}
	items := make([]any, len(us))
	for i, u := range us {
		items[i] = renderUpload(u)
	}
	return writePage(w, r, q, total, items)
}

func (s *Server) uploadCreate(w http.ResponseWriter, r *http.Request) error {
	var in uploadIn
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := requireFields(raw, "size"); err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	if in.Size < 0 {
		return badField("size", "Ensure this value is greater than or equal to 0.")
	}
	u, err := meta.CreateUpload(r.Context(), s.db, in.Size)
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusCreated, renderUpload(u))
}

func (s *Server) uploadRead(w http.ResponseWriter, r *http.Request) error {
	u, err := meta.UploadByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderUpload(u))
}

func (s *Server) uploadDelete(w http.ResponseWriter, r *http.Request) error {
	u, err := meta.UploadByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := s.deleteUpload(r.Context(), u); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// deleteUpload deletes an upload and the chunks it received. The row goes first: parts
// without a row are unreachable, a row without its parts would be a broken upload.
func (s *Server) deleteUpload(ctx context.Context, u meta.Upload) error {
	if err := meta.DeleteUpload(ctx, s.db, u.ID); err != nil {
		return err
	}
	return s.cfg.Store.DeleteParts(ctx, u.PulpID)
}

var contentRange = regexp.MustCompile(`^bytes (\d+)-(\d+)/(\d+|\*)$`)

// uploadChunk writes one chunk (PUT with Content-Range) at its offset. Chunks that
// overlap a received one, or lie past the declared size, are refused before anything is
// written.
func (s *Server) uploadChunk(w http.ResponseWriter, r *http.Request) error {
	u, err := meta.UploadByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	if u.Completed != nil {
		return errStatus(http.StatusBadRequest, "upload %s is already committed", u.PulpID)
	}
	cr := r.Header.Get("Content-Range")
	m := contentRange.FindStringSubmatch(cr)
	if m == nil {
		return errStatus(http.StatusBadRequest, "Content-Range header %q is missing or malformed; want \"bytes start-end/total\"", cr)
	}
	start, _ := strconv.ParseInt(m[1], 10, 64)
	end, _ := strconv.ParseInt(m[2], 10, 64)
	if end < start {
		return errStatus(http.StatusBadRequest, "Content-Range %q: end is before start", cr)
	}
	if m[3] != "*" {
		if total, _ := strconv.ParseInt(m[3], 10, 64); total != u.Size {
			return errStatus(http.StatusBadRequest, "Content-Range %q: total %d differs from the upload's size %d", cr, total, u.Size)
		}
	}
	if end >= u.Size {
		return errStatus(http.StatusBadRequest, "Content-Range %q: chunk ends past the upload's size of %d bytes", cr, u.Size)
	}
	chunks, err := meta.Chunks(r.Context(), s.db, u.ID)
	if err != nil {
		return err
	}
	for _, c := range chunks {
		if start < c.Offset+c.Size && c.Offset <= end {
			return errStatus(http.StatusBadRequest, "Content-Range %q overlaps the chunk already uploaded at bytes %d-%d", cr, c.Offset, c.Offset+c.Size-1)
		}
	}
	var in uploadChunkIn
	var sum string
	want := end - start + 1
	raw, err := readBody(r, &in, func(name, filename string, body io.Reader) error {
		if name != "file" {
			return badField(name, "Unexpected file field.")
		}
		var err error
		sum, err = s.cfg.Store.PutPart(r.Context(), u.PulpID, start, want, body)
		var me *blob.MismatchError
		if errors.As(err, &me) {
			return errStatus(http.StatusBadRequest, "chunk size differs from Content-Range %q (%d bytes): %s", cr, want, me.Error())
		}
		return err
	})
	if err == nil {
		err = decode(raw, &in)
	}
	if err == nil && sum == "" {
		err = badField("file", "No file was submitted.")
	}
	if err == nil && in.SHA256 != nil && *in.SHA256 != "" && !strings.EqualFold(sum, *in.SHA256) {
		err = badField("sha256", "Checksum does not match chunk upload: expected %s, got %s.", *in.SHA256, sum)
	}
	if err != nil {
		return err
	}
	if err := meta.AddChunk(r.Context(), s.db, u.ID, meta.Chunk{Offset: start, Size: want}); err != nil {
		return err
	}
	u, err = meta.UploadByPulpID(r.Context(), s.db, u.PulpID)
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderUpload(u))
}

// uploadCommit checks that the chunks cover the upload exactly, verifies the whole
// file's sha256 into the blob store, and dispatches the task that records the artifact.
func (s *Server) uploadCommit(w http.ResponseWriter, r *http.Request) error {
	u, err := meta.UploadByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	var in uploadCommitIn
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := requireFields(raw, "sha256"); err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	digests, err := s.storeUpload(r.Context(), u, "sha256", blob.Expect{Size: u.Size, SHA256: strings.ToLower(in.SHA256)})
	if err != nil {
		return err
	}
	t, err := s.dispatch(r, task.Spec{Name: "pulpcore.app.tasks.upload.commit", Args: commitArgs{Upload: u.PulpID, Digests: digests},
		Exclusive: []string{uploadHref(u.PulpID)}})
	if err != nil {
		return err
	}
	return accepted(w, t)
}

// storeUpload checks that the chunks of an upload cover it exactly and stores its bytes
// as a blob verified against want; problems are a 400 on field.
func (s *Server) storeUpload(ctx context.Context, u meta.Upload, field string, want blob.Expect) (blob.Digests, error) {
	chunks, err := meta.Chunks(ctx, s.db, u.ID)
	if err != nil {
		return blob.Digests{}, err
	}
	var next int64
	for _, c := range chunks {
		if c.Offset != next {
			return blob.Digests{}, badField(field, "Upload %s has a gap: bytes %d-%d were never uploaded.", u.PulpID, next, c.Offset-1)
		}
		next = c.Offset + c.Size
	}
	if next != u.Size {
		return blob.Digests{}, badField(field, "Upload %s is incomplete: %d of %d bytes received.", u.PulpID, next, u.Size)
	}
	bw, err := s.cfg.Store.NewWriter(ctx)
	if err != nil {
		return blob.Digests{}, err
	}
	defer bw.Cancel(ctx)
	for _, c := range chunks {
		pr, err := s.cfg.Store.OpenPart(ctx, u.PulpID, c.Offset)
		if err != nil {
			return blob.Digests{}, fmt.Errorf("upload %s: chunk at byte %d: %w", u.PulpID, c.Offset, err)
		}
		_, err = io.Copy(bw, io.LimitReader(pr, c.Size))
		pr.Close()
		if err != nil {
			return blob.Digests{}, fmt.Errorf("upload %s: chunk at byte %d: %w", u.PulpID, c.Offset, err)
		}
	}
	d, err := bw.Commit(ctx, want)
	var me *blob.MismatchError
	if errors.As(err, &me) {
		return d, badField(field, "The uploaded data does not match: %s.", me.Error())
	}
	return d, err
}

type commitArgs struct {
	Upload  string       `json:"upload"`
	Digests blob.Digests `json:"digests"`
}
