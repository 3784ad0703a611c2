package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// List selects a page of rows. Where holds conditions written with ? placeholders, ANDed
// together, with their arguments in Args; the API builds them from declared filters.
type List struct {
	Where   []string
	Args    []any
	OrderBy string // a column list, validated by the caller
	Limit   int    // 0 = no limit
	Offset  int
	// counted is, by index into Where, the form the count uses of a condition added by
	// AndCond ("" or missing: Where's own).
	counted []string
}

// And adds a condition.
func (l *List) And(cond string, args ...any) {
	l.Where = append(l.Where, cond)
	l.Args = append(l.Args, args...)
}

// AndCond adds c: its Row form to the query of the page, its Set form to the count.
func (l *List) AndCond(c Cond) {
	for len(l.counted) < len(l.Where) {
		l.counted = append(l.counted, "")
	}
	l.counted = append(l.counted, c.Set)
	l.And(c.Row, c.Args...)
}

func (l List) where() string {
	if len(l.Where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(l.Where, " AND ")
}

// countWhere is where() with the count's form of each condition added by AndCond.
func (l List) countWhere() string {
	if len(l.counted) == 0 {
		return l.where()
	}
	w := slices.Clone(l.Where)
	for i, c := range l.counted {
		if c != "" && i < len(w) {
			w[i] = c
		}
	}
	return " WHERE " + strings.Join(w, " AND ")
}

func (l List) tail(defaultOrder string) string {
	o := l.OrderBy
	if o == "" {
		o = defaultOrder
	}
	s := " ORDER BY " + o
	if l.Limit > 0 {
		s += fmt.Sprintf(" LIMIT %d", l.Limit)
	}
	if l.Offset > 0 {
		if l.Limit <= 0 {
			s += " LIMIT -1"
		}
		s += fmt.Sprintf(" OFFSET %d", l.Offset)
	}
	return s
}

// Page counts the rows matching l in from (a table with alias) and selects one page. A
// page that ends the list (fewer rows than its limit, and some rows or no offset) counts
// the list itself, so the count, which reads every matching row, is asked only of a list
// longer than its page.
func Page[T any](ctx context.Context, q Querier, cols, from, defaultOrder string, l List, scan func(*sql.Rows) (T, error)) ([]T, int64, error) {
	tail := l.tail(defaultOrder)
	if q.Dialect() == Postgres {
		tail = strings.Replace(tail, "LIMIT -1", "LIMIT ALL", 1)
	}
	out, err := pageRows(ctx, q, "SELECT "+cols+" FROM "+from+l.where()+tail, from, l.Args, scan)
	if err != nil {
		return nil, 0, err
	}
	if (l.Limit <= 0 || len(out) < l.Limit) && (len(out) > 0 || l.Offset <= 0) {
		return out, int64(l.Offset + len(out)), nil
	}
	total, err := count(ctx, q, "SELECT count(*) FROM "+from+l.countWhere(), l.Args)
	if err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", from, err)
	}
	return out, total, nil
}

// count runs a count query; on the store (not in a transaction, whose own writes the
// cache cannot see) through its counts.
func count(ctx context.Context, q Querier, query string, args []any) (int64, error) {
	if db, ok := q.(*DB); ok && db.counts != nil {
		return db.counts.count(ctx, query, args)
	}
	var n int64
	err := q.QueryRow(ctx, query, args...).Scan(&n)
	return n, err
}

func pageRows[T any](ctx context.Context, q Querier, query, from string, args []any, scan func(*sql.Rows) (T, error)) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", from, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("scan %s: %w", from, err)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// NewID returns a new resource UUID.
func NewID() string { return uuid.NewString() }

// Labels are Pulp's pulp_labels.
type Labels map[string]string

func (l Labels) text() string {
	if l == nil {
		return "{}"
	}
	b, _ := json.Marshal(l)
	return string(b)
}

func parseLabels(s string) Labels {
	l := Labels{}
	_ = json.Unmarshal([]byte(s), &l)
	return l
}

func rawText(r json.RawMessage) string {
	if len(r) == 0 {
		return "{}"
	}
	return string(r)
}

func notFound(what, id string) error { return fmt.Errorf("%s %s: %w", what, id, ErrNotFound) }

func noRows(err error, what, id string) error {
	if err == sql.ErrNoRows {
		return notFound(what, id)
	}
	return err
}
