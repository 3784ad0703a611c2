package openapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type inner struct {
	Code string `json:"code"`
}

type embedded struct {
	ID string `json:"id" openapi:"format=uuid,readOnly"`
}

type shapes struct {
	embedded
	Name     string             `json:"name" openapi:"minLength=1,desc=A name, with a comma."`
	Count    int                `json:"count,omitempty"`
	Size     int64              `json:"size" openapi:"minimum=1,maximum=9"`
	Ratio    float64            `json:"ratio" openapi:"optional"`
	On       any                `json:"on" openapi:"default=true,type=boolean"`
	When     time.Time          `json:"when"`
	Maybe    *string            `json:"maybe" openapi:"format=uri"`
	Tags     []string           `json:"tags" openapi:"required"`
	Labels   map[string]string  `json:"labels"`
	Nullable map[string]*string `json:"nullable"`
	Raw      json.RawMessage    `json:"raw" openapi:"type=object,nullable"`
	Any      any                `json:"any"`
	Policy   string             `json:"policy" openapi:"enum=a|b,default=a"`
	Secret   string             `json:"secret" openapi:"writeOnly,maxLength=4"`
	Nested   inner              `json:"nested"`
	Items    []inner            `json:"items"`
	File     []byte             `json:"file"`
	Skipped  string             `json:"-"`
	hidden   string
}

func TestRegistryAdd(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	if got := reg.Add("Shapes", &shapes{}); got != "Shapes" {
		t.Fatalf("Add returned %q", got)
	}
	s, _ := reg.Schema("Shapes")
	got, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{` +
		`"id":{"type":"string","format":"uuid","readOnly":true},` +
		`"name":{"type":"string","minLength":1,"description":"A name, with a comma."},` +
		`"count":{"type":"integer"},` +
		`"size":{"type":"integer","format":"int64","minimum":1,"maximum":9},` +
		`"ratio":{"type":"number","format":"double"},` +
		`"on":{"type":"boolean","default":true},` +
		`"when":{"type":"string","format":"date-time"},` +
		`"maybe":{"type":"string","format":"uri","nullable":true},` +
		`"tags":{"type":"array","items":{"type":"string"}},` +
		`"labels":{"type":"object","additionalProperties":{"type":"string"}},` +
		`"nullable":{"type":"object","additionalProperties":{"type":"string","nullable":true}},` +
		`"raw":{"type":"object","nullable":true},` +
		`"any":{},` +
		`"policy":{"type":"string","enum":["a","b"],"default":"a"},` +
		`"secret":{"type":"string","writeOnly":true,"maxLength":4},` +
		`"nested":{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]},` +
		`"items":{"type":"array","items":{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}},` +
		`"file":{"type":"string","format":"binary"}},` +
		`"required":["name","size","when","tags","secret","nested","file"]}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

func TestRegistryErrors(t *testing.T) {
	t.Parallel()
	type badTag struct {
		X string `json:"x" openapi:"colour=red"`
	}
	type badNumber struct {
		X string `json:"x" openapi:"minLength=one"`
	}
	type badDefault struct {
		X bool `json:"x" openapi:"default=maybe"`
	}
	tests := []struct {
		name string
		add  func(*Registry)
	}{
		{"unknown tag item", func(r *Registry) { r.Add("A", badTag{}) }},
		{"bad number", func(r *Registry) { r.Add("A", badNumber{}) }},
		{"bad default", func(r *Registry) { r.Add("A", badDefault{}) }},
		{"not a struct", func(r *Registry) { r.Add("A", "text") }},
		{"two types, one name", func(r *Registry) { r.Add("A", inner{}); r.Add("A", embedded{}) }},
		{"raw then reflected", func(r *Registry) { r.AddSchema("A", Schema{}); r.Add("A", inner{}) }},
		{"raw twice", func(r *Registry) { r.AddSchema("A", Schema{}); r.AddSchema("A", Schema{}) }},
		{"dangling ref", func(r *Registry) { r.AddSchema("A", Schema{Type: "array", Items: &Schema{Ref: "Nowhere"}}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := NewRegistry()
			tt.add(reg)
			if _, err := Document(sampleInfo, nil, reg); err == nil {
				t.Error("Document succeeded, want an error")
			}
		})
	}
}

func TestRegistryIdempotent(t *testing.T) {
	t.Parallel()
	reg := NewRegistry()
	reg.Add("A", inner{})
	reg.Add("A", &inner{})
	p1, p2 := reg.Paginated("A"), reg.Paginated("A")
	if p1 != "PaginatedAList" || p2 != p1 {
		t.Errorf("Paginated = %q, %q", p1, p2)
	}
	if _, err := Document(sampleInfo, nil, reg); err != nil {
		t.Errorf("Document: %v", err)
	}
}

func TestSchemaRefSiblings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    Schema
		want string
	}{
		{Schema{Ref: "X"}, `{"$ref":"#/components/schemas/X"}`},
		{Schema{Ref: "X", ReadOnly: true}, `{"allOf":[{"$ref":"#/components/schemas/X"}],"readOnly":true}`},
		{Schema{}, `{}`},
		{Schema{Type: "object", Properties: []Property{}}, `{"type":"object","properties":{}}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("Marshal(%+v) = %s, want %s", tt.s, got, tt.want)
		}
	}
}

// A kind's shape hides a field of the shared shape it embeds as encoding/json does:
// its own field of the same JSON name replaces it, and one tagged omit or hidden removes
// it.
func TestRegistryShadowing(t *testing.T) {
	t.Parallel()
	type shared struct {
		Name  string  `json:"name" openapi:"minLength=1"`
		Pub   *string `json:"publication" openapi:"nullable"`
		Check bool    `json:"checkpoint"`
		Pol   string  `json:"policy"`
	}
	type kind struct {
		shared
		Name  *string         `json:"name" openapi:"nullable"`
		Pub   *struct{}       `json:"publication,omitempty" openapi:"omit"`
		Check *struct{}       `json:"checkpoint,omitempty" openapi:"omit"`
		Pol   json.RawMessage `json:"policy,omitempty" openapi:"hidden"`
		Extra string          `json:"extra"`
	}
	reg := NewRegistry()
	reg.Add("Kind", kind{})
	s, _ := reg.Schema("Kind")
	got, _ := json.Marshal(s)
	want := `{"type":"object","properties":{"name":{"type":"string","nullable":true},"extra":{"type":"string"}},"required":["extra"]}`
	if string(got) != want {
		t.Errorf("schema:\n got %s\nwant %s", got, want)
	}
	// encoding/json agrees: the hidden fields are neither read nor written.
	b, _ := json.Marshal(kind{shared: shared{Name: "x", Check: true}})
	if string(b) != `{"name":null,"extra":""}` {
		t.Errorf("json: %s", b)
	}
}
