package rest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"pith/api/access"
)

// Check is what an access condition asks about a request: who makes it, what they hold,
// and the body they sent.
type Check interface {
	Subject() access.Subject
	// HasModelPerm reports whether the caller holds perm on every object (a superuser
	// holds every permission).
	HasModelPerm(perm string) (bool, error)
	// HasPermOn reports whether the caller holds perm on the object an href names, on
	// that object itself (not counting permissions held on every object).
	HasPermOn(perm, href string) (bool, error)
	// Body is the request's body as ReadBody reads it. Asked before the handler has read
	// the body, it answers ErrBodyPending and the decision waits for the body.
	Body() (map[string]json.RawMessage, error)
	// Request is the request being decided, for conditions that read its path (ansible's
	// v3_can_view_repo_content names the distribution in the URL).
	Request() *http.Request
}

// ErrBodyPending is what Check.Body answers until the handler reads the body.
var ErrBodyPending = errors.New("access decision waits for the request body")

// Condition is an access condition a content type adds (rpm's has_perms_to_copy): arg
// is what follows the name and a colon in the policy ("" for none).
type Condition func(c Check, arg string) (bool, error)

// ErrForbidden is the answer to a caller the policy refuses.
var ErrForbidden = &httpError{status: http.StatusForbidden, detail: "You do not have permission to perform this action."}

type gateKey struct{}

// WithGate makes ReadBody call gate with the body it read before returning it: an
// access decision that depends on the body (a remote named in it, say) is taken there,
// and its error is ReadBody's.
func WithGate(ctx context.Context, gate func(raw map[string]json.RawMessage) error) context.Context {
	return context.WithValue(ctx, gateKey{}, gate)
}

func gateOf(ctx context.Context) func(map[string]json.RawMessage) error {
	g, _ := ctx.Value(gateKey{}).(func(map[string]json.RawMessage) error)
	return g
}

type subjectKey struct{}

// WithSubject records who a request runs as.
func WithSubject(ctx context.Context, s access.Subject) context.Context {
	return context.WithValue(ctx, subjectKey{}, s)
}

// SubjectOf is who a request runs as (anonymous when none was recorded).
func SubjectOf(ctx context.Context) access.Subject {
	s, _ := ctx.Value(subjectKey{}).(access.Subject)
	return s
}

// IsStatus reports whether err is answered with status code.
func IsStatus(err error, code int) bool {
	var he *httpError
	return errors.As(err, &he) && he.status == code
}
