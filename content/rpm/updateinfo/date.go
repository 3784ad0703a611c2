package updateinfo

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

var errDate = errors.New("not a date")

// ParseDate reads an advisory date in one of the forms found in the wild:
//
//	1415215980                 seconds since the epoch (SUSE)
//	2014-09-24                 a day
//	2014-09-24 00:00:00        Fedora, Red Hat
//	2014-09-24 00:00:00 UTC    with a zone: " UTC", " GMT", "Z", "+02:00", "+0200"
//	2014-09-24T00:00:00Z       ISO 8601, optionally with fractional seconds
//
// A date without a zone is taken as UTC, as createrepo_c and Pulp take it.
func ParseDate(s string) (time.Time, error) {
	if s != "" && isDigits(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, errDate
		}
		return time.Unix(n, 0).UTC(), nil
	}
	// YYYY-MM-DD
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, errDate
	}
	y, ok1 := atoi(s[0:4])
	mo, ok2 := atoi(s[5:7])
	d, ok3 := atoi(s[8:10])
	if !ok1 || !ok2 || !ok3 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) {
		return time.Time{}, errDate
	}
	rest := s[10:]
	var h, mi, sec, nsec int
	if rest != "" {
		// [ T]HH:MM:SS
		if len(rest) < 9 || (rest[0] != ' ' && rest[0] != 'T') || rest[3] != ':' || rest[6] != ':' {
			return time.Time{}, errDate
		}
		var ok4, ok5, ok6 bool
		h, ok4 = atoi(rest[1:3])
		mi, ok5 = atoi(rest[4:6])
		sec, ok6 = atoi(rest[7:9])
		if !ok4 || !ok5 || !ok6 || h > 23 || mi > 59 || sec > 60 {
			return time.Time{}, errDate
		}
		rest = rest[9:]
		if len(rest) > 1 && rest[0] == '.' {
			i := 1
			for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
				i++
			}
			if i == 1 || i > 10 {
				return time.Time{}, errDate
			}
			frac := rest[1:i] + strings.Repeat("0", 10-i)
			nsec, _ = atoi(frac)
			rest = rest[i:]
		}
	}
	loc, ok := zone(rest)
	if !ok {
		return time.Time{}, errDate
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, nsec, loc), nil
}

// zone reads what may follow a time: nothing, " UTC", " GMT", "Z", or an offset
// ("+02:00", "+0200", " +0200").
func zone(s string) (*time.Location, bool) {
	switch s {
	case "", "Z", " UTC", " GMT", " Z", "UTC":
		return time.UTC, true
	}
	s = strings.TrimPrefix(s, " ")
	if len(s) != 5 && len(s) != 6 || (s[0] != '+' && s[0] != '-') {
		return nil, false
	}
	hh, mm := s[1:3], s[3:]
	if len(s) == 6 {
		if s[3] != ':' {
			return nil, false
		}
		mm = s[4:]
	}
	h, ok1 := atoi(hh)
	m, ok2 := atoi(mm)
	if !ok1 || !ok2 || h > 23 || m > 59 {
		return nil, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return time.FixedZone("", off), true
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// atoi reads a string of ASCII digits only (no sign, no spaces).
func atoi(s string) (int, bool) {
	if s == "" || !isDigits(s) {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
