package access

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Policy is one viewset's access policy, as Pulp stores it: statements, the hooks run
// when an object is created, and how its lists are narrowed to what the caller may see.
type Policy struct {
	Statements    []Statement `json:"statements"`
	CreationHooks []Hook      `json:"creation_hooks"`
	// QuerysetScoping names the function narrowing lists; nil (or an empty function)
	// turns scoping off.
	QuerysetScoping *Call `json:"queryset_scoping"`
}

// Statement is one statement of a policy in drf-access-policy's form. Action, Principal
// and Condition are a string or a list of strings in the stored JSON.
type Statement struct {
	Action              Strings `json:"action"`
	Principal           Strings `json:"principal"`
	Effect              string  `json:"effect"`
	Condition           Strings `json:"condition,omitempty"`
	ConditionExpression Strings `json:"condition_expression,omitempty"`
}

// Hook is a creation hook: a function and its parameters.
type Hook struct {
	Function   string         `json:"function"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

// Call is a named function with optional parameters (a queryset scoping).
type Call struct {
	Function   string         `json:"function,omitempty"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

// Scoped reports whether the policy narrows lists with function scope_queryset.
func (p Policy) Scoped() bool {
	return p.QuerysetScoping != nil && p.QuerysetScoping.Function == "scope_queryset"
}

// Strings is a JSON string or list of strings.
type Strings []string

// UnmarshalJSON accepts "x" or ["x", ...].
func (s *Strings) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = Strings{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("must be a string or a list of strings")
	}
	*s = many
	return nil
}

// Subject is who a request runs as. The zero Subject is anonymous.
type Subject struct {
	ID        int64 // users.id; 0 for anonymous
	Username  string
	Superuser bool
	Staff     bool
}

// Anonymous reports whether the subject is no user at all.
func (s Subject) Anonymous() bool { return s.ID == 0 }

// Request is what a decision is about.
type Request struct {
	Subject Subject
	Action  string // the viewset action: list, retrieve, create, sync, ...
	Method  string // the HTTP method, for <method:x> and <safe_methods> actions
	// Groups are the names of the subject's groups, for group: principals; asked only
	// when a statement names one.
	Groups func() []string
}

// CondFunc evaluates one condition ("has_model_perms:file.add_filerepository" is name
// has_model_perms, arg file.add_filerepository). An error (a missing object, a bad
// body) ends the decision and is the request's answer.
type CondFunc func(name, arg string) (bool, error)

// Allowed evaluates the statements as drf-access-policy does: a statement matches when
// its principal and action match and all of its conditions (and condition expressions)
// hold; the request is allowed when at least one statement matches and no matching
// statement denies.
func Allowed(statements []Statement, req Request, cond CondFunc) (bool, error) {
	allowed := false
	for _, st := range statements {
		if !principalMatches(st.Principal, req) || !actionMatches(st.Action, req) {
			continue
		}
		ok, err := conditionsHold(st, cond)
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		if st.Effect != "allow" {
			return false, nil
		}
		allowed = true
	}
	return allowed, nil
}

func principalMatches(ps Strings, req Request) bool {
	s := req.Subject
	for _, p := range ps {
		switch {
		case p == "*":
			return true
		case p == "admin" && s.Superuser, p == "staff" && s.Staff:
			return true
		case p == "authenticated" && !s.Anonymous(), p == "anonymous" && s.Anonymous():
			return true
		case strings.HasPrefix(p, "id:") && !s.Anonymous() && p[3:] == strconv.FormatInt(s.ID, 10):
			return true
		case strings.HasPrefix(p, "group:") && req.Groups != nil && slices.Contains(req.Groups(), p[6:]):
			return true
		}
	}
	return false
}

func actionMatches(as Strings, req Request) bool {
	for _, a := range as {
		switch a {
		case "*", req.Action, "<method:" + strings.ToLower(req.Method) + ">":
			return true
		case "<safe_methods>":
			if req.Method == "GET" || req.Method == "HEAD" || req.Method == "OPTIONS" {
				return true
			}
		}
	}
	return false
}

func conditionsHold(st Statement, cond CondFunc) (bool, error) {
	for _, c := range st.Condition {
		name, arg, _ := strings.Cut(c, ":")
		ok, err := cond(name, arg)
		if err != nil || !ok {
			return false, err
		}
	}
	for _, e := range st.ConditionExpression {
		x, err := parseExpr(e)
		if err != nil {
			return false, err
		}
		ok, err := x.eval(cond)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// Validate checks a policy a client sent: every statement has an effect of allow or
// deny, actions and principals, and conditions that name known functions (known reports
// whether a condition function exists). Errors name the statement.
func (p Policy) Validate(known func(name string) bool) error {
	for i, st := range p.Statements {
		where := fmt.Sprintf("statement %d", i)
		if st.Effect != "allow" && st.Effect != "deny" {
			return fmt.Errorf("%s: effect must be \"allow\" or \"deny\", not %q", where, st.Effect)
		}
		if len(st.Action) == 0 {
			return fmt.Errorf("%s: action is required", where)
		}
		if len(st.Principal) == 0 {
			return fmt.Errorf("%s: principal is required", where)
		}
		for _, c := range st.Condition {
			if name, _, _ := strings.Cut(c, ":"); !known(name) {
				return fmt.Errorf("%s: unknown condition %q", where, name)
			}
		}
		for _, e := range st.ConditionExpression {
			x, err := parseExpr(e)
			if err != nil {
				return fmt.Errorf("%s: condition_expression %q: %w", where, e, err)
			}
			if name, ok := x.unknown(known); !ok {
				return fmt.Errorf("%s: condition_expression %q: unknown condition %q", where, e, name)
			}
		}
	}
	for i, h := range p.CreationHooks {
		if h.Function != "add_roles_for_object_creator" {
			return fmt.Errorf("creation hook %d: unknown function %q (only add_roles_for_object_creator is available)", i, h.Function)
		}
		if _, err := HookRoles(h); err != nil {
			return fmt.Errorf("creation hook %d: %w", i, err)
		}
	}
	if s := p.QuerysetScoping; s != nil && s.Function != "" && s.Function != "scope_queryset" {
		return fmt.Errorf("queryset_scoping: unknown function %q (only scope_queryset is available)", s.Function)
	}
	return nil
}

// HookRoles are the roles an add_roles_for_object_creator hook assigns: its "roles"
// parameter, a name or a list of names.
func HookRoles(h Hook) ([]string, error) {
	switch v := h.Parameters["roles"].(type) {
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, errors.New(`parameter "roles" must be a role name or a list of role names`)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, errors.New(`parameter "roles" must be a role name or a list of role names`)
}
