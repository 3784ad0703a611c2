package rpmfile

import (
	"errors"
	"fmt"
)

// Sentinels an *Error wraps; test with errors.Is.
var (
	// ErrNotRPM: the input does not start with an rpm lead.
	ErrNotRPM = errors.New("not an RPM file")
	// ErrTruncated: the input ends inside the lead or a header.
	ErrTruncated = errors.New("truncated")
	// ErrCorrupt: a header's structure or a tag's data is invalid.
	ErrCorrupt = errors.New("corrupt rpm header")
)

// Section names the part of the file an error is in.
type Section string

// The parts of an .rpm file Read looks at.
const (
	SectionLead      Section = "lead"
	SectionSignature Section = "signature header"
	SectionHeader    Section = "header"
	SectionPayload   Section = "payload" // only ReadPackage reads it
)

// Error is a problem at a place in an .rpm file.
type Error struct {
	Section Section
	Offset  int64  // byte offset in the file where the faulty bytes are
	Tag     uint32 // tag number, 0 when the problem is not in one tag
	Msg     string // what is wrong
	Err     error  // ErrNotRPM, ErrTruncated, ErrCorrupt or the reader's error
}

// Error says where and what: "rpm header: tag 1000 (name) at offset 0x1234: ...".
func (e *Error) Error() string {
	where := "rpm " + string(e.Section)
	if e.Tag != 0 {
		where += fmt.Sprintf(": tag %d (%s)", e.Tag, tagLabel(e.Section, e.Tag))
	}
	return fmt.Sprintf("%s at offset %#x: %s", where, e.Offset, e.Msg)
}

// Unwrap returns the sentinel or the reader's error.
func (e *Error) Unwrap() error { return e.Err }

func corrupt(s Section, off int64, tag uint32, format string, args ...any) *Error {
	return &Error{Section: s, Offset: off, Tag: tag, Msg: fmt.Sprintf(format, args...), Err: ErrCorrupt}
}
