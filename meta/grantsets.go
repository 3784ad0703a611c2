package meta

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
)

// A request of a user who is not an administrator reads what its roles grant through
// Grants, once per request. What it needs is kept in memory for as long as no grant
// changes: its permissions on every object, the roles each type's grants come through
// (grantWays), and the sets its lists are narrowed by: on SQLite the pulp_ids of the
// objects of one type on which it holds a permission, and on both the row ids of the
// repositories it may see, whose holdings a content list checks (on PostgreSQL an array
// constant in the statement's text, whose planner hashes it).
// Checked in SQL, each row of a narrowed list costs a seek of the grants' index per role
// carrying the permission, and a content unit one more for its repository: a page of 100
// content units narrowed to a viewer of 3,000 repositories took 0.57 ms against 0.11 ms
// unnarrowed, and 0.12 to 0.22 ms matched against the set of its repositories
// (docs/benchmarks.md).
//
// A set is known to SQL by a number: the condition is pith_granted(?, col) with the
// number as its argument, so a list's text is the same for every caller and every
// change of grants (its statement is kept), and a count kept by its text and arguments
// names the set it was taken with. Sets never change; a change of grants makes new ones.
//
// "No grant changed" is the grant_changes counter (migration 0026), which triggers add
// to in the transaction of every change to user_roles, group_roles, group_users,
// role_permissions and to the rows of repositories, whichever process commits it. A
// request reads the counter first (one kept lookup, which replaces the queries of the
// user's permissions and of each type's grants) and takes what was kept at the same
// value; what it reads itself, after the counter, it keeps at that value. So nothing
// kept is older than its counter: at worst newer, which a request that read the counter
// before a change committed may be answered with.
//
// A replaced or evicted set stays known to SQL for grantSetGrace (a minute: a list's
// queries take milliseconds), so that a query already given its number still finds it;
// the sets held (kept or in their grace) are bounded by grantSetBudget members. A set
// of more than maxGrantSet (on PostgreSQL maxLiteralSet) is not kept, and is not read
// again at the same counter: its lists are narrowed in SQL, as are anyone's new sets
// while the budget is spent. Entries made stale by a change are evicted first; fresh
// ones never are, for another.

const (
	grantSetBudget = 1 << 18 // members of every set together (about 25 MB)
	maxGrantSet    = 1 << 16 // members of one set
	grantSetGrace  = time.Minute
	// PostgreSQL: members of a set written into a statement as an array constant
	// (about 7 bytes each), which each connection parses and plans once per set.
	maxLiteralSet = 1 << 13
)

// grantSet is a set's members: pulp_ids (Granted's) or repositories' row ids
// (InRepositories').
type grantSet struct {
	ids  map[string]struct{}
	rows map[int64]struct{}
}

func (s *grantSet) size() int { return len(s.ids) + len(s.rows) }

// liveSets are the sets SQL can name, by number (int64 → *grantSet): pith_granted reads
// it on every row of a narrowed list, without a lock.
var (
	liveSets  sync.Map
	lastSetID atomic.Int64
)

// errNoSet: a query named a set past its grace.
const errNoSet = "grant set expired"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction("pith_granted", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return inGrantSet(args[0], args[1])
	})
}

// inGrantSet is pith_granted(set, v): whether the set numbered set holds v, a pulp_id
// or a row id.
func inGrantSet(set, v driver.Value) (driver.Value, error) {
	n, _ := set.(int64)
	x, ok := liveSets.Load(n)
	if !ok {
		return nil, fmt.Errorf("%s: %d", errNoSet, n)
	}
	s := x.(*grantSet)
	var in bool
	switch v := v.(type) {
	case string:
		_, in = s.ids[v]
	case []byte:
		_, in = s.ids[string(v)]
	case int64:
		_, in = s.rows[v]
	}
	return in, nil
}

// grantKey names what is kept: a user's set of one type and permission, a user's
// permissions on every object (no type and permission), or the repositories a
// condition selects (query).
type grantKey struct {
	user             int64
	objectType, perm string
	query            string
}

type grantEntry struct {
	changes int64           // grant_changes it was read at
	id      int64           // its number in liveSets; 0 for permissions
	perms   map[string]bool // permissions
	ways    grantWays       // Granted's SQL forms
	literal string          // PostgreSQL: InRepositories' set as an array constant
	// tooLarge: the set has more members than are kept; its lists are narrowed in SQL.
	tooLarge bool
	size     int
}

type retiredSet struct {
	id    int64
	size  int
	until time.Time
}

// grantSets is what one store keeps.
type grantSets struct {
	members bool // SQLite: sets of members, matched by pith_granted
	budget  int  // members, kept and retired (grantSetBudget; tests lower it)
	max     int  // members of one set (maxGrantSet)
	mu      sync.Mutex
	kept    map[grantKey]*grantEntry
	retired []retiredSet
	held    int // members of kept and retired sets
	now     func() time.Time
	// The counter as last read, and the commit token read before it: a request that
	// reads the same token takes the counter from here.
	tok        string
	tokChanges int64
}

func newGrantSets(members bool) *grantSets {
	return &grantSets{members: members, budget: grantSetBudget, max: maxGrantSet, kept: map[grantKey]*grantEntry{}, now: time.Now}
}

// get is what is kept under key at changes (nil: nothing).
func (g *grantSets) get(key grantKey, changes int64) *grantEntry {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e := g.kept[key]; e != nil && e.changes == changes {
		return e
	}
	return nil
}

// put keeps e under key, read at e.changes, and gives it its number if it is a set
// (perms nil); false when it cannot be kept (too large, or the budget is spent), and
// then a set has no number. A set read at an older counter than the one kept is
// numbered but not kept: it retires at once.
func (g *grantSets) put(key grantKey, e *grantEntry, s *grantSet) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.sweep(now)
	old := g.kept[key]
	newer := old != nil && old.changes > e.changes
	if old != nil && !newer {
		g.retire(key, old, now)
	}
	if g.held+e.size > g.budget {
		g.evictStale(e.changes, now)
	}
	if g.held+e.size > g.budget {
		return false
	}
	switch {
	case s != nil && g.members:
		e.id = lastSetID.Add(1)
		liveSets.Store(e.id, s)
	case s != nil:
		e.literal = s.literal()
	}
	switch {
	case !newer:
		g.held += e.size
		g.kept[key] = e
	case e.id != 0:
		g.held += e.size
		g.retired = append(g.retired, retiredSet{id: e.id, size: e.size, until: now.Add(grantSetGrace)})
	}
	return true
}

// retire stops keeping an entry; SQL may name a set for grantSetGrace more. g.mu is held.
func (g *grantSets) retire(key grantKey, e *grantEntry, now time.Time) {
	delete(g.kept, key)
	if e.id == 0 { // no query names it
		g.held -= e.size
		return
	}
	g.retired = append(g.retired, retiredSet{id: e.id, size: e.size, until: now.Add(grantSetGrace)})
}

// evictStale retires the entries read at a counter older than changes: none of them is
// taken again (a request that read an older counter reads what it needs itself).
// Fresh entries are never evicted for another: when the budget is spent, a new set is
// not kept, and its lists are narrowed in SQL until retired sets pass their grace.
// g.mu is held.
func (g *grantSets) evictStale(changes int64, now time.Time) {
	for k, e := range g.kept {
		if e.changes < changes {
			g.retire(k, e, now)
		}
	}
}

// sweep forgets the retired sets past their grace. g.mu is held.
func (g *grantSets) sweep(now time.Time) {
	n := 0
	for _, r := range g.retired {
		if now.Before(r.until) {
			g.retired[n] = r
			n++
			continue
		}
		if r.id != 0 {
			liveSets.Delete(r.id)
		}
		g.held -= r.size
	}
	clear(g.retired[n:])
	g.retired = g.retired[:n]
}

// close forgets every set of the store.
func (g *grantSets) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, e := range g.kept {
		delete(g.kept, k)
		liveSets.Delete(e.id)
	}
	for _, r := range g.retired {
		liveSets.Delete(r.id)
	}
	g.retired, g.held = nil, 0
}

// Grants are one user's grants for one request, as of one read of grant_changes.
type Grants struct {
	q       Querier
	sets    *grantSets // nil: nothing kept (q a transaction)
	user    int64
	changes int64
}

// UserGrants reads what user's roles grant, for one request: on the store itself, the
// counter of grant changes (or, where the commit token is the one read before the
// counter was last read, that counter: nothing was committed since), then what is kept
// at it; with q a transaction, each question asks SQL.
func UserGrants(ctx context.Context, q Querier, user int64) (*Grants, error) {
	g := &Grants{q: q, user: user}
	db, ok := q.(*DB)
	if !ok || db.grants == nil {
		return g, nil
	}
	g.sets = db.grants
	var tok string
	if _, reads := ctx.Value(tokenKey{}).(*tokenOnce); reads {
		var err error
		if tok, err = db.counts.token(ctx); err != nil {
			tok = "" // read the counter itself
		}
	}
	g.sets.mu.Lock()
	same := tok != "" && tok == g.sets.tok
	g.changes = g.sets.tokChanges
	g.sets.mu.Unlock()
	if same {
		return g, nil
	}
	if err := db.QueryRow(ctx, `SELECT n FROM grant_changes WHERE id = 1`).Scan(&g.changes); err != nil {
		return nil, fmt.Errorf("grant changes: %w", err)
	}
	if tok != "" {
		g.sets.mu.Lock()
		g.sets.tok, g.sets.tokChanges = tok, g.changes
		g.sets.mu.Unlock()
	}
	return g, nil
}

// Permissions are the user's permissions on every object (Permissions of the zero
// Object). The map may be shared: it is not to be changed.
func (g *Grants) Permissions(ctx context.Context) (map[string]bool, error) {
	if g.sets == nil {
		return Permissions(ctx, g.q, g.user, Object{})
	}
	key := grantKey{user: g.user}
	if e := g.sets.get(key, g.changes); e != nil {
		return e.perms, nil
	}
	ps, err := Permissions(ctx, g.q, g.user, Object{})
	if err != nil {
		return nil, err
	}
	g.sets.put(key, &grantEntry{changes: g.changes, perms: ps, size: len(ps)}, nil)
	return ps, nil
}

// Granted is a condition for a List: col (a pulp_id column) names an object of type
// objectType on which the user holds perm through a role of its own or of one of its
// groups ("1 = 0" when it holds none). It matches col against the kept set of those
// objects (SQLite), or is written in SQL (grantWays.cond).
func (g *Grants) Granted(ctx context.Context, col, objectType, perm string) (Cond, error) {
	if g.sets != nil && g.sets.members {
		const roles = `x.role_id IN (SELECT rp.role_id FROM role_permissions rp WHERE rp.permission = ?)`
		s := &grantSet{ids: map[string]struct{}{}}
		e, err := g.keep(ctx, grantKey{user: g.user, objectType: objectType, perm: perm}, s, true, func(rows *sql.Rows) error {
			var v string
			err := rows.Scan(&v)
			s.ids[v] = struct{}{}
			return err
		}, `SELECT x.object_id FROM user_roles x WHERE x.user_id = ? AND x.object_type = ? AND `+roles+`
			UNION ALL SELECT x.object_id FROM group_users gu CROSS JOIN group_roles x WHERE x.group_id = gu.group_id AND gu.user_id = ? AND x.object_type = ? AND `+roles,
			g.user, objectType, perm, g.user, objectType, perm)
		switch {
		case err != nil:
			return Cond{}, fmt.Errorf("grants of user %d on %s: %w", g.user, objectType, err)
		case e != nil:
			return e.cond(col), nil
		}
	}
	w, err := g.ways(ctx, objectType, perm) // not kept as a set: written in SQL
	return w.cond(col, g.user, objectType, g.q.Dialect()), err
}

// ways are the roles the user holds perm on objects of the type through, kept where
// the sets are.
func (g *Grants) ways(ctx context.Context, objectType, perm string) (grantWays, error) {
	if g.sets == nil {
		return readWays(ctx, g.q, g.user, objectType, perm)
	}
	key := grantKey{user: g.user, objectType: objectType, perm: perm, query: "ways"}
	if e := g.sets.get(key, g.changes); e != nil {
		return e.ways, nil
	}
	w, err := readWays(ctx, g.q, g.user, objectType, perm)
	if err == nil {
		g.sets.put(key, &grantEntry{changes: g.changes, ways: w, size: len(w.own) + len(w.group)}, nil)
	}
	return w, err
}

// InRepositories is a condition for a List: col (a repository's row id) names one of
// the repositories (alias rr) repos selects, a condition built of this request's
// Granted ones and the repositories' types: matched by pith_granted on SQLite, an
// array constant on PostgreSQL (whose planner hashes it). False when they are not kept
// (too many, or q is a transaction): the caller writes repos into its query itself.
func (g *Grants) InRepositories(ctx context.Context, col string, repos Cond) (Cond, bool, error) {
	if g.sets == nil {
		return Cond{}, false, nil
	}
	key := grantKey{query: repos.Set}
	for _, a := range repos.Args {
		key.query += fmt.Sprintf("\x00%#v", a)
	}
	s := &grantSet{rows: map[int64]struct{}{}}
	e, err := g.keep(ctx, key, s, false, func(rows *sql.Rows) error {
		var id int64
		err := rows.Scan(&id)
		s.rows[id] = struct{}{}
		return err
	}, `SELECT rr.id FROM repositories rr WHERE `+repos.Set, repos.Args...)
	switch {
	case err != nil:
		return Cond{}, false, fmt.Errorf("repositories user %d may see: %w", g.user, err)
	case e == nil:
		return Cond{}, false, nil
	}
	return e.cond(col), true, nil
}

// keep is the set kept under key at the request's counter; if none is, the set s that
// add fills from query's rows, kept. Nil when it cannot be kept.
func (g *Grants) keep(ctx context.Context, key grantKey, s *grantSet, kept bool, add func(*sql.Rows) error, query string, args ...any) (*grantEntry, error) {
	if e := g.sets.get(key, g.changes); e != nil {
		if e.tooLarge {
			return nil, nil
		}
		return e, nil
	}
	limit := g.sets.max
	if s.rows != nil && !g.sets.members {
		limit = maxLiteralSet
	}
	if err := g.read(ctx, s, limit, kept, add, query, args...); err != nil {
		return nil, err
	}
	e := &grantEntry{changes: g.changes, size: s.size()}
	if e.size > limit {
		// Not read again at this counter: its lists are narrowed in SQL.
		g.sets.put(key, &grantEntry{changes: g.changes, tooLarge: true}, nil)
		return nil, nil
	}
	if !g.sets.put(key, e, s) {
		return nil, nil
	}
	return e, nil
}

// cond is the condition that col is a member of the set ("1 = 0" for an empty one).
func (e *grantEntry) cond(col string) Cond {
	if e.size == 0 {
		return Cond{Row: "1 = 0", Set: "1 = 0"}
	}
	if e.literal != "" {
		in := col + " = ANY(" + e.literal + ")"
		return Cond{Row: in, Set: in, Narrow: true}
	}
	in := "pith_granted(?, " + col + ")"
	return Cond{Row: in, Set: in, Args: []any{e.id}, Narrow: true}
}

// literal is a set of row ids as a PostgreSQL array constant, in order.
func (s *grantSet) literal() string {
	ids := slices.Sorted(maps.Keys(s.rows))
	var b strings.Builder
	b.WriteString("'{")
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	b.WriteString("}'::bigint[]")
	return b.String()
}

// read adds each row query selects to s, until s holds one more member than limit
// (which put then refuses): rows may repeat a member (one per role and group granting
// it), so the bound is on the set, not on the rows. kept: the query's text is fixed
// (its statement is kept).
func (g *Grants) read(ctx context.Context, s *grantSet, limit int, kept bool, add func(*sql.Rows) error, query string, args ...any) error {
	var rows *sql.Rows
	var err error
	if kept {
		rows, err = QueryKept(ctx, g.q, query, args...)
	} else {
		rows, err = g.q.Query(ctx, query, args...)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	for s.size() <= limit && rows.Next() {
		if err := add(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
