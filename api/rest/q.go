package rest

import (
	"strings"
	"unicode"

	"pith/meta"
)

// MaxQDepth bounds the nesting of a q expression: its parentheses and NOTs, each a level
// of the parser's recursion.
const MaxQDepth = 32

// applyQ implements Pulp's q filter: an expression of filter terms name="value" combined
// with AND, OR, NOT and parentheses, where each name is one of the list's own filters.
// Example: q=name__startswith="web" AND NOT pulp_label_select="env=test"
// It returns the number of conditions the terms made; more than maxTerms, or nesting
// deeper than MaxQDepth, is a 400, found before the rest of the expression is read.
func applyQ(l *meta.List, expr string, filters map[string]func(*meta.List, string) error, maxTerms int) (int, error) {
	p := &qParser{src: expr, filters: filters, maxTerms: maxTerms}
	cond, args, err := p.or()
	if err != nil {
		return 0, err
	}
	p.space()
	if p.pos < len(p.src) {
		return 0, BadField("q", "Unexpected %q at position %d.", p.src[p.pos:], p.pos)
	}
	l.And(cond, args...)
	return p.terms, nil
}

type qParser struct {
	src      string
	pos      int
	filters  map[string]func(*meta.List, string) error
	depth    int // of parentheses and NOTs open at pos
	terms    int // conditions made so far
	maxTerms int
}

// enter opens a level of nesting; leave closes it.
func (p *qParser) enter() error {
	if p.depth++; p.depth > MaxQDepth {
		return BadField("q", "Nested too deeply at position %d: at most %d levels of parentheses and NOT.", p.pos, MaxQDepth)
	}
	return nil
}

func (p *qParser) leave() { p.depth-- }

func (p *qParser) space() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.pos++
	}
}

// keyword consumes a case-insensitive keyword followed by a boundary.
func (p *qParser) keyword(k string) bool {
	p.space()
	end := p.pos + len(k)
	if end > len(p.src) || !strings.EqualFold(p.src[p.pos:end], k) {
		return false
	}
	if end < len(p.src) && !unicode.IsSpace(rune(p.src[end])) && p.src[end] != '(' {
		return false
	}
	p.pos = end
	return true
}

func (p *qParser) or() (string, []any, error) {
	c, a, err := p.and()
	if err != nil {
		return "", nil, err
	}
	for p.keyword("OR") {
		c2, a2, err := p.and()
		if err != nil {
			return "", nil, err
		}
		c, a = "("+c+" OR "+c2+")", append(a, a2...)
	}
	return c, a, nil
}

func (p *qParser) and() (string, []any, error) {
	c, a, err := p.not()
	if err != nil {
		return "", nil, err
	}
	for p.keyword("AND") {
		c2, a2, err := p.not()
		if err != nil {
			return "", nil, err
		}
		c, a = "("+c+" AND "+c2+")", append(a, a2...)
	}
	return c, a, nil
}

func (p *qParser) not() (string, []any, error) {
	if p.keyword("NOT") {
		if err := p.enter(); err != nil {
			return "", nil, err
		}
		defer p.leave()
		c, a, err := p.not()
		if err != nil {
			return "", nil, err
		}
		return "(NOT " + c + ")", a, nil
	}
	return p.term()
}

func (p *qParser) term() (string, []any, error) {
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == '(' {
		if err := p.enter(); err != nil {
			return "", nil, err
		}
		defer p.leave()
		p.pos++
		c, a, err := p.or()
		if err != nil {
			return "", nil, err
		}
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return "", nil, BadField("q", "Missing ')' at position %d.", p.pos)
		}
		p.pos++
		return c, a, nil
	}
	start := p.pos
	for p.pos < len(p.src) && (p.src[p.pos] == '_' || unicode.IsLetter(rune(p.src[p.pos])) || unicode.IsDigit(rune(p.src[p.pos]))) {
		p.pos++
	}
	name := p.src[start:p.pos]
	if name == "" || p.pos >= len(p.src) || p.src[p.pos] != '=' {
		return "", nil, BadField("q", "Expected name=\"value\" at position %d.", start)
	}
	p.pos++
	val, err := p.value()
	if err != nil {
		return "", nil, err
	}
	fn, ok := p.filters[name]
	if !ok {
		return "", nil, BadField("q", "Filter %q is not available here.", name)
	}
	var sub meta.List
	if err := fn(&sub, val); err != nil {
		return "", nil, err
	}
	if p.terms += max(1, len(sub.Where)); p.terms > p.maxTerms {
		return "", nil, tooManyTerms("q")
	}
	if len(sub.Where) == 0 {
		return "1 = 1", nil, nil
	}
	return "(" + strings.Join(sub.Where, " AND ") + ")", sub.Args, nil
}

func (p *qParser) value() (string, error) {
	if p.pos < len(p.src) && p.src[p.pos] == '"' {
		p.pos++
		var b strings.Builder
		for p.pos < len(p.src) {
			c := p.src[p.pos]
			switch {
			case c == '\\' && p.pos+1 < len(p.src):
				b.WriteByte(p.src[p.pos+1])
				p.pos += 2
			case c == '"':
				p.pos++
				return b.String(), nil
			default:
				b.WriteByte(c)
				p.pos++
			}
		}
		return "", BadField("q", "Unterminated string.")
	}
	start := p.pos
	for p.pos < len(p.src) && !unicode.IsSpace(rune(p.src[p.pos])) && p.src[p.pos] != ')' {
		p.pos++
	}
	return p.src[start:p.pos], nil
}
