package ansible

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"

	"pith/api/rest"
)

// Galaxy's error shape (pulp_ansible's galaxy/v3/exceptions.py): the error rest.WriteError
// would answer, rewritten as {"errors": [{"status", "code", "title", "detail", "source"}]},
// detail left out when it says what title says, source only for a field's error.

type galaxyError struct {
	Status string       `json:"status"`
	Code   string       `json:"code"`
	Title  string       `json:"title"`
	Detail string       `json:"detail,omitempty"`
	Source *errorSource `json:"source,omitempty"`
}

type errorSource struct {
	Parameter string `json:"parameter"`
}

// galaxyErrorTitles are Django REST framework's code and default detail by status.
var galaxyErrorTitles = map[int][2]string{
	400: {"invalid", "Invalid input."},
	401: {"not_authenticated", "Authentication credentials were not provided."},
	403: {"permission_denied", "You do not have permission to perform this action."},
	404: {"not_found", "Not found."},
	405: {"method_not_allowed", "Method not allowed."},
	409: {"conflict", "Conflict."},
	500: {"server_error", "A server error occurred."},
	503: {"service_unavailable", "Service temporarily unavailable, try again later."},
	507: {"insufficient_storage", "Insufficient storage."},
}

// writeGalaxyError answers err in Galaxy's shape.
func writeGalaxyError(w http.ResponseWriter, r *http.Request, err error) {
	rec := httptest.NewRecorder()
	rest.WriteError(rec, r, err)
	status := rec.Code
	// An error is no answer a client may keep and revalidate.
	w.Header().Del("ETag")
	w.Header().Del("Cache-Control")
	for k, v := range rec.Header() {
		if k != "Content-Type" && k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	code, title := "error", http.StatusText(status)
	if t, ok := galaxyErrorTitles[status]; ok {
		code, title = t[0], t[1]
	}
	one := func(detail string, field string) galaxyError {
		e := galaxyError{Status: strconv.Itoa(status), Code: code, Title: title}
		if detail != title {
			e.Detail = detail
		}
		if field != "" && field != "non_field_errors" {
			e.Source = &errorSource{Parameter: field}
			if detail == "No file was submitted." || detail == "This field is required." {
				e.Code = "required"
			}
		}
		return e
	}
	var out []galaxyError
	var plain struct {
		Detail *string `json:"detail"`
	}
	var fields map[string][]string
	switch body := rec.Body.Bytes(); {
	case json.Unmarshal(body, &plain) == nil && plain.Detail != nil:
		out = append(out, one(*plain.Detail, ""))
	case json.Unmarshal(body, &fields) == nil && len(fields) > 0:
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, d := range fields[k] {
				out = append(out, one(d, k))
			}
		}
	default:
		out = append(out, one(title, ""))
	}
	rest.WriteJSON(w, status, map[string]any{"errors": out})
}
