package rpm

import (
	"fmt"
	"strings"

	"pith/content/rpm/repodata"
)

// richDep is a boolean dependency, as rpm 4.13 introduced them: "(foo >= 1.2 or bar)".
// A leaf (op == "") is one capability with an optional version range.
type richDep struct {
	op          string // "", "and", "or", "if", "unless", "with", "without"
	leaf        repodata.Dep
	args        []*richDep // and/or/with/without: the operands; if/unless: then, cond[, else]
	hasElseCase bool
}

var richOps = map[string]bool{"and": true, "or": true, "if": true, "unless": true, "with": true, "without": true, "else": true}

// parseRichDep parses a dependency written in rpm's boolean syntax. The whole text must
// be one parenthesized expression.
func parseRichDep(s string) (*richDep, error) {
	toks := richTokens(s)
	p := &richParser{toks: toks}
	d, err := p.paren()
	if err != nil {
		return nil, fmt.Errorf("rich dependency %q: %w", s, err)
	}
	if p.pos != len(toks) {
		return nil, fmt.Errorf("rich dependency %q: unexpected %q after the expression", s, toks[p.pos])
	}
	return d, nil
}

// richTokens splits on spaces and parentheses, keeping the parentheses as tokens.
func richTokens(s string) []string {
	var toks []string
	cur := strings.Builder{}
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch r {
		case '(', ')':
			flush()
			toks = append(toks, string(r))
		case ' ', '\t', '\n':
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return toks
}

type richParser struct {
	toks []string
	pos  int
}

func (p *richParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *richParser) next() string {
	t := p.peek()
	p.pos++
	return t
}

// paren parses "( expr )".
func (p *richParser) paren() (*richDep, error) {
	if p.next() != "(" {
		return nil, fmt.Errorf("expected (")
	}
	first, err := p.operand()
	if err != nil {
		return nil, err
	}
	d := first
	if op := p.peek(); op != ")" {
		if !richOps[op] || op == "else" {
			return nil, fmt.Errorf("expected an operator, found %q", op)
		}
		p.next()
		second, err := p.operand()
		if err != nil {
			return nil, err
		}
		d = &richDep{op: op, args: []*richDep{first, second}}
		switch op {
		case "if", "unless":
			if p.peek() == "else" {
				p.next()
				third, err := p.operand()
				if err != nil {
					return nil, err
				}
				d.args = append(d.args, third)
				d.hasElseCase = true
			}
		default:
			for p.peek() == op { // "a and b and c"
				p.next()
				more, err := p.operand()
				if err != nil {
					return nil, err
				}
				d.args = append(d.args, more)
			}
		}
	}
	if t := p.next(); t != ")" {
		return nil, fmt.Errorf("expected ), found %q", t)
	}
	return d, nil
}

// operand parses a nested expression or a capability "name [op evr]".
func (p *richParser) operand() (*richDep, error) {
	switch t := p.peek(); {
	case t == "(":
		return p.paren()
	case t == "" || t == ")" || richOps[t]:
		return nil, fmt.Errorf("expected a capability, found %q", t)
	}
	dep := repodata.Dep{Name: p.next()}
	flags := map[string]string{"=": "EQ", "==": "EQ", "<": "LT", "<=": "LE", ">": "GT", ">=": "GE"}
	if f, ok := flags[p.peek()]; ok {
		p.next()
		evr := p.next()
		if evr == "" || evr == ")" || richOps[evr] {
			return nil, fmt.Errorf("%s %s: missing version", dep.Name, f)
		}
		dep.Flags = f
		dep.Epoch, dep.Version, dep.Release = splitEVR(evr)
	}
	return &richDep{leaf: dep}, nil
}

// splitEVR splits "[epoch:]version[-release]".
func splitEVR(s string) (epoch, version, release string) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		epoch, s = s[:i], s[i+1:]
	}
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		s, release = s[:i], s[i+1:]
	}
	return epoch, s, release
}
