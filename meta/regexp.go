package meta

import (
	"container/list"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// MaxPattern bounds the length in bytes of a regular expression a filter may match with.
const MaxPattern = 1000

var errLongPattern = fmt.Errorf("longer than %d bytes", MaxPattern)

// errBadPattern marks the errors of SQLite's regexp functions, so that BadPattern can
// tell them from the database's own after they have passed through the driver as text.
const errBadPattern = "invalid regular expression"

// SQLite has no REGEXP function of its own; the list filters' __regex and __iregex
// lookups need one. Compiled patterns are cached because a filter applies one pattern
// to every row.
var patterns = patternCache{budget: 16 << 20}

func init() {
	sqlite.MustRegisterDeterministicScalarFunction("regexp", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return matchRegexp(args, false)
	})
	sqlite.MustRegisterDeterministicScalarFunction("iregexp", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return matchRegexp(args, true)
	})
}

func matchRegexp(args []driver.Value, ci bool) (driver.Value, error) {
	pat, ok := args[0].(string)
	if !ok {
		return false, nil
	}
	var s string
	switch v := args[1].(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return false, nil
	}
	re, err := patterns.get(pat, ci)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", errBadPattern, err)
	}
	return re.MatchString(s), nil
}

// CheckPattern reports why d cannot match with pattern (case-insensitively when ci):
// it is longer than MaxPattern or, on SQLite, not valid RE2 syntax. PostgreSQL's
// syntax differs from RE2's (it has lookahead and back references), so there
// PostgreSQL judges the pattern when the query runs, and BadPattern recognises its
// refusal.
func CheckPattern(d Dialect, pattern string, ci bool) error {
	if d == Postgres {
		if len(pattern) > MaxPattern {
			return errLongPattern
		}
		return nil
	}
	_, err := patterns.get(pattern, ci) // compiled now, it is ready for the query
	return err
}

// BadPattern reports whether err is the database refusing a regular expression a query
// matched with, and why.
func BadPattern(err error) (string, bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.TrimPrefix(pe.Message, errBadPattern+": "), pe.Code == "2201B" // invalid_regular_expression
	}
	if err == nil {
		return "", false
	}
	// modernc.org/sqlite returns a function's error as text: "SQL logic error: <it> (1)".
	s := err.Error()
	i := strings.Index(s, errBadPattern+": ")
	if i < 0 {
		return "", false
	}
	return strings.TrimSuffix(s[i+len(errBadPattern)+2:], " (1)"), true
}

// patternCache holds compiled patterns within a budget of bytes, dropping the least
// recently used first. The budget, not a count, bounds it: a pattern of a few bytes
// such as `a{1000}` compiles to a thousand instructions, so MaxPattern bytes can hold
// megabytes.
type patternCache struct {
	mu     sync.Mutex
	budget int // bytes
	used   int
	lru    list.List // of *cachedPattern, the most recently used first
	byKey  map[string]*list.Element
}

type cachedPattern struct {
	key  string
	re   *regexp.Regexp
	size int
}

// instBytes is about what one instruction of a compiled program holds in memory
// (measured: 42); a cached pattern also keeps its key and some fixed overhead. The
// budget holds the largest program MaxPattern bytes compile to (about 142,000
// instructions, 6 MB), so every pattern is compiled once a query.
const instBytes, patternOverhead = 48, 512

// get compiles pattern (case-insensitive when ci), or finds it compiled.
func (c *patternCache) get(pattern string, ci bool) (*regexp.Regexp, error) {
	if len(pattern) > MaxPattern {
		return nil, errLongPattern
	}
	key := pattern
	if ci {
		key = "(?i)" + key
	}
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		c.lru.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*cachedPattern).re, nil
	}
	c.mu.Unlock()
	re, err := regexp.Compile(key)
	if err != nil {
		return nil, err
	}
	parsed, err := syntax.Parse(key, syntax.Perl) // as regexp.Compile did; cheap
	if err != nil {
		return nil, err
	}
	p := &cachedPattern{key: key, re: re, size: len(key) + instBytes*progSize(parsed) + patternOverhead}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok || p.size > c.budget {
		return re, nil
	}
	if c.byKey == nil {
		c.byKey = map[string]*list.Element{}
	}
	c.byKey[key] = c.lru.PushFront(p)
	c.used += p.size
	for c.used > c.budget {
		old := c.lru.Remove(c.lru.Back()).(*cachedPattern)
		delete(c.byKey, old.key)
		c.used -= old.size
	}
	return re, nil
}

// progSize estimates the instructions re compiles to (regexp does not say): about one
// a node, one a literal character, and a repeat's body as many times as it may repeat.
func progSize(re *syntax.Regexp) int {
	n := 1
	if re.Op == syntax.OpLiteral {
		n = len(re.Rune)
	}
	for _, sub := range re.Sub {
		n += progSize(sub)
	}
	if re.Op == syntax.OpRepeat {
		n *= max(re.Max, re.Min, 1)
	}
	return n
}
