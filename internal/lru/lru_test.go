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
