package content

import (
	"context"
	"fmt"
	"iter"
	"sync"
)

// Parallel runs fn for every item on at most n goroutines; the first failure cancels the
// rest and is returned, named by what name says of its item. items may yield while the
// work runs (a queue that fills as a sync stores what it parsed); it must not block once
// ctx ends.
func Parallel[T any](ctx context.Context, n int, items iter.Seq[T], name func(T) string, fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan T)
	var wg sync.WaitGroup
	for i := 0; i < max(n, 1); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				if err := fn(ctx, it); err != nil {
					cancel(fmt.Errorf("%s: %w", name(it), err))
				}
			}
		}()
	}
	for it := range items {
		select {
		case work <- it:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	return context.Cause(ctx)
}
