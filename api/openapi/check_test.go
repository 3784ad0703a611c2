package openapi

import (
	"strings"
	"testing"
)

const checkDoc = `{"paths": {"/x/": {"get": {"operationId": "x_read", "responses": {
	"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/X"}}}},
	"204": {"description": ""}}}}},
	"components": {"schemas": {
	"X": {"type": "object", "required": ["name", "n", "kind"], "properties": {
		"name": {"type": "string"}, "n": {"type": "integer"}, "kind": {"type": "string", "enum": ["a", "b"]},
		"opt": {"type": "string"}, "tags": {"type": "array", "items": {"$ref": "#/components/schemas/T"}},
		"free": {}, "secret": {"type": "string", "writeOnly": true}}},
	"T": {"type": "object", "required": ["k"], "properties": {"k": {"type": "boolean"}}}}}}`

func TestChecker(t *testing.T) {
	c, err := NewChecker([]byte(checkDoc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		status int
		body   string
		want   string // "" for no problem
	}{
		{200, `{"name": "x", "n": 1, "kind": "a"}`, ""},
		{200, `{"name": "x", "n": 1, "kind": "a", "opt": null, "free": [1], "tags": [{"k": true}]}`, ""},
		{204, ``, ""},
		{200, `{"n": 1, "kind": "a"}`, `$: required property "name" is missing`},
		{200, `{"name": null, "n": 1, "kind": "a"}`, "$.name: null, but the schema is not nullable"},
		{200, `{"name": "x", "n": 1.5, "kind": "a"}`, "$.n: 1.5, want an integer"},
		{200, `{"name": "x", "n": "1", "kind": "a"}`, "$.n: string 1, want an integer"},
		{200, `{"name": "x", "n": 1, "kind": "c"}`, "$.kind: c is not one of [a b]"},
		{200, `{"name": "x", "n": 1, "kind": "a", "tags": [{"k": 1}]}`, "$.tags[0].k: json.Number 1, want a boolean"},
		{200, `[]`, "$: []interface {}, want an object"},
		{201, `{}`, "status 201 is not one the document declares (200, 204)"},
	} {
		got := strings.Join(c.Response("x_read", tc.status, []byte(tc.body)), "; ")
		if got != tc.want {
			t.Errorf("%d %s: %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
	if got := c.Response("nope", 200, nil); len(got) != 1 {
		t.Errorf("unknown operation: %v", got)
	}
}
