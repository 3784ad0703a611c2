package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"

	"pith/blob"
	"pith/meta"
)

// WriteJSON sends v with the exact content type the pulp CLI requires.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		slog.Error("encode api response", "err", err)
		http.Error(w, "internal error: the response could not be encoded", http.StatusInternalServerError)
		return
	}
	w.Header()["Content-Type"] = []string{"application/json"}
	w.WriteHeader(status)
	w.Write(b)
}

// FieldErrors is a 400 naming the fields that were wrong, in DRF's shape
// {"field": ["message"]}.
type FieldErrors map[string][]string

func (e FieldErrors) Error() string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+": "+strings.Join(e[k], " "))
	}
	return strings.Join(parts, "; ")
}

// BadField is a 400 naming one field.
func BadField(field, format string, args ...any) error {
	return FieldErrors{field: {fmt.Sprintf(format, args...)}}
}

// NonField is a 400 about the body as a whole (DRF's non_field_errors).
func NonField(format string, args ...any) error {
	return FieldErrors{"non_field_errors": {fmt.Sprintf(format, args...)}}
}

// httpError is an error with a status and a detail message.
type httpError struct {
	status int
	detail string
}

func (e *httpError) Error() string { return e.detail }

// Status is an error answered with status and {"detail": message}.
func Status(status int, format string, args ...any) error {
	return &httpError{status: status, detail: fmt.Sprintf(format, args...)}
}

// ErrNotFound is answered 404 {"detail": "Not found."}.
var ErrNotFound = &httpError{status: http.StatusNotFound, detail: "Not found."}

// WriteError maps an error to a response: the one place where errors become statuses.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	var fe FieldErrors
	var he *httpError
	var me *blob.MismatchError
	var de *blob.DriverError
	switch {
	case errors.As(err, &fe):
		WriteJSON(w, http.StatusBadRequest, fe)
	case errors.As(err, &he):
		WriteJSON(w, he.status, map[string]string{"detail": he.detail})
	case errors.As(err, &me):
		WriteJSON(w, http.StatusBadRequest, map[string][]string{"non_field_errors": {err.Error()}})
	case errors.Is(err, meta.ErrNotFound):
		WriteJSON(w, http.StatusNotFound, map[string]string{"detail": "Not found."})
	case errors.Is(err, meta.ErrConflict):
		WriteJSON(w, http.StatusBadRequest, map[string][]string{"non_field_errors": {err.Error()}})
	case errors.As(err, &de) && de.Full():
		// 507 says what happened; the client may retry once room is made. Where the
		// storage lives is the log's business, not the client's.
		slog.Error("blob storage full", "method", r.Method, "path", r.URL.Path, "err", err)
		WriteJSON(w, http.StatusInsufficientStorage, map[string]string{"detail": fmt.Sprintf("the %s blob storage is full", blob.Storage(de.Driver))})
	case meta.IsFull(err):
		slog.Error("metadata database full", "method", r.Method, "path", r.URL.Path, "err", err)
		WriteJSON(w, http.StatusInsufficientStorage, map[string]string{"detail": "the metadata database is full"})
	case errors.As(err, &de) && !errors.Is(err, blob.ErrNotFound):
		// The object store or disk is down: a 503 the client can retry, naming the storage
		// (the error itself, with its paths and addresses, goes to the log).
		slog.Error("blob storage unavailable", "method", r.Method, "path", r.URL.Path, "correlation_id", CorrelationID(r.Context()), "err", err)
		WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"detail": fmt.Sprintf("the %s blob storage is unavailable; try again later", blob.Storage(de.Driver))})
	case errors.Is(err, meta.ErrInUse):
		WriteJSON(w, http.StatusConflict, map[string]string{"detail": err.Error()})
	default:
		// The error's text (SQL, paths) is for the log only; the client gets the
		// Correlation-ID that finds it there.
		cid := CorrelationID(r.Context())
		slog.Error("api request failed", "method", r.Method, "path", r.URL.Path, "correlation_id", cid, "err", err)
		detail := "Internal error; the server's log has it"
		if cid != "" {
			detail += " under Correlation-ID " + cid
		}
		WriteJSON(w, http.StatusInternalServerError, map[string]string{"detail": detail + "."})
	}
}
