package treeinfo

import (
	"errors"
	"strconv"
)

// Kinds of problem; every *Error unwraps to one of them.
var (
	// ErrSyntax: the file is not INI.
	ErrSyntax = errors.New("invalid INI")
	// ErrInvalid: a section or value is missing or malformed.
	ErrInvalid = errors.New("invalid treeinfo")
	// ErrUnsafePath: a path is absolute, escapes the tree, or is otherwise unusable.
	ErrUnsafePath = errors.New("unsafe path")
	// ErrUnsupported: a format version this package does not read.
	ErrUnsupported = errors.New("unsupported treeinfo")
	// ErrTooLarge: the file exceeds MaxSize.
	ErrTooLarge = errors.New("treeinfo too large")
	// ErrHTML: the "file" is an HTML page, as some servers answer instead of a 404;
	// Pulp treats it as no treeinfo at all.
	ErrHTML = errors.New("treeinfo is an HTML page")
)

// Error is a problem in a .treeinfo file.
type Error struct {
	File    string // the file's name, as the caller gave it
	Line    int    // 1-based; 0 when the problem is not on one line
	Section string // without brackets; "" when none
	Key     string // "" when none
	Kind    error
	Msg     string
}

func (e *Error) Error() string {
	s := e.File
	if s == "" {
		s = ".treeinfo"
	}
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	s += ": "
	if e.Section != "" {
		s += "[" + e.Section + "] "
	}
	if e.Key != "" {
		s += e.Key + ": "
	}
	return s + e.Msg
}

// Unwrap returns the kind, so errors.Is(err, ErrUnsafePath) works.
func (e *Error) Unwrap() error { return e.Kind }
