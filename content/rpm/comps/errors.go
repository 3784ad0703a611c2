package comps

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
	ErrInvalid = errors.New("invalid comps")
	// ErrDuplicate: two groups, categories or environments in one file share an id.
	ErrDuplicate = errors.New("duplicate id")
	// ErrTooLarge: a text node or attribute value is longer than MaxText.
	ErrTooLarge = errors.New("value too large")
)

// MaxText is the longest text node or attribute value Parse accepts, in bytes.
const MaxText = 64 << 20

// Error is a problem at a line of a named comps document.
type Error struct {
	File      string // the name the caller gave Parse
	Line      int    // 1-based line the problem is on; 0 when unknown
	Kind      string // "group", "category", "environment" or "langpacks"; "" outside them
	ID        string // the unit's id, "" when not (yet) known
	FirstLine int    // for ErrDuplicate: line of the earlier unit with the same id
	Problem   string // what is wrong
	Err       error  // ErrSyntax, ErrInvalid, ErrDuplicate, ErrTooLarge or the reader's error
}

func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ": line " + strconv.Itoa(e.Line)
	}
	switch {
	case e.ID != "":
		s += fmt.Sprintf(": %s %q", e.Kind, e.ID)
	case e.Kind != "":
		s += ": " + e.Kind
	}
	return s + ": " + e.Problem
}

// Unwrap returns the sentinel or the reader's error.
func (e *Error) Unwrap() error { return e.Err }
