package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

// answer is what WriteError answers err with: the status and the body.
func answer(err error) (int, map[string]any) {
	rec := httptest.NewRecorder()
	WriteError(rec, httptest.NewRequest("GET", "/pulp/api/v3/x/", nil), err)
	var m map[string]any
	json.Unmarshal(rec.Body.Bytes(), &m)
	return rec.Code, m
}

// An unexpected error is a 500 that says only where to look; its text goes to the log.
func TestInternalErrorTextGoesToTheLog(t *testing.T) {
	var log bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	defer slog.SetDefault(old)
	secret := `count repositories r: SQL logic error: near "SELECT": /var/lib/pith/pith.db`
	rec := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/pulp/api/v3/repositories/", nil)
	r = r.WithContext(WithCorrelationID(r.Context(), "0123456789abcdef0123456789abcdef"))
	WriteError(rec, r, fmt.Errorf("list: %w", errors.New(secret)))
	if rec.Code != 500 {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	body := rec.Body.String()
	for _, leak := range []string{"SQL", "SELECT", "/var/lib"} {
		if strings.Contains(body, leak) {
			t.Errorf("response carries %q: %s", leak, body)
		}
	}
	if !strings.Contains(body, "0123456789abcdef0123456789abcdef") {
		t.Errorf("response does not give the Correlation-ID to look for: %s", body)
	}
	if !strings.Contains(log.String(), "SQL logic error") || !strings.Contains(log.String(), "0123456789abcdef0123456789abcdef") {
		t.Errorf("log lacks the error or the Correlation-ID: %s", log.String())
	}
}
