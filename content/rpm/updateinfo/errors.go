package updateinfo

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinels an *Error wraps; test with errors.Is.
var (
	// ErrSyntax: the input is not well-formed XML (or not in an encoding Parse reads).
	ErrSyntax = errors.New("malformed XML")
	// ErrInvalid: well-formed, but a required value is missing or a value is unreadable.
	ErrInvalid = errors.New("invalid updateinfo")
	// ErrDuplicate: two updates in one file share an id.
	ErrDuplicate = errors.New("duplicate update id")
	// ErrTooLarge: a text node or attribute value is longer than MaxText.
	ErrTooLarge = errors.New("value too large")
)

// MaxText is the longest text node or attribute value Parse accepts, in bytes.
const MaxText = 64 << 20

// Error is a problem at a line of a named updateinfo document.
type Error struct {
	File      string // the name the caller gave Parse
	Line      int    // 1-based line the problem is on; 0 when unknown
	ID        string // id of the update the problem is in, "" outside one or before its <id>
	FirstLine int    // for ErrDuplicate: line of the earlier update with the same id
	Problem   string // what is wrong
	Err       error  // ErrSyntax, ErrInvalid, ErrDuplicate, ErrTooLarge or the reader's error
}

func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ": line " + strconv.Itoa(e.Line)
	}
	if e.ID != "" {
		s += fmt.Sprintf(": update %q", e.ID)
	}
	return s + ": " + e.Problem
}

// Unwrap returns the sentinel or the reader's error.
func (e *Error) Unwrap() error { return e.Err }
