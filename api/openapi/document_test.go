package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDocumentDeterministic(t *testing.T) {
	t.Parallel()
	a, b := sampleDoc(t), sampleDoc(t)
	if !bytes.Equal(a, b) {
		t.Error("two renderings of the same input differ")
	}
}

func TestDocumentShape(t *testing.T) {
	t.Parallel()
	var d struct {
		OpenAPI string         `json:"openapi"`
		Info    map[string]any `json:"info"`
		Paths   map[string]map[string]struct {
			RawParams []map[string]any           `json:"parameters"`
			Security  []map[string][]string      `json:"security"`
			Responses map[string]map[string]any  `json:"responses"`
			Body      map[string]json.RawMessage `json:"requestBody"`
		} `json:"paths"`
		Components struct {
			SecuritySchemes map[string]map[string]string `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(sampleDoc(t), &d); err != nil {
		t.Fatal(err)
	}
	if d.OpenAPI != "3.0.1" || d.Info["x-pulp-domain-enabled"] != false || d.Info["x-pulp-app-versions"] == nil {
		t.Errorf("header: openapi %q, info %v", d.OpenAPI, d.Info)
	}
	if d.Components.SecuritySchemes["basicAuth"]["scheme"] != "basic" || d.Components.SecuritySchemes["cookieAuth"]["in"] != "cookie" {
		t.Errorf("securitySchemes = %v", d.Components.SecuritySchemes)
	}
	status := d.Paths["/pulp/api/v3/status/"]["get"]
	if status.Security != nil {
		t.Errorf("status_read security = %v, want none", status.Security)
	}
	task := d.Paths["{task_href}"]["get"]
	if len(task.Security) != 2 {
		t.Errorf("tasks_read security = %v", task.Security)
	}
	var names []string
	for _, p := range task.RawParams {
		names = append(names, p["in"].(string)+":"+p["name"].(string))
		if p["in"] == "path" && p["required"] != true {
			t.Errorf("path parameter %v not required", p)
		}
	}
	if got := strings.Join(names, " "); got != "header:X-Task-Diagnostics path:task_href query:fields query:exclude_fields" {
		t.Errorf("tasks_read parameters = %s", got)
	}
	for path, item := range d.Paths {
		for m, op := range item {
			for code, r := range op.Responses {
				if _, ok := r["description"]; !ok {
					t.Errorf("%s %s %s: no description", m, path, code)
				}
			}
		}
	}
}

func TestDocumentValidation(t *testing.T) {
	t.Parallel()
	ok := func() Operation {
		return Operation{ID: "x_read", Method: "GET", Path: "{x_href}", Responses: []Response{{Code: 200}}}
	}
	tests := []struct {
		name   string
		mutate func(ops []Operation) []Operation
		want   string
	}{
		{"duplicate id", func(ops []Operation) []Operation {
			o := ok()
			o.Method = "DELETE"
			return append(ops, o)
		}, `operation "x_read": duplicate operationId`},
		{"duplicate method and path", func(ops []Operation) []Operation {
			o := ok()
			o.ID = "x_again"
			return append(ops, o)
		}, `operation "x_again": GET {x_href} declared twice`},
		{"unknown response schema", func(ops []Operation) []Operation {
			ops[0].Responses[0].Schema = "Missing"
			return ops
		}, `operation "x_read": response 200: unknown schema "Missing"`},
		{"unknown body schema", func(ops []Operation) []Operation {
			ops[0].Body = &Body{MediaTypes: []string{"application/json"}, Schema: "Missing"}
			return ops
		}, `operation "x_read": request body: unknown schema "Missing"`},
		{"body without media types", func(ops []Operation) []Operation {
			ops[0].Body = &Body{Schema: "Missing"}
			return ops
		}, `operation "x_read": request body without media types`},
		{"path param not in path", func(ops []Operation) []Operation {
			ops[0].Params = []Param{{Name: "pk", In: "path", Schema: Schema{Type: "string"}}}
			return ops
		}, `operation "x_read": path parameter "pk" is not in path "{x_href}"`},
		{"duplicate param", func(ops []Operation) []Operation {
			ops[0].Params = []Param{Q(), Q()}
			return ops
		}, `operation "x_read": parameter "q" (query): empty or declared twice`},
		{"bad location", func(ops []Operation) []Operation {
			ops[0].Params = []Param{{Name: "q", In: "body"}}
			return ops
		}, `unknown location "body"`},
		{"no responses", func(ops []Operation) []Operation {
			ops[0].Responses = nil
			return ops
		}, `operation "x_read": no responses`},
		{"bad method", func(ops []Operation) []Operation {
			ops[0].Method = "FETCH"
			return ops
		}, `unknown method "FETCH"`},
		{"relative path", func(ops []Operation) []Operation {
			ops[0].Path = "pulp/api/v3/x/"
			return ops
		}, `must start with / or {`},
		{"empty id", func(ops []Operation) []Operation {
			ops[0].ID = ""
			return ops
		}, `empty operationId`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Document(sampleInfo, tt.mutate([]Operation{ok()}), NewRegistry())
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalid containing %q", err, tt.want)
			}
		})
	}
	if _, err := Document(Info{}, nil, nil); err == nil {
		t.Error("Document without title and version succeeded")
	}
}
