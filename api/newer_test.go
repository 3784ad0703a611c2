package api_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"pith/internal/testfiles"
)

// requestFields are the properties of each operation's request body in an OpenAPI
// document, by operationId.
func requestFields(t *testing.T, doc []byte) map[string][]string {
	t.Helper()
	var d struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, ops := range d.Paths {
		for _, raw := range ops {
			var op struct {
				OperationID string `json:"operationId"`
				RequestBody struct {
					Content map[string]struct {
						Schema struct {
							Ref string `json:"$ref"`
						}
					}
				} `json:"requestBody"`
			}
			if json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue
			}
			for _, c := range op.RequestBody.Content {
				name := strings.TrimPrefix(c.Schema.Ref, "#/components/schemas/")
				for p := range d.Components.Schemas[name].Properties {
					out[op.OperationID] = append(out[op.OperationID], p)
				}
				break
			}
		}
	}
	return out
}

// A request field that a Pulp release up to the newest reference defines for an
// operation pith implements is accepted (the generated bindings of newer releases send
// such fields, overwrite among them); one that no release defines is refused.
func TestNewerRequestFieldsAccepted(t *testing.T) {
	e := newEnv(t)
	for _, ref := range []string{"api-3105.json", "api-latest.json"} {
		dir := map[string]string{"api-3105.json": "pulp-3.105", "api-latest.json": "pulp-latest"}[ref]
		doc, err := testfiles.ReadFile("reference", dir, ref)
		if err != nil {
			t.Fatal(err)
		}
		for op, want := range requestFields(t, doc) {
			got, ok := e.API.RequestFields(op)
			if !ok {
				continue // not implemented, or no body here
			}
			for _, f := range want {
				if !slices.Contains(got, f) {
					t.Errorf("%s: %s defines request field %q; pith refuses it", op, ref, f)
				}
			}
		}
	}
	// A field no release defines is a 400 naming it.
	code, m := e.JSON("POST", "/pulp/api/v3/repositories/file/file/", map[string]any{"name": "x", "no_such_field": 1})
	if code != 400 || m["no_such_field"] == nil {
		t.Errorf("unknown field: %d %v, want 400 naming it", code, m)
	}
}
