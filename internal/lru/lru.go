// Package lru is a bounded map, safe for concurrent use, that evicts its least recently
// used entries when full: full by entry count (New), or by the summed cost of its
// values (NewWeighted: bytes, say, when values differ much in size).
package lru

import (
	"container/list"
	"sync"
)

// Cache holds entries up to a bound on their number or their cost.
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	max   int64
	cost  func(V) int64
	used  int64
	order *list.List // front = most recently used; values are *entry
	items map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key  K
	val  V
	cost int64
}

// New returns a cache of at most n entries (none when n <= 0).
func New[K comparable, V any](n int) *Cache[K, V] {
	return NewWeighted[K, V](int64(n), func(V) int64 { return 1 })
}

// NewWeighted returns a cache whose entries cost at most max together, each what cost
// says of its value; a value costing more than max is not kept (and evicts nothing).
func NewWeighted[K comparable, V any](max int64, cost func(V) int64) *Cache[K, V] {
	return &Cache[K, V]{max: max, cost: cost, order: list.New(), items: make(map[K]*list.Element)}
}

// Get returns the value stored for k and marks it most recently used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry[K, V]).val, true
}

// Put stores a value, evicting the least recently used entries while the cache is over
// its bound.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cost := c.cost(v)
	if cost > c.max {
		// Kept by nothing, it must not flush what is kept; an older value of k goes.
		if e, ok := c.items[k]; ok {
			c.used -= e.Value.(*entry[K, V]).cost
			c.order.Remove(e)
			delete(c.items, k)
		}
		return
	}
	if e, ok := c.items[k]; ok {
		en := e.Value.(*entry[K, V])
		c.used += cost - en.cost
		en.val, en.cost = v, cost
		c.order.MoveToFront(e)
	} else {
		c.items[k] = c.order.PushFront(&entry[K, V]{key: k, val: v, cost: cost})
		c.used += cost
	}
	for c.used > c.max && c.order.Len() > 0 {
		last := c.order.Back()
		en := last.Value.(*entry[K, V])
		c.order.Remove(last)
		delete(c.items, en.key)
		c.used -= en.cost
	}
}

// Len returns the number of entries.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
