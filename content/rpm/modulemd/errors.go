package modulemd

import (
	"errors"
	"strconv"
)

// Kinds of problem; every *Error unwraps to one of them.
var (
	// ErrSyntax: the text is not YAML (or not the YAML subset modules.yaml uses).
	ErrSyntax = errors.New("invalid YAML")
	// ErrInvalid: the YAML does not describe a valid document.
	ErrInvalid = errors.New("invalid document")
	// ErrUnsupported: a document version this package does not read.
	ErrUnsupported = errors.New("unsupported document")
	// ErrTooLarge: a document exceeds MaxDocumentSize.
	ErrTooLarge = errors.New("document too large")
)

// Error is a problem in one document of a modules.yaml file.
type Error struct {
	File  string // the file's name, as the caller gave it
	Line  int    // 1-based line in File; 0 when unknown
	Field string // dotted path of the field at fault ("data.stream"), or ""
	Kind  error  // ErrSyntax, ErrInvalid, ErrUnsupported or ErrTooLarge
	Msg   string // what is wrong
	Err   error  // the underlying error (a read error, a YAML parser error), or nil
}

func (e *Error) Error() string {
	s := e.File
	if s == "" {
		s = "modules.yaml"
	}
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	s += ": "
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Msg
}

// Unwrap returns the kind and the underlying error, so errors.Is works with both.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}
