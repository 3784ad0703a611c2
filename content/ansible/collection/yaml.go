package collection

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// YAML is read as PyYAML's safe loader (what ansible-doc and galaxy-importer use) reads
// it: YAML 1.1 implicit types (yes/no/on/off are booleans, 0777 is octal, 1:30 is 90,
// 1e3 is a string), merge keys, last duplicate key wins in the first one's place.

var (
	yamlBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	yamlNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
	yamlInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	yamlFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
)

var errYAMLSize = errors.New("the YAML expands past its size bound")

// parseYAML reads a single-document YAML stream into a value; budget bounds the bytes
// built (each node costs 4 plus its text), aliases counted each time they are used, so
// a "billion laughs" stops there.
func parseYAML(src []byte, budget int) (any, error) {
	dec := yaml.NewDecoder(strings.NewReader(string(src)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, nil // an empty stream is None
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, errors.New("expected a single document in the stream")
	}
	c := &yamlConv{budget: budget, active: map[*yaml.Node]bool{}}
	return c.value(&doc)
}

type yamlConv struct {
	budget int
	active map[*yaml.Node]bool // anchors being expanded: a node containing itself is refused
}

func (c *yamlConv) value(n *yaml.Node) (any, error) {
	if c.budget -= 4 + len(n.Value); c.budget < 0 {
		return nil, errYAMLSize
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0])
	case yaml.AliasNode:
		if c.active[n.Alias] {
			return nil, errors.New("a YAML anchor contains itself")
		}
		c.active[n.Alias] = true
		defer delete(c.active, n.Alias)
		return c.value(n.Alias)
	case yaml.ScalarNode:
		return scalar(n)
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.value(e)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case yaml.MappingNode:
		pairs, err := c.flatten(n)
		if err != nil {
			return nil, err
		}
		m := newOmap()
		for i := 0; i < len(pairs); i += 2 {
			k, err := c.value(pairs[i])
			if err != nil {
				return nil, err
			}
			key, err := mapKey(k)
			if err != nil {
				return nil, err
			}
			v, err := c.value(pairs[i+1])
			if err != nil {
				return nil, err
			}
			m.set(key, v)
		}
		return m, nil
	}
	return nil, fmt.Errorf("unexpected YAML node kind %d", n.Kind)
}

// flatten resolves merge keys ("<<") as PyYAML's flatten_mapping does: merged pairs come
// first (of several merged maps, the last listed first), then the map's own pairs.
func (c *yamlConv) flatten(n *yaml.Node) ([]*yaml.Node, error) {
	var merged, own []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value != "<<" || k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			own = append(own, k, v)
			continue
		}
		for v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		var subs []*yaml.Node
		switch v.Kind {
		case yaml.MappingNode:
			subs = []*yaml.Node{v}
		case yaml.SequenceNode:
			for i := len(v.Content) - 1; i >= 0; i-- {
				s := v.Content[i]
				for s.Kind == yaml.AliasNode {
					s = s.Alias
				}
				if s.Kind != yaml.MappingNode {
					return nil, errors.New("expected a mapping for merging")
				}
				subs = append(subs, s)
			}
		default:
			return nil, errors.New("expected a mapping or list of mappings for merging")
		}
		for _, s := range subs {
			if c.active[s] {
				return nil, errors.New("a YAML anchor contains itself")
			}
			c.active[s] = true
			p, err := c.flatten(s)
			delete(c.active, s)
			if err != nil {
				return nil, err
			}
			if c.budget -= 4 * len(p); c.budget < 0 {
				return nil, errYAMLSize
			}
			merged = append(merged, p...)
		}
	}
	return append(merged, own...), nil
}

// mapKey turns a scalar key into the string json.dumps would write for it.
func mapKey(k any) (string, error) {
	switch x := k.(type) {
	case string:
		return x, nil
	case json.Number:
		return string(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case nil:
		return "null", nil
	}
	return "", errors.New("a mapping key is not a scalar")
}

// scalar resolves a scalar node's type: an explicit tag first, then (plain scalars
// only) PyYAML's implicit resolvers.
func scalar(n *yaml.Node) (any, error) {
	tag := ""
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		tag = n.Tag
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return n.Value, nil
	}
	s := n.Value
	switch {
	case tag == "!!null" || tag == "" && yamlNull.MatchString(s):
		return nil, nil
	case tag == "!!bool" || tag == "" && yamlBool.MatchString(s):
		switch strings.ToLower(s) {
		case "yes", "true", "on":
			return true, nil
		case "no", "false", "off":
			return false, nil
		}
		return nil, fmt.Errorf("invalid boolean %q", s)
	case tag == "!!int" || tag == "" && yamlInt.MatchString(s):
		return yamlInteger(s)
	case tag == "!!float" || tag == "" && yamlFloat.MatchString(s):
		return yamlFloatValue(s)
	}
	return s, nil
}

func yamlInteger(s string) (any, error) {
	s = strings.ReplaceAll(s, "_", "")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	n := new(big.Int)
	var ok bool
	switch {
	case s == "0":
		ok = true
	case strings.HasPrefix(s, "0b"):
		_, ok = n.SetString(s[2:], 2)
	case strings.HasPrefix(s, "0x"):
		_, ok = n.SetString(s[2:], 16)
	case strings.HasPrefix(s, "0"):
		_, ok = n.SetString(s[1:], 8)
	case strings.Contains(s, ":"):
		ok = true
		for _, part := range strings.Split(s, ":") {
			d, err := strconv.ParseInt(part, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("invalid integer %q", s)
			}
			n.Mul(n, big.NewInt(60)).Add(n, big.NewInt(d))
		}
	default:
		_, ok = n.SetString(s, 10)
	}
	if !ok {
		return nil, fmt.Errorf("invalid integer %q", s)
	}
	if neg {
		n.Neg(n)
	}
	return json.Number(n.String()), nil
}

func yamlFloatValue(s string) (any, error) {
	s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	var f float64
	switch {
	case s == ".inf":
		f = posInf
	case s == ".nan":
		f = nan
	case strings.Contains(s, ":"):
		for _, part := range strings.Split(s, ":") {
			d, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return nil, fmt.Errorf("invalid float %q", s)
			}
			f = f*60 + d
		}
	default:
		var err error
		if f, err = strconv.ParseFloat(s, 64); err != nil {
			return nil, fmt.Errorf("invalid float %q", s)
		}
	}
	if neg {
		f = -f
	}
	return floatNumber(f), nil
}

// yamlString reads a value that must be a string, for the errors of metadata files.
func yamlString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}
