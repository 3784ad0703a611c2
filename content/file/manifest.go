package file

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"pith/content"
)

// Entry is one line of a PULP_MANIFEST.
type Entry struct {
	RelativePath string
	Digest       string // sha256, lower-case hex
	Size         int64
	Line         int
}

// ParseManifest streams a PULP_MANIFEST ("relative_path,sha256,size" per line, CSV
// quoting allowed) and calls fn for each entry. Blank lines are skipped. The first bad
// line stops the parse with an error naming the line and what is wrong.
func ParseManifest(r io.Reader, fn func(Entry) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
			}
			return err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) != 3 {
			return fmt.Errorf("line %d: %d fields, want 3 (relative_path,sha256,size)", line, len(rec))
		}
		e := Entry{RelativePath: rec[0], Digest: strings.ToLower(strings.TrimSpace(rec[1])), Line: line}
		if _, err := content.CleanRelativePath(e.RelativePath); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if !isSHA256(e.Digest) {
			return fmt.Errorf("line %d: %s: digest %q is not a sha256 (64 hex digits)", line, e.RelativePath, rec[1])
		}
		size, err := strconv.ParseInt(strings.TrimSpace(rec[2]), 10, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("line %d: %s: size %q is not a non-negative integer", line, e.RelativePath, rec[2])
		}
		e.Size = size
		if prev, dup := seen[e.RelativePath]; dup {
			return fmt.Errorf("line %d: %s is listed twice (first on line %d)", line, e.RelativePath, prev)
		}
		seen[e.RelativePath] = line
		if err := fn(e); err != nil {
			return err
		}
	}
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// WriteManifest writes entries in PULP_MANIFEST format, in the order given.
func WriteManifest(w io.Writer, entries []Entry) error {
	cw := csv.NewWriter(w)
	for _, e := range entries {
		if err := cw.Write([]string{e.RelativePath, e.Digest, strconv.FormatInt(e.Size, 10)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
