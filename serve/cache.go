package serve

import (
	"container/list"
	"sync"
)

// lru is a bounded map of path resolutions, misses included, evicting the least
// recently used entry. Entries never go stale: their keys name immutable content.
type lru struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = most recently used; values are *lruEntry
	items map[resolutionKey]*list.Element
}

// resolutionKey names a path within what a distribution serves: a publication, or a
// repository version (repository and number). The distribution is part of the key
// because a miss consults the distribution's superseded publications.
type resolutionKey struct {
	dist, pub, repo string // pulp IDs, never reused
	number          int64
	path            string
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

// put stores a resolution.
func (c *lru) put(k resolutionKey, r resolution) {
	c.mu.Lock()
	defer c.mu.Unlock()
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
