package access

import (
	"errors"
	"fmt"
	"strings"
)

// A condition_expression combines conditions with not, and, or and parentheses
// (drf-access-policy's grammar: not binds tightest, then and, then or):
// "has_model_perms:core.view_task or (is_owner and not is_locked)".

// maxExprDepth bounds nesting so that a stored expression cannot exhaust the stack.
const maxExprDepth = 32

type expr struct {
	op   string // "cond", "not", "and", "or"
	cond string
	args []*expr
}

func (x *expr) eval(cond CondFunc) (bool, error) {
	switch x.op {
	case "cond":
		name, arg, _ := strings.Cut(x.cond, ":")
		return cond(name, arg)
	case "not":
		ok, err := x.args[0].eval(cond)
		return !ok, err
	case "and":
		for _, a := range x.args {
			if ok, err := a.eval(cond); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	default: // or
		for _, a := range x.args {
			if ok, err := a.eval(cond); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	}
}

// unknown finds a condition name known rejects; ok is true when there is none.
func (x *expr) unknown(known func(string) bool) (string, bool) {
	if x.op == "cond" {
		name, _, _ := strings.Cut(x.cond, ":")
		return name, known(name)
	}
	for _, a := range x.args {
		if name, ok := a.unknown(known); !ok {
			return name, false
		}
	}
	return "", true
}

func parseExpr(s string) (*expr, error) {
	p := exprParser{toks: tokenize(s)}
	x, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, fmt.Errorf("unexpected %q", p.toks[p.i])
	}
	return x, nil
}

func tokenize(s string) []string {
	var toks []string
	s = strings.NewReplacer("(", " ( ", ")", " ) ").Replace(s)
	for _, f := range strings.Fields(s) {
		toks = append(toks, f)
	}
	return toks
}

type exprParser struct {
	toks []string
	i    int
}

func (p *exprParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *exprParser) or(depth int) (*expr, error) {
	return p.binary(depth, "or", p.and)
}

func (p *exprParser) and(depth int) (*expr, error) {
	return p.binary(depth, "and", p.not)
}

func (p *exprParser) binary(depth int, op string, next func(int) (*expr, error)) (*expr, error) {
	x, err := next(depth)
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(p.peek(), op) {
		return x, nil
	}
	out := &expr{op: op, args: []*expr{x}}
	for strings.EqualFold(p.peek(), op) {
		p.i++
		y, err := next(depth)
		if err != nil {
			return nil, err
		}
		out.args = append(out.args, y)
	}
	return out, nil
}

func (p *exprParser) not(depth int) (*expr, error) {
	if depth > maxExprDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxExprDepth)
	}
	switch t := p.peek(); {
	case t == "":
		return nil, errors.New("ends where a condition is expected")
	case strings.EqualFold(t, "not"):
		p.i++
		x, err := p.not(depth + 1)
		if err != nil {
			return nil, err
		}
		return &expr{op: "not", args: []*expr{x}}, nil
	case t == "(":
		p.i++
		x, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, errors.New("missing )")
		}
		p.i++
		return x, nil
	case t == ")", strings.EqualFold(t, "and"), strings.EqualFold(t, "or"):
		return nil, fmt.Errorf("unexpected %q where a condition is expected", t)
	default:
		p.i++
		return &expr{op: "cond", cond: t}, nil
	}
}
