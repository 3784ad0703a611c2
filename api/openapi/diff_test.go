package openapi

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiffReports(t *testing.T) {
	t.Parallel()
	base := func() []Operation {
		return []Operation{{
			ID: "things_list", Method: "GET", Path: "/things/", Params: append(ListParams(), StringFilter("name", "in")...),
			Body:      &Body{MediaTypes: []string{"application/json"}, Schema: "Thing"},
			Responses: []Response{{Code: 200, Schema: "Thing"}},
		}}
	}
	render := func(t *testing.T, ops []Operation) []byte {
		t.Helper()
		reg := NewRegistry()
		reg.AddSchema("Thing", Schema{Type: "object", Properties: []Property{{"name", Schema{Type: "string"}}, {"size", Schema{Type: "integer"}}}, Required: []string{"name"}})
		doc, err := Document(sampleInfo, ops, reg)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	tests := []struct {
		name   string
		mutate func([]Operation) []Operation
		want   []string
	}{
		{"same", func(o []Operation) []Operation { return o }, nil},
		{"explode unset", func(o []Operation) []Operation {
			o[0].Params[len(o[0].Params)-1].Explode = nil
			return o
		}, []string{`things_list: parameter "name__in" (query): explode: want false, got <unset>`}},
		{"items type", func(o []Operation) []Operation {
			o[0].Params[len(o[0].Params)-1].Schema.Items = &Schema{Type: "integer"}
			return o
		}, []string{`things_list: parameter "name__in" (query): items type: want "string", got "integer"`}},
		{"missing and extra param", func(o []Operation) []Operation {
			o[0].Params = append(o[0].Params[:len(o[0].Params)-1], Q())
			return o
		}, []string{
			`things_list: parameter "name__in" (query): missing`,
			`things_list: parameter "q" (query): not in the reference`,
		}},
		{"method path security codes media", func(o []Operation) []Operation {
			o[0].Method, o[0].Path, o[0].Anonymous = "POST", "/stuff/", true
			o[0].Responses = append(o[0].Responses, Response{Code: 202, Schema: "Thing"})
			o[0].Body.MediaTypes = []string{"multipart/form-data"}
			return o
		}, []string{
			`things_list: method: want "get", got "post"`,
			`things_list: path: want "/things/", got "/stuff/"`,
			`things_list: security: want "basicAuth+cookieAuth", got "anonymous"`,
			`things_list: request media types: want ["application/json"], got ["multipart/form-data"]`,
			`things_list: response codes: want ["200"], got ["200","202"]`,
		}},
		{"enum not in reference", func(o []Operation) []Operation {
			o[0].Params = append(o[0].Params, Ordering("name"))
			return o
		}, []string{`things_list: parameter "ordering" (query): not in the reference`}},
		{"new operation", func(o []Operation) []Operation {
			return append(o, Operation{ID: "things_read", Method: "GET", Path: "{thing_href}", Responses: []Response{{Code: 200}}})
		}, []string{`things_read: not in the reference (get {thing_href})`}},
	}
	ref := render(t, base())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Diff(ref, render(t, tt.mutate(base())))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Diff lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiffBodySchemaAndEnum(t *testing.T) {
	t.Parallel()
	mk := func(required []string, props []Property, enum []string) []byte {
		reg := NewRegistry()
		reg.AddSchema("Thing", Schema{Type: "object", Properties: props, Required: required})
		op := Operation{ID: "things_create", Method: "POST", Path: "/things/",
			Params:    []Param{Query("kind", Schema{Type: "string", Enum: enum}, "")},
			Body:      &Body{MediaTypes: []string{"application/json"}, Schema: "Thing"},
			Responses: []Response{{Code: 201}}}
		doc, err := Document(sampleInfo, []Operation{op}, reg)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	name, size := Property{"name", Schema{Type: "string"}}, Property{"size", Schema{Type: "integer"}}
	ref := mk([]string{"name"}, []Property{name, size}, []string{"a", "b"})
	got, err := Diff(ref, mk([]string{"name", "size"}, []Property{name}, []string{"a", "c"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`things_create: parameter "kind" (query): schema enum: not in the reference: c`,
		`things_create: request body required properties: want ["name"], got ["name","size"]`,
		`things_create: request body properties missing: size`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Diff lines (-want +got):\n%s", diff)
	}
	// Fewer enum values than the reference, or none, is no difference.
	if got, _ := Diff(ref, mk([]string{"name"}, []Property{name, size}, []string{"a"})); len(got) > 0 {
		t.Errorf("subset enum reported: %s", strings.Join(got, "\n"))
	}
	if _, err := Diff([]byte("{"), ref); err == nil {
		t.Error("Diff of bad JSON succeeded")
	}
}
