package meta

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"
)

// The compiled patterns held stay within the cache's budget however many distinct ones
// are matched with, the heaviest a pattern of MaxPattern bytes can compile to included;
// the most recent stay compiled.
func TestPatternCacheBounded(t *testing.T) {
	c := patternCache{budget: 16 << 20}
	heavy := strings.Repeat("a{1000}", (MaxPattern-3)/len("a{1000}")) // ~142,000 instructions
	for i := range 200 {
		ps := []string{fmt.Sprintf("^pkg-%d$", i)}
		if i%20 == 0 {
			ps = append(ps, fmt.Sprintf("%03d", i)+heavy)
		}
		for _, p := range ps {
			ci := i%2 == 0
			if _, err := c.get(p, ci); err != nil {
				t.Fatalf("%.40s: %v", p, err)
			}
			if key := c.lru.Front().Value.(*cachedPattern).key; !strings.HasSuffix(key, p) || ci != strings.HasPrefix(key, "(?i)") {
				t.Fatalf("%.40s: not cached", p)
			}
		}
		if c.used > c.budget || c.used < 0 {
			t.Fatalf("after pattern %d: %d bytes held, budget %d", i, c.used, c.budget)
		}
	}
	held := 0
	for e := c.lru.Front(); e != nil; e = e.Next() {
		held += e.Value.(*cachedPattern).size
	}
	if held != c.used || len(c.byKey) != c.lru.Len() {
		t.Errorf("accounting: %d bytes in %d entries, %d recorded in %d", held, c.lru.Len(), c.used, len(c.byKey))
	}
	a, _ := c.get("^pkg-199$", false)
	b, _ := c.get("^pkg-199$", false)
	if a != b {
		t.Error("the most recent pattern was compiled again")
	}
	if _, err := c.get(strings.Repeat("a", MaxPattern+1), true); err == nil {
		t.Errorf("a pattern of %d bytes was compiled", MaxPattern+1)
	}
}

// SQLite's regexp functions answer an invalid or over-long pattern with an error that
// BadPattern recognises.
func TestBadPatternFromSQLite(t *testing.T) {
	for _, p := range []string{"(", strings.Repeat("a", MaxPattern+1)} {
		_, err := matchRegexp([]driver.Value{p, "x"}, false)
		if _, ok := BadPattern(fmt.Errorf("SQL logic error: %w (1)", err)); err == nil || !ok {
			t.Errorf("%.20s: error %v not recognised", p, err)
		}
	}
	if _, ok := BadPattern(fmt.Errorf("SQL logic error: no such table: x (1)")); ok {
		t.Error("another error taken for a bad pattern")
	}
}
