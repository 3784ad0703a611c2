package api

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

// writeJSON sends v with the exact content type the pulp CLI requires.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header()["Content-Type"] = []string{"application/json"}
	w.WriteHeader(status)
	w.Write(b)
}

// fieldError is a 400 naming the fields that were wrong, in DRF's shape
// {"field": ["message"]}.
type fieldError map[string][]string

func (e fieldError) Error() string {
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

func badField(field, format string, args ...any) error {
	return fieldError{field: {fmt.Sprintf(format, args...)}}
}

// httpError is an error with a status and a detail message.
type httpError struct {
	status int
	detail string
}

func (e *httpError) Error() string { return e.detail }

func errStatus(status int, format string, args ...any) error {
	return &httpError{status: status, detail: fmt.Sprintf(format, args...)}
}

var errNotFound = &httpError{status: http.StatusNotFound, detail: "Not found."}

// writeError maps an error to a response: the one place where errors become statuses.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var fe fieldError
	var he *httpError
	var me *blob.MismatchError
	var de *blob.DriverError
	switch {
	case errors.As(err, &fe):
		writeJSON(w, http.StatusBadRequest, fe)
	case errors.As(err, &he):
		writeJSON(w, he.status, map[string]string{"detail": he.detail})
	case errors.As(err, &me):
		writeJSON(w, http.StatusBadRequest, map[string][]string{"non_field_errors": {err.Error()}})
	case errors.Is(err, meta.ErrNotFound):
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not found."})
	case errors.Is(err, meta.ErrConflict):
		writeJSON(w, http.StatusBadRequest, map[string][]string{"non_field_errors": {err.Error()}})
	case errors.As(err, &de) && !errors.Is(err, blob.ErrNotFound):
		// The object store or disk is down: a 503 the client can retry, naming the driver.
		slog.Error("blob storage unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"detail": fmt.Sprintf("the %s blob storage is unavailable: %v", de.Driver, de.Err)})
	case errors.Is(err, meta.ErrInUse):
		writeJSON(w, http.StatusConflict, map[string]string{"detail": err.Error()})
	default:
		slog.Error("api request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeJSON(w, http.StatusInternalServerError, map[string]string{"detail": "internal error: " + err.Error()})
	}
}
