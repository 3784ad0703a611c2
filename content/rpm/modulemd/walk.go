package modulemd

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// walker reads yaml.Nodes into values, turning every problem into an *Error that
// names the file, the line and the field.
type walker struct {
	file string
	base int
}

// fields is a decoded mapping and the node it came from (for the line of a missing
// key). The zero value is an absent mapping.
type fields struct {
	node *yaml.Node
	m    map[string]*yaml.Node
}

func (f fields) get(key string) *yaml.Node { return f.m[key] }

// need returns the value of a required key of f; absent or null is an error at the
// line of f itself.
func (w *walker) need(f fields, key, field string) (*yaml.Node, error) {
	n := f.get(key)
	if n == nil || isNull(n) {
		if n == nil {
			n = f.node
		}
		return nil, w.errAt(n, field, ErrInvalid, "required field is missing")
	}
	return n, nil
}

func (w *walker) errAt(n *yaml.Node, field string, kind error, format string, args ...any) *Error {
	e := &Error{File: w.file, Field: field, Kind: kind, Msg: fmt.Sprintf(format, args...)}
	if n != nil && n.Line > 0 {
		e.Line = w.base + n.Line
	}
	return e
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// syntax turns a YAML parser error into an *Error with the file's line number.
func (w *walker) syntax(err error) *Error {
	e := &Error{File: w.file, Kind: ErrSyntax, Msg: err.Error(), Err: err}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			if isParserError(m[2]) {
				n++ // yaml.v3 gives parser (not scanner) errors a 0-based line
			}
			e.Line, e.Msg = w.base+n, m[2]
		}
	}
	return e
}

// isParserError tells yaml.v3's parser errors (as opposed to its scanner errors) by
// their messages, which are few and fixed.
func isParserError(msg string) bool {
	for _, p := range []string{"did not find expected", "found duplicate %", "found incompatible YAML document", "found undefined tag handle"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// noAliases refuses aliases (and so merge keys): libmodulemd, and so dnf, does not
// read them, and they are what an alias bomb is made of.
func (w *walker) noAliases(n *yaml.Node) error {
	if n.Kind == yaml.AliasNode {
		return w.errAt(n, "", ErrSyntax, "YAML aliases (*%s) are not supported", n.Value)
	}
	for _, c := range n.Content {
		if err := w.noAliases(c); err != nil {
			return err
		}
	}
	return nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// mapping reads a mapping with scalar keys; absent or null gives the zero fields.
func (w *walker) mapping(n *yaml.Node, field string) (fields, error) {
	m, _, err := w.orderedMapping(n, field)
	return m, err
}

// orderedMapping is mapping, also returning the keys in document order (so that the
// first bad entry is the one reported).
func (w *walker) orderedMapping(n *yaml.Node, field string) (fields, []string, error) {
	if n == nil || isNull(n) {
		return fields{}, nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return fields{}, nil, w.errAt(n, field, ErrInvalid, "expected a mapping, found %s", kindName(n))
	}
	m := make(map[string]*yaml.Node, len(n.Content)/2)
	keys := make([]string, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind != yaml.ScalarNode {
			return fields{}, nil, w.errAt(k, field, ErrInvalid, "a key is %s, not a scalar", kindName(k))
		}
		if _, dup := m[k.Value]; dup {
			return fields{}, nil, w.errAt(k, join(field, k.Value), ErrInvalid, "duplicate key")
		}
		m[k.Value] = n.Content[i+1]
		keys = append(keys, k.Value)
	}
	return fields{node: n, m: m}, keys, nil
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// text reads a scalar as its text; absent or null gives ok == false.
func (w *walker) text(n *yaml.Node, field string) (s string, ok bool, err error) {
	if n == nil || isNull(n) {
		return "", false, nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", false, w.errAt(n, field, ErrInvalid, "expected a scalar, found %s", kindName(n))
	}
	return n.Value, true, nil
}

// required reads the scalar field (a dotted path whose last part is the key) of m.
func (w *walker) required(m fields, field string) (string, error) {
	key := field[strings.LastIndexByte(field, '.')+1:]
	n := m.get(key)
	s, ok, err := w.text(n, field)
	if err != nil {
		return "", err
	}
	if !ok || s == "" {
		if n == nil {
			n = m.node
		}
		return "", w.errAt(n, field, ErrInvalid, "required field is missing or empty")
	}
	return s, nil
}

// optional reads a scalar that Pulp stores as NULL when absent or empty.
func (w *walker) optional(n *yaml.Node, field string) (*string, error) {
	s, ok, err := w.text(n, field)
	if err != nil || !ok || s == "" {
		return nil, err
	}
	return &s, nil
}

// uint reads an unsigned decimal integer; absent or null gives 0.
func (w *walker) uint(n *yaml.Node, field string) (uint64, error) {
	s, ok, err := w.text(n, field)
	if err != nil || !ok {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		why := "is not an unsigned integer"
		if errors.Is(err, strconv.ErrRange) {
			why = "does not fit in 64 bits"
		}
		return 0, w.errAt(n, field, ErrInvalid, "%q %s", s, why)
	}
	return v, nil
}

func (w *walker) bool(n *yaml.Node, field string) (v, ok bool, err error) {
	s, ok, err := w.text(n, field)
	if err != nil || !ok {
		return false, false, err
	}
	switch strings.ToLower(s) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, w.errAt(n, field, ErrInvalid, "%q is not true or false", s)
}

// list reads a list of non-empty scalars; absent or null gives nil.
func (w *walker) list(n *yaml.Node, field string) ([]string, error) {
	if n == nil || isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, w.errAt(n, field, ErrInvalid, "expected a list, found %s", kindName(n))
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		s, ok, err := w.text(item, f)
		if err != nil {
			return nil, err
		}
		if !ok || s == "" {
			return nil, w.errAt(item, f, ErrInvalid, "empty item")
		}
		out = append(out, s)
	}
	return out, nil
}
