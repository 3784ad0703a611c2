package meta

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"io"
	"sync"
)

// maxCounts bounds the list counts kept (each under the 32-byte digest of its query and
// arguments, however long those are); past it the cache starts again empty.
const maxCounts = 1024

// counts keeps the counts of list queries for as long as nothing has been committed to
// the database since they were taken. A list's count reads every row that matches it
// (for a user who sees objects one grant at a time, each checked against the grants:
// 3.6 ms for 3,000 repositories against 0.3 ms for the page), and a list asked again
// and again, page after page, counts the same rows each time.
//
// What "nothing committed since" means is exact, across processes:
//   - SQLite: PRAGMA data_version on a connection of its own, which never writes: its
//     value changes when any other connection, of this process or another (pith admin),
//     commits.
//   - PostgreSQL: pg_current_snapshot(): a transaction that commits leaves the snapshot's
//     list of running ones, and one that begins and commits between two reads moves
//     its xmax, so an equal snapshot means no write has ended in between.
//
// The token is read before the count is taken: a commit between the two makes the
// entry stale at once (the next read sees another token), never a stale count
// current. Every commit anywhere (a worker's heartbeat too) empties the cache in
// effect, so what it saves depends on how often the installation writes.
type counts struct {
	db *DB
	mu sync.Mutex // guards m
	m  map[[sha256.Size]byte]countEntry
	// SQLite: the connection that reads data_version, of a pool of its own outside the
	// store's, and how many such connections came before it: a new connection counts
	// data_version from its own start, so the token carries the connection's number.
	connMu sync.Mutex // guards conn and epoch
	pool   *sql.DB
	conn   *sql.Conn
	epoch  int
}

type countEntry struct {
	token string
	n     int64
}

func newCounts(db *DB) (*counts, error) {
	c := &counts{db: db, m: map[[sha256.Size]byte]countEntry{}}
	if db.dialect == SQLite {
		pool, err := sql.Open("sqlite", "file:"+db.dsn+"?_pragma=busy_timeout(10000)")
		if err != nil {
			return nil, fmt.Errorf("meta: open sqlite %s: %w", db.dsn, err)
		}
		pool.SetMaxOpenConns(1)
		c.pool = pool
	}
	return c, nil
}

// ReadsOnly marks ctx as a request's that writes nothing from here on (an API GET):
// the commit token its counts and its grants (UserGrants) are kept by is read once, at
// the first of them, for all. Each still reads its data after the token, so what it
// keeps at the token is no older than the token.
func ReadsOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, tokenKey{}, &tokenOnce{})
}

type tokenKey struct{}

type tokenOnce struct {
	once sync.Once
	tok  string
	err  error
}

// token is the database's commit token now, or at the first read of a request that
// reads only (ReadsOnly).
func (c *counts) token(ctx context.Context) (string, error) {
	if t, ok := ctx.Value(tokenKey{}).(*tokenOnce); ok {
		t.once.Do(func() { t.tok, t.err = c.readToken(ctx) })
		return t.tok, t.err
	}
	return c.readToken(ctx)
}

func (c *counts) readToken(ctx context.Context) (string, error) {
	if c.pool == nil {
		var t string
		err := c.db.sql.QueryRowContext(ctx, "SELECT pg_current_snapshot()::text").Scan(&t)
		return t, err
	}
	c.connMu.Lock()
	defer c.connMu.Unlock()
	if c.conn == nil {
		conn, err := c.pool.Conn(ctx)
		if err != nil {
			return "", err
		}
		c.conn, c.epoch = conn, c.epoch+1
	}
	var v int64
	if err := c.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		c.conn.Close()
		c.conn = nil
		return "", err
	}
	return fmt.Sprintf("%d.%d", c.epoch, v), nil
}

// count runs query (a SELECT count(*)) with args, or answers it from the cache.
func (c *counts) count(ctx context.Context, query string, args []any) (int64, error) {
	key := countKey(query, args)
	tok, tokErr := c.token(ctx)
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if tokErr == nil && ok && e.token == tok {
		return e.n, nil
	}
	var n int64
	if err := c.db.queryRowUnkept(ctx, query, args...).Scan(&n); err != nil {
		return 0, err
	}
	if tokErr != nil {
		return n, nil // counted, and not kept: no token to keep it with
	}
	c.mu.Lock()
	if len(c.m) >= maxCounts {
		clear(c.m)
	}
	c.m[key] = countEntry{token: tok, n: n}
	c.mu.Unlock()
	return n, nil
}

func (c *counts) close() {
	if c == nil || c.pool == nil {
		return
	}
	c.connMu.Lock()
	defer c.connMu.Unlock()
	if c.conn != nil {
		c.conn.Close()
	}
	c.pool.Close()
}

// countKey is the digest of the query and its arguments, each with its type.
func countKey(query string, args []any) [sha256.Size]byte {
	h := sha256.New()
	io.WriteString(h, query)
	for _, a := range args {
		fmt.Fprintf(h, "\x00%T:%v", a, a)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}
