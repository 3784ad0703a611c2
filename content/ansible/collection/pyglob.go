package collection

import (
	"errors"
	"strings"
)

// The patterns of galaxy.yml (build_ignore, manifest directives) are matched the way
// ansible-galaxy matches them: Python's fnmatch.translate turns a pattern into a
// regular expression, distlib then rewrites that expression's unescaped dots, and
// Python's re matches it. The text of that expression is reproduced here exactly and
// then read by a matcher for the few constructs it can hold, so that odd patterns
// ("[.]", "[!]a]", "[z-a]", "*[!x]b*") match what they match there.

// pyPattern is a compiled expression of that subset: literals, ".", classes, "*" and
// "*?" after a one-character item, "(?s:…)", atomic "(?>…)", "(?!)" and "\Z".
type pyPattern struct {
	nodes []reNode
}

type reOp uint8

const (
	opLit    reOp = iota // one given character
	opAny                // any character (every expression is in DOTALL mode)
	opClass              // a character class
	opStar               // atom repeated, greedily or lazily
	opAtomic             // an atomic group: its first match is kept, never retried
	opEnd                // \Z
	opFail               // (?!)
)

type reNode struct {
	op   reOp
	c    rune
	cls  *reClass
	atom *reNode  // opStar
	lazy bool     // opStar
	sub  []reNode // opAtomic
}

type reClass struct {
	neg    bool
	ranges [][2]rune
}

func (n *reNode) one(c rune) bool {
	switch n.op {
	case opLit:
		return c == n.c
	case opAny:
		return true
	case opClass:
		in := false
		for _, r := range n.cls.ranges {
			if r[0] <= c && c <= r[1] {
				in = true
				break
			}
		}
		return in != n.cls.neg
	}
	return false
}

var (
	errPattern     = errors.New("invalid pattern")
	errUnsupported = errors.New("a dot inside [...] makes distlib read the rest of the set as regular expression syntax, which is not supported")
)

// reSpecial are the characters Python's re.escape escapes (3.7 and later).
const reSpecial = "()[]{}?*+-|^$\\.&~# \t\n\r\v\f"

// fnmatchTranslate is Python 3.11's fnmatch.translate, returning the expression's text.
// It fails where Python raises (a set whose ranges empty a chunk, as "[b-a-a]").
func fnmatchTranslate(pat []rune) ([]rune, error) {
	type piece struct {
		star bool
		s    []rune
	}
	var res []piece
	add := func(s string) { res = append(res, piece{s: []rune(s)}) }
	i, n := 0, len(pat)
	for i < n {
		c := pat[i]
		i++
		switch c {
		case '*':
			if len(res) == 0 || !res[len(res)-1].star {
				res = append(res, piece{star: true})
			}
		case '?':
			add(".")
		case '[':
			j := i
			if j < n && pat[j] == '!' {
				j++
			}
			if j < n && pat[j] == ']' {
				j++
			}
			for j < n && pat[j] != ']' {
				j++
			}
			if j >= n {
				add(`\[`)
				continue
			}
			stuff, err := classStuff(pat, i, j)
			if err != nil {
				return nil, err
			}
			i = j + 1
			switch {
			case stuff == "":
				add("(?!)")
			case stuff == "!":
				add(".")
			default:
				if stuff[0] == '!' {
					stuff = "^" + stuff[1:]
				} else if stuff[0] == '^' || stuff[0] == '[' {
					stuff = `\` + stuff
				}
				add("[" + stuff + "]")
			}
		default:
			if strings.ContainsRune(reSpecial, c) {
				add(`\` + string(c))
			} else {
				res = append(res, piece{s: []rune{c}})
			}
		}
	}
	// Stars: fixed pieces first, then ".*?fixed" in atomic groups, ".*" last.
	var out []rune
	out = append(out, []rune("(?s:")...)
	k := 0
	for k < len(res) && !res[k].star {
		out = append(out, res[k].s...)
		k++
	}
	for k < len(res) {
		k++ // the star
		if k == len(res) {
			out = append(out, '.', '*')
			break
		}
		var fixed []rune
		for k < len(res) && !res[k].star {
			fixed = append(fixed, res[k].s...)
			k++
		}
		if k == len(res) {
			out = append(out, '.', '*')
			out = append(out, fixed...)
		} else {
			out = append(out, []rune("(?>.*?")...)
			out = append(out, fixed...)
			out = append(out, ')')
		}
	}
	return append(out, []rune(`)\Z`)...), nil
}

// classStuff is the body fnmatch.translate writes for the set pat[i:j] (without its
// brackets), before the leading "!" or "^" is handled.
func classStuff(pat []rune, i, j int) (string, error) {
	var stuff string
	if !containsRune(pat[i:j], '-') {
		stuff = strings.ReplaceAll(string(pat[i:j]), `\`, `\\`)
	} else {
		var chunks [][]rune
		k := i + 1
		if pat[i] == '!' {
			k = i + 2
		}
		for {
			f := indexRune(pat, '-', k, j)
			if f < 0 {
				break
			}
			chunks = append(chunks, pat[i:f:f])
			i = f + 1
			k = f + 3
		}
		if chunk := pat[i:j:j]; len(chunk) > 0 {
			chunks = append(chunks, chunk)
		} else {
			chunks[len(chunks)-1] = append(chunks[len(chunks)-1], '-')
		}
		// Remove empty ranges, as Python does (and fails the same way on an emptied chunk).
		for k := len(chunks) - 1; k > 0; k-- {
			prev, cur := chunks[k-1], chunks[k]
			if len(prev) == 0 || len(cur) == 0 {
				return "", errPattern // Python's IndexError
			}
			if prev[len(prev)-1] > cur[0] {
				merged := append(append([]rune{}, prev[:len(prev)-1]...), cur[1:]...)
				chunks[k-1] = merged
				chunks = append(chunks[:k], chunks[k+1:]...)
			}
		}
		parts := make([]string, len(chunks))
		for k, c := range chunks {
			parts[k] = strings.ReplaceAll(strings.ReplaceAll(string(c), `\`, `\\`), "-", `\-`)
		}
		stuff = strings.Join(parts, "-")
	}
	var b strings.Builder
	for _, c := range stuff {
		if c == '&' || c == '~' || c == '|' {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String(), nil
}

func containsRune(s []rune, c rune) bool { return indexRune(s, c, 0, len(s)) >= 0 }

func indexRune(s []rune, c rune, from, to int) int {
	for i := from; i < to && i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// distlibDots is distlib's _glob_to_re rewrite: every dot preceded by an even number of
// backslashes becomes "[^/]", so that "*" and "?" stop at a slash (classes written
// with a dot are rewritten too, into whatever Python then reads them as).
func distlibDots(re []rune) []rune {
	out := make([]rune, 0, len(re))
	slashes := 0
	for _, c := range re {
		if c == '.' && slashes%2 == 0 {
			out = append(out, '[', '^', '/', ']')
		} else {
			out = append(out, c)
		}
		if c == '\\' {
			slashes++
		} else {
			slashes = 0
		}
	}
	return out
}

// compilePy reads an expression produced above.
func compilePy(re []rune) (*pyPattern, error) {
	p := &reParser{s: re}
	nodes, err := p.seq(0)
	if err != nil {
		return nil, err
	}
	if p.i != len(p.s) {
		return nil, errPattern
	}
	return &pyPattern{nodes: nodes}, nil
}

type reParser struct {
	s []rune
	i int
}

func (p *reParser) has(prefix string) bool {
	r := []rune(prefix)
	if p.i+len(r) > len(p.s) {
		return false
	}
	for k, c := range r {
		if p.s[p.i+k] != c {
			return false
		}
	}
	return true
}

// seq reads items up to the ")" closing a group (depth > 0) or the end.
func (p *reParser) seq(depth int) ([]reNode, error) {
	var nodes []reNode
	for p.i < len(p.s) {
		switch {
		case p.has("(?s:"):
			p.i += 4
			sub, err := p.seq(depth + 1)
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, sub...) // only sets DOTALL, which is always on
		case p.has("(?>"):
			p.i += 3
			sub, err := p.seq(depth + 1)
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, reNode{op: opAtomic, sub: sub})
		case p.has("(?!)"):
			p.i += 4
			nodes = append(nodes, reNode{op: opFail})
		case p.s[p.i] == ')':
			if depth == 0 {
				return nil, errPattern
			}
			p.i++
			return nodes, nil
		case p.s[p.i] == '*':
			if len(nodes) == 0 || nodes[len(nodes)-1].op > opClass {
				return nil, errUnsupported // "[.**]": Python's "multiple repeat"
			}
			atom := nodes[len(nodes)-1]
			p.i++
			lazy := p.i < len(p.s) && p.s[p.i] == '?'
			if lazy {
				p.i++
			}
			nodes[len(nodes)-1] = reNode{op: opStar, atom: &atom, lazy: lazy}
		case p.s[p.i] == '.':
			p.i++
			nodes = append(nodes, reNode{op: opAny})
		case p.s[p.i] == '[':
			cls, err := p.class()
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, reNode{op: opClass, cls: cls})
		case p.s[p.i] == '\\':
			if p.i+1 >= len(p.s) {
				return nil, errPattern
			}
			c := p.s[p.i+1]
			p.i += 2
			if c == 'Z' {
				nodes = append(nodes, reNode{op: opEnd})
			} else if isAlnum(c) {
				return nil, errPattern // never produced
			} else {
				nodes = append(nodes, reNode{op: opLit, c: c})
			}
		case strings.ContainsRune("()?+{|^$", p.s[p.i]):
			// Only distlib's rewrite of a dot inside a set ("[.$]" becomes "[[^/]$]")
			// leaves the set's other characters outside it, as regular expression syntax.
			return nil, errUnsupported
		default:
			nodes = append(nodes, reNode{op: opLit, c: p.s[p.i]})
			p.i++
		}
	}
	if depth > 0 {
		return nil, errPattern
	}
	return nodes, nil
}

// class reads a set as Python's sre parser does: "]" right after "[" or "[^" is a
// literal, "-" between two items is a range, escapes are literals.
func (p *reParser) class() (*reClass, error) {
	p.i++ // [
	cls := &reClass{}
	if p.i < len(p.s) && p.s[p.i] == '^' {
		cls.neg = true
		p.i++
	}
	item := func() (rune, error) {
		if p.i >= len(p.s) {
			return 0, errPattern
		}
		c := p.s[p.i]
		p.i++
		if c != '\\' {
			return c, nil
		}
		if p.i >= len(p.s) || isAlnum(p.s[p.i]) {
			return 0, errPattern
		}
		c = p.s[p.i]
		p.i++
		return c, nil
	}
	for {
		if p.i >= len(p.s) {
			return nil, errPattern
		}
		if p.s[p.i] == ']' && len(cls.ranges) > 0 {
			p.i++
			return cls, nil
		}
		lo, err := item()
		if err != nil {
			return nil, err
		}
		if p.i < len(p.s) && p.s[p.i] == '-' {
			p.i++
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				cls.ranges = append(cls.ranges, [2]rune{lo, lo}, [2]rune{'-', '-'})
				return cls, nil
			}
			hi, err := item()
			if err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, errPattern
			}
			cls.ranges = append(cls.ranges, [2]rune{lo, hi})
			continue
		}
		cls.ranges = append(cls.ranges, [2]rune{lo, lo})
	}
}

func isAlnum(c rune) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// budget bounds the steps a build's pattern matching takes (a pattern of galaxy.yml
// against a long path can cost the product of their lengths, for every file).
type budget struct{ left int64 }

func (b *budget) spend(n int64) bool {
	b.left -= n
	return b.left >= 0
}

// match says whether the expression matches s from its start (re.match) or, with
// search, from any position (re.search). It follows every way the top level can go,
// which is what backtracking finds; atomic groups take their first match only. It
// says false once b is spent.
func (p *pyPattern) match(s []rune, search bool, b *budget) bool {
	n := len(s)
	mark := make([]int, n+1) // mark[i] == k+1: position i is reached after node k
	var cur, next []int
	if search {
		for i := 0; i <= n; i++ {
			cur = append(cur, i)
		}
	} else {
		cur = []int{0}
	}
	for k := range p.nodes {
		nd, gen := &p.nodes[k], k+1
		next = next[:0]
		add := func(i int) bool {
			if mark[i] == gen {
				return false
			}
			mark[i] = gen
			next = append(next, i)
			return true
		}
		for _, i := range cur {
			if !b.spend(1) {
				return false
			}
			switch nd.op {
			case opStar:
				// A position already reached has had its run followed from it.
				add(i)
				for j := i; j < n && nd.atom.one(s[j]) && b.spend(1) && add(j+1); j++ {
				}
			case opAtomic:
				if e, ok := firstMatch(nd.sub, s, i, b); ok {
					add(e)
				}
			case opEnd:
				if i == n {
					add(i)
				}
			case opFail:
			default:
				if i < n && nd.one(s[i]) {
					add(i + 1)
				}
			}
		}
		if len(next) == 0 || b.left < 0 {
			return false
		}
		cur, next = next, cur
	}
	return true
}

// firstMatch is where a backtracking matcher's first success for nodes at pos ends.
func firstMatch(nodes []reNode, s []rune, pos int, b *budget) (int, bool) {
	if len(nodes) == 0 {
		return pos, true
	}
	if !b.spend(1) {
		return 0, false
	}
	nd := &nodes[0]
	switch nd.op {
	case opStar:
		end := pos
		for end < len(s) && nd.atom.one(s[end]) {
			end++
		}
		b.spend(int64(end - pos))
		for k := 0; k <= end-pos; k++ {
			e := end - k
			if nd.lazy {
				e = pos + k
			}
			if r, ok := firstMatch(nodes[1:], s, e, b); ok {
				return r, true
			}
		}
		return 0, false
	case opAtomic:
		e, ok := firstMatch(nd.sub, s, pos, b)
		if !ok {
			return 0, false
		}
		return firstMatch(nodes[1:], s, e, b)
	case opEnd:
		if pos == len(s) {
			return firstMatch(nodes[1:], s, pos, b)
		}
		return 0, false
	case opFail:
		return 0, false
	}
	if pos < len(s) && nd.one(s[pos]) {
		return firstMatch(nodes[1:], s, pos+1, b)
	}
	return 0, false
}

// latin1 reads bytes as Python reads a bytes pattern or name: one character per byte.
func latin1(s string) []rune {
	r := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		r[i] = rune(s[i])
	}
	return r
}

// fnmatcher is a build_ignore pattern: fnmatch.fnmatch on the bytes of a path relative
// to the collection ("*" crosses slashes).
type fnmatcher struct {
	p *pyPattern
}

func newFnmatcher(pattern string) (fnmatcher, error) {
	re, err := fnmatchTranslate(latin1(pattern))
	if err != nil {
		return fnmatcher{}, err
	}
	p, err := compilePy(re)
	return fnmatcher{p}, err
}

func (f fnmatcher) match(rel string, b *budget) bool { return f.p.match(latin1(rel), false, b) }

// distlibMatcher is a manifest directive's pattern compiled as distlib's
// _translate_pattern compiles it.
type distlibMatcher struct {
	p      *pyPattern
	search bool
	root   string // the collection's absolute path, with a final "/"
}

// newDistlibMatcher: with a prefix (recursive-*, graft, prune; pattern "" for none)
// or anchor (include, exclude) the expression starts with the collection's absolute
// path, so it is matched here against the path relative to the collection from its
// start (which differs only where that path appears again below itself); without
// either (global-*), it is searched anywhere in the absolute path, root + "/" + rel,
// where it may match the names of the directories above the collection.
func newDistlibMatcher(pattern string, anchor bool, prefix *string, root string) (distlibMatcher, error) {
	body := func(pat string) ([]rune, error) {
		re, err := fnmatchTranslate([]rune(pat))
		if err != nil {
			return nil, err
		}
		re = distlibDots(re)
		return re[len("(?s:") : len(re)-len(`)\Z`)], nil
	}
	re := []rune("(?s:")
	switch {
	case prefix != nil:
		b, err := body(*prefix)
		if err != nil {
			return distlibMatcher{}, err
		}
		re = append(append(re, b...), '/', '.', '*')
		if pattern != "" {
			if b, err = body(pattern); err != nil {
				return distlibMatcher{}, err
			}
			re = append(re, b...)
		}
	default:
		b, err := body(pattern)
		if err != nil {
			return distlibMatcher{}, err
		}
		re = append(re, b...)
	}
	p, err := compilePy(append(re, []rune(`)\Z`)...))
	return distlibMatcher{p: p, search: prefix == nil && !anchor, root: strings.TrimSuffix(root, "/") + "/"}, err
}

func (m distlibMatcher) match(rel string, b *budget) bool {
	if m.search {
		return m.p.match([]rune(m.root+rel), true, b)
	}
	return m.p.match([]rune(rel), false, b)
}
