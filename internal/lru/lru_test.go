package lru

import "testing"

func TestCache(t *testing.T) {
	t.Parallel()
	c := New[string, int](2)
	c.Put("a", 1)
	c.Put("b", 2)
	c.Get("a") // a is now the most recently used
	c.Put("c", 3)
	if _, ok := c.Get("b"); ok {
		t.Error("least recently used entry b was kept")
	}
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Errorf("a: %v %v", v, ok)
	}
	c.Put("a", 4) // replaces, evicts nothing
	if v, ok := c.Get("a"); !ok || v != 4 || c.Len() != 2 {
		t.Errorf("a after replace: %v %v, len %d", v, ok, c.Len())
	}
	if v, ok := c.Get("c"); !ok || v != 3 {
		t.Errorf("c: %v %v", v, ok)
	}
}

func TestCacheOfNothing(t *testing.T) {
	t.Parallel()
	c := New[string, int](0)
	c.Put("a", 1)
	if _, ok := c.Get("a"); ok || c.Len() != 0 {
		t.Errorf("a cache of size 0 kept an entry")
	}
}

func TestWeighted(t *testing.T) {
	t.Parallel()
	c := NewWeighted[string, string](10, func(v string) int64 { return int64(len(v)) })
	c.Put("a", "xxxx")
	c.Put("b", "xxxx")
	c.Get("a")
	c.Put("c", "xxxx") // 12 > 10: b, the least recently used, goes
	if _, ok := c.Get("b"); ok || c.Len() != 2 {
		t.Errorf("b kept (len %d)", c.Len())
	}
	c.Put("a", "x") // a shrinks: 1 + 4
	c.Put("d", "xxxxx")
	if c.Len() != 3 {
		t.Errorf("after a shrank and d came: len %d, want 3", c.Len())
	}
	c.Put("e", "xxxxxxxxxxx") // costs more than the bound: not kept, and evicts nothing
	if _, ok := c.Get("e"); ok || c.Len() != 3 {
		t.Errorf("a value over the bound: kept %v, len %d, want 3", ok, c.Len())
	}
}
