package meta

import (
	"database/sql/driver"
	"fmt"
	"regexp"
	"sync"

	"modernc.org/sqlite"
)

// SQLite has no REGEXP function of its own; the list filters' __regex and __iregex
// lookups need one. Compiled patterns are cached because a filter applies one pattern
// to every row.
var regexCache sync.Map

func init() {
	sqlite.MustRegisterDeterministicScalarFunction("regexp", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return matchRegexp(args, "")
	})
	sqlite.MustRegisterDeterministicScalarFunction("iregexp", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		return matchRegexp(args, "(?i)")
	})
}

func matchRegexp(args []driver.Value, flags string) (driver.Value, error) {
	pat, ok := args[0].(string)
	if !ok {
		return false, nil
	}
	var s string
	switch v := args[1].(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return false, nil
	}
	key := flags + pat
	re, ok := regexCache.Load(key)
	if !ok {
		c, err := regexp.Compile(key)
		if err != nil {
			return nil, fmt.Errorf("invalid regular expression %q: %w", pat, err)
		}
		re, _ = regexCache.LoadOrStore(key, c)
	}
	return re.(*regexp.Regexp).MatchString(s), nil
}
