package serve

import (
	"container/list"
	"sync"
)

// lru is a bounded map of path resolutions, misses included, evicting the least
// recently used entry. Entries never go stale on their own: Invalidate clears it.
type lru struct {
	mu    sync.Mutex
	max   int
	gen   uint64     // generation of the last clear; older lookups may not store
	order *list.List // front = most recently used; values are *lruEntry
	items map[resolutionKey]*list.Element
}

// resolutionKey names a path within a distribution.
type resolutionKey struct {
	dist int64
	path string
}

type lruEntry struct {
	key resolutionKey
	res resolution
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), items: make(map[resolutionKey]*list.Element)}
}

func (c *lru) get(k resolutionKey) (resolution, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return resolution{}, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry).res, true
}

// put stores a resolution looked up during generation gen; it is dropped when the cache
// was cleared since, so a lookup racing Invalidate cannot store a stale answer.
func (c *lru) put(gen uint64, k resolutionKey, r resolution) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if e, ok := c.items[k]; ok {
		e.Value.(*lruEntry).res = r
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(&lruEntry{key: k, res: r})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry).key)
	}
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// clear forgets everything and starts generation gen.
func (c *lru) clear(gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen = gen
	c.order.Init()
	clear(c.items)
}
