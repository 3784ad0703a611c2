package access

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func statements(t *testing.T, js string) []Statement {
	t.Helper()
	var p Policy
	if err := json.Unmarshal([]byte(`{"statements":`+js+`}`), &p); err != nil {
		t.Fatal(err)
	}
	return p.Statements
}

func TestAllowed(t *testing.T) {
	alice := Subject{ID: 7, Username: "alice"}
	admin := Subject{ID: 1, Username: "admin", Superuser: true}
	// Conditions that hold: "yes" and has_perm:<p> for p in perms.
	perms := map[string]bool{"file.view_filerepository": true}
	cond := func(name, arg string) (bool, error) {
		switch name {
		case "yes":
			return true, nil
		case "no":
			return false, nil
		case "has_perm":
			return perms[arg], nil
		case "boom":
			return false, errors.New("boom")
		}
		t.Fatalf("unexpected condition %s", name)
		return false, nil
	}
	for _, c := range []struct {
		name, statements string
		subject          Subject
		action, method   string
		want             bool
		err              string
	}{
		{"no statements", `[]`, alice, "list", "GET", false, ""},
		{"authenticated list", `[{"action":["list"],"principal":"authenticated","effect":"allow"}]`, alice, "list", "GET", true, ""},
		{"anonymous is not authenticated", `[{"action":"list","principal":"authenticated","effect":"allow"}]`, Subject{}, "list", "GET", false, ""},
		{"anonymous principal", `[{"action":"*","principal":"anonymous","effect":"allow"}]`, Subject{}, "create", "POST", true, ""},
		{"other action", `[{"action":["list"],"principal":"authenticated","effect":"allow"}]`, alice, "create", "POST", false, ""},
		{"admin principal", `[{"action":"*","principal":"admin","effect":"allow"}]`, admin, "destroy", "DELETE", true, ""},
		{"admin principal, not admin", `[{"action":"*","principal":"admin","effect":"allow"}]`, alice, "destroy", "DELETE", false, ""},
		{"id principal", `[{"action":"*","principal":"id:7","effect":"allow"}]`, alice, "sync", "POST", true, ""},
		{"group principal", `[{"action":"*","principal":["group:ops"],"effect":"allow"}]`, alice, "sync", "POST", true, ""},
		{"safe methods", `[{"action":"<safe_methods>","principal":"*","effect":"allow"}]`, alice, "retrieve", "GET", true, ""},
		{"safe methods, POST", `[{"action":"<safe_methods>","principal":"*","effect":"allow"}]`, alice, "create", "POST", false, ""},
		{"method action", `[{"action":"<method:delete>","principal":"*","effect":"allow"}]`, alice, "destroy", "DELETE", true, ""},
		{"condition holds", `[{"action":"retrieve","principal":"*","effect":"allow","condition":"has_perm:file.view_filerepository"}]`, alice, "retrieve", "GET", true, ""},
		{"condition fails", `[{"action":"retrieve","principal":"*","effect":"allow","condition":["yes","has_perm:file.change_filerepository"]}]`, alice, "retrieve", "GET", false, ""},
		{"deny wins", `[{"action":"*","principal":"*","effect":"allow"},{"action":"destroy","principal":"*","effect":"deny"}]`, alice, "destroy", "DELETE", false, ""},
		{"deny whose condition fails does not count", `[{"action":"*","principal":"*","effect":"allow"},{"action":"destroy","principal":"*","effect":"deny","condition":"no"}]`, alice, "destroy", "DELETE", true, ""},
		{"expression", `[{"action":"*","principal":"*","effect":"allow","condition_expression":"no or (yes and not no)"}]`, alice, "list", "GET", true, ""},
		{"expression fails", `[{"action":"*","principal":"*","effect":"allow","condition_expression":"yes and no"}]`, alice, "list", "GET", false, ""},
		{"expression precedence: and before or", `[{"action":"*","principal":"*","effect":"allow","condition_expression":"yes or no and no"}]`, alice, "list", "GET", true, ""},
		{"condition error", `[{"action":"*","principal":"*","effect":"allow","condition":"boom"}]`, alice, "list", "GET", false, "boom"},
		{"conditions of unmatched statements are not run", `[{"action":"create","principal":"*","effect":"allow","condition":"boom"},{"action":"list","principal":"*","effect":"allow"}]`, alice, "list", "GET", true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Allowed(statements(t, c.statements), Request{Subject: c.subject, Action: c.action, Method: c.method, Groups: func() []string { return []string{"ops"} }}, cond)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Allowed = %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	known := func(n string) bool { return n == "has_model_perms" }
	for _, c := range []struct{ policy, err string }{
		{`{"statements":[{"action":"*","principal":"admin","effect":"allow"}]}`, ""},
		{`{"statements":[{"action":"*","principal":"admin","effect":"permit"}]}`, `statement 0: effect must be "allow" or "deny"`},
		{`{"statements":[{"principal":"admin","effect":"allow"}]}`, "statement 0: action is required"},
		{`{"statements":[{"action":"*","effect":"allow"}]}`, "statement 0: principal is required"},
		{`{"statements":[{"action":"*","principal":"*","effect":"allow","condition":"has_modle_perms:x"}]}`, `unknown condition "has_modle_perms"`},
		{`{"statements":[{"action":"*","principal":"*","effect":"allow","condition_expression":"has_model_perms:x and ("}]}`, "condition_expression"},
		{`{"statements":[{"action":"*","principal":"*","effect":"allow","condition_expression":"has_model_perms:x and nope"}]}`, `unknown condition "nope"`},
		{`{"statements":[],"creation_hooks":[{"function":"grant_everything"}]}`, `creation hook 0: unknown function "grant_everything"`},
		{`{"statements":[],"creation_hooks":[{"function":"add_roles_for_object_creator","parameters":{"roles":3}}]}`, `parameter "roles"`},
		{`{"statements":[],"queryset_scoping":{"function":"scope_everything"}}`, `queryset_scoping: unknown function`},
		{`{"statements":[],"queryset_scoping":{}}`, ""},
	} {
		var p Policy
		if err := json.Unmarshal([]byte(c.policy), &p); err != nil {
			t.Fatal(err)
		}
		err := p.Validate(known)
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err = %v, want %q", c.policy, err, c.err)
		}
	}
}

func TestExprDepth(t *testing.T) {
	deep := strings.Repeat("(", 10000) + "yes" + strings.Repeat(")", 10000)
	if _, err := parseExpr(deep); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("err = %v", err)
	}
	nots := strings.Repeat("not ", 10000) + "yes"
	if _, err := parseExpr(nots); err == nil {
		t.Fatal("10,000 nots parsed")
	}
}

func TestCoreDefaults(t *testing.T) {
	d, err := Core()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := d.Policies["tasks"]
	if !ok || !p.Scoped() || p.ScopePermission != "core.view_task" {
		t.Fatalf("tasks policy = %+v", p)
	}
	if r := d.Roles["core.task_owner"]; len(r.Permissions) == 0 {
		t.Fatalf("core.task_owner = %+v", r)
	}
	if !d.Known("core.view_task") || d.Known("core.fly_task") {
		t.Fatal("Known")
	}
}

func FuzzExpr(f *testing.F) {
	f.Add("a and (b or not c)")
	f.Add("((((a")
	f.Fuzz(func(t *testing.T, s string) {
		x, err := parseExpr(s)
		if err == nil {
			x.eval(func(string, string) (bool, error) { return true, nil })
		}
	})
}
