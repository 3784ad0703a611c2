package openapi

import (
	"bytes"
	"encoding/json"
)

// Schema is the JSON-schema subset the document uses; it marshals with a fixed key order.
type Schema struct {
	Ref                  string // component name; rendered as #/components/schemas/<Ref>
	Type                 string
	Format               string
	Items                *Schema
	Properties           []Property // in declaration order
	Required             []string
	Nullable             bool
	ReadOnly             bool
	WriteOnly            bool
	Enum                 []string
	Default              any
	MinLength            *int
	MaxLength            *int
	Minimum              *int
	Maximum              *int
	AdditionalProperties *Schema
	Example              any
	Description          string
}

// Property is one named property of an object schema.
type Property struct {
	Name   string
	Schema Schema
}

// Int returns a pointer to n, for the Min/Max fields of Schema.
func Int(n int) *int { return &n }

// refPrefix is where component schemas live.
const refPrefix = "#/components/schemas/"

// MarshalJSON writes the schema with keys in a fixed order. A $ref with siblings
// is wrapped in allOf, as OpenAPI 3.0 ignores siblings of $ref.
func (s Schema) MarshalJSON() ([]byte, error) {
	var o object
	if s.Ref != "" {
		ref := object{{"$ref", refPrefix + s.Ref}}
		if s.hasSiblings() {
			o.add("allOf", []object{ref})
		} else {
			return json.Marshal(ref)
		}
	}
	o.addIf(s.Type != "", "type", s.Type)
	o.addIf(s.Format != "", "format", s.Format)
	o.addIf(s.Items != nil, "items", s.Items)
	o.addIf(s.ReadOnly, "readOnly", true)
	o.addIf(s.WriteOnly, "writeOnly", true)
	o.addIf(s.Nullable, "nullable", true)
	o.addIf(s.Enum != nil, "enum", s.Enum)
	o.addIf(s.MinLength != nil, "minLength", s.MinLength)
	o.addIf(s.MaxLength != nil, "maxLength", s.MaxLength)
	o.addIf(s.Minimum != nil, "minimum", s.Minimum)
	o.addIf(s.Maximum != nil, "maximum", s.Maximum)
	o.addIf(s.Default != nil, "default", s.Default)
	o.addIf(s.Example != nil, "example", s.Example)
	o.addIf(s.Description != "", "description", s.Description)
	if s.Properties != nil {
		props := make(object, 0, len(s.Properties))
		for _, p := range s.Properties {
			props.add(p.Name, p.Schema)
		}
		o.add("properties", props)
	}
	o.addIf(len(s.Required) > 0, "required", s.Required)
	o.addIf(s.AdditionalProperties != nil, "additionalProperties", s.AdditionalProperties)
	if o == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(o)
}

func (s Schema) hasSiblings() bool {
	c := s
	c.Ref = ""
	b, _ := json.Marshal(c) // cannot fail: only plain values
	return string(b) != "{}"
}

// refs calls f with every component name the schema refers to.
func (s *Schema) refs(f func(string)) {
	if s == nil {
		return
	}
	if s.Ref != "" {
		f(s.Ref)
	}
	s.Items.refs(f)
	s.AdditionalProperties.refs(f)
	for i := range s.Properties {
		s.Properties[i].Schema.refs(f)
	}
}

// object is a JSON object whose keys keep their insertion order.
type object []member

type member struct {
	key string
	val any
}

func (o *object) add(k string, v any) { *o = append(*o, member{k, v}) }

func (o *object) addIf(ok bool, k string, v any) {
	if ok {
		o.add(k, v)
	}
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.val)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
