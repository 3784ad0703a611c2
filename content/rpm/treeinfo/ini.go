package treeinfo

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// iniFile is a parsed INI file: the dialect of Python's configparser as productmd
// uses it (case kept in keys, "=" or ":" between key and value, "#" and ";" comment
// lines, duplicate sections and keys refused), without continuation lines and
// "%" interpolation, which treeinfo files never use.
type iniFile struct {
	name     string
	sections []*section
	byName   map[string]*section
}

type section struct {
	name  string
	line  int
	keys  []entry
	byKey map[string]int
}

type entry struct {
	key, value string
	line       int
}

func (f *iniFile) section(name string) *section { return f.byName[name] }

// get returns the entry for key; ok is false when s is nil or lacks the key.
func (s *section) get(key string) (e entry, ok bool) {
	if s == nil {
		return entry{}, false
	}
	i, ok := s.byKey[key]
	if !ok {
		return entry{}, false
	}
	return s.keys[i], true
}

func parseINI(name string, data []byte) (*iniFile, error) {
	f := &iniFile{name: name, byName: map[string]*section{}}
	bad := func(line int, format string, args ...any) error {
		return &Error{File: name, Line: line, Kind: ErrSyntax, Msg: fmt.Sprintf(format, args...)}
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return nil, bad(bytes.Count(data[:i], []byte("\n"))+1, "contains a NUL byte")
	}
	var cur *section
	keyIndent := -1 // indentation of the last key line, for spotting continuations
	// Lines end as Python's universal newlines end them: "\n", "\r\n" or "\r".
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	for i, raw := range strings.Split(text, "\n") {
		n := i + 1
		if !utf8.ValidString(raw) {
			return nil, bad(n, "is not valid UTF-8")
		}
		// Whitespace is what Python's str.strip() takes (unicode.IsSpace), as the writer's
		// check of what it can write back.
		line := strings.TrimRightFunc(raw, unicode.IsSpace)
		trimmed := strings.TrimLeftFunc(line, unicode.IsSpace)
		indent := len(line) - len(trimmed)
		switch {
		case trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';':
			continue
		case keyIndent >= 0 && indent > keyIndent:
			return nil, bad(n, "indented line continues a value; multi-line values are not supported")
		case trimmed[0] == '[':
			if !strings.HasSuffix(trimmed, "]") || len(trimmed) < 3 {
				return nil, bad(n, "malformed section header %q", trimmed)
			}
			sec := trimmed[1 : len(trimmed)-1]
			if prev, dup := f.byName[sec]; dup {
				return nil, bad(n, "section [%s] repeats the one on line %d", sec, prev.line)
			}
			cur = &section{name: sec, line: n, byKey: map[string]int{}}
			f.sections = append(f.sections, cur)
			f.byName[sec] = cur
			keyIndent = -1
			continue
		case cur == nil:
			return nil, bad(n, "%q comes before any [section]; the file is not INI", trimmed)
		}
		d := strings.IndexAny(trimmed, "=:")
		if d < 0 {
			return nil, &Error{File: name, Line: n, Section: cur.name, Kind: ErrSyntax,
				Msg: fmt.Sprintf("%q is not a key = value line", trimmed)}
		}
		key := strings.TrimRightFunc(trimmed[:d], unicode.IsSpace)
		value := strings.TrimSpace(trimmed[d+1:])
		if key == "" {
			return nil, &Error{File: name, Line: n, Section: cur.name, Kind: ErrSyntax, Msg: "empty key"}
		}
		if prev, dup := cur.byKey[key]; dup {
			return nil, &Error{File: name, Line: n, Section: cur.name, Key: key, Kind: ErrSyntax,
				Msg: fmt.Sprintf("key repeats the one on line %d", cur.keys[prev].line)}
		}
		cur.byKey[key] = len(cur.keys)
		cur.keys = append(cur.keys, entry{key: key, value: value, line: n})
		keyIndent = indent
	}
	return f, nil
}
