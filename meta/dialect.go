package meta

import (
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Dialect isolates the differences between SQLite and PostgreSQL.
type Dialect int

// The supported engines.
const (
	SQLite Dialect = iota
	Postgres
)

func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// Rebind rewrites ? placeholders to $n for PostgreSQL. Question marks inside string
// literals are left alone.
func (d Dialect) Rebind(q string) string {
	if d != Postgres || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	inStr := false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			inStr = !inStr
			b.WriteByte(c)
		case c == '?' && !inStr:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// NoIndex is col kept off its indexes by SQLite's planner (a unary +, which SQLite
// takes for any type), where without statistics it would take one that is worse;
// PostgreSQL plans from statistics, and has no unary + for text.
func (d Dialect) NoIndex(col string) string {
	if d == Postgres {
		return col
	}
	return "+" + col
}

// ILike is the case-insensitive LIKE operator.
func (d Dialect) ILike() string {
	if d == Postgres {
		return "ILIKE"
	}
	return "LIKE"
}

// RegexpMatch is a boolean expression matching col against a pattern bound to one ?
// placeholder; ci selects case-insensitive matching. SQLite's functions are registered
// by this package (regexp.go).
func (d Dialect) RegexpMatch(col string, ci bool) string {
	switch {
	case d == Postgres && ci:
		return col + " ~* ?"
	case d == Postgres:
		return col + " ~ ?"
	case ci:
		return "iregexp(?, " + col + ")"
	}
	return "regexp(?, " + col + ")"
}

// JSONText extracts a top-level string member of a JSON text column.
func (d Dialect) JSONText(col, key string) string {
	k := strings.ReplaceAll(key, "'", "''")
	if d == Postgres {
		return "(" + col + "::jsonb ->> '" + k + "')"
	}
	k = strings.ReplaceAll(k, `"`, `""`)
	return "json_extract(" + col + ", '$.\"" + k + "\"')"
}

// JSONArrayHas is a condition, taking one argument, that a top-level array member of a
// JSON text column holds the argument as one of its strings.
func (d Dialect) JSONArrayHas(col, key string) string {
	k := strings.ReplaceAll(key, "'", "''")
	if d == Postgres {
		return "jsonb_exists(" + col + "::jsonb -> '" + k + "', ?)"
	}
	k = strings.ReplaceAll(k, `"`, `""`)
	return "EXISTS (SELECT 1 FROM json_each(" + col + ", '$.\"" + k + "\"') WHERE value = ?)"
}

func (d Dialect) retryable(err error) bool {
	if d == Postgres {
		var pe *pgconn.PgError
		return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
	}
	s := err.Error()
	return strings.Contains(s, "SQLITE_BUSY") || strings.Contains(s, "database is locked")
}

// IsFull reports whether err says the database has no room left: SQLite's "database or
// disk is full", PostgreSQL's disk_full.
func IsFull(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "53100"
	}
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL
}

// IsUniqueViolation reports whether err is a unique-constraint violation.
func IsUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// Contains is a boolean expression: col contains the text bound to one ? placeholder;
// ci selects case-insensitive matching. (SQLite's LIKE ignores case, so no LIKE here.)
func (d Dialect) Contains(col string, ci bool) string {
	fn := "instr"
	if d == Postgres {
		fn = "strpos"
	}
	if ci {
		return fn + "(lower(" + col + "), lower(?)) > 0"
	}
	return fn + "(" + col + ", ?) > 0"
}
