package collection

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
)

// pyJSON writes v as Python's json.dumps(v, indent=True) does, which is how
// ansible-galaxy writes MANIFEST.json and FILES.json: one space of indent per level,
// ", " never (items end a line), ": " after keys, non-ASCII and control characters
// escaped as \uXXXX, "[]" and "{}" for empty containers, no final newline.
func pyJSON(v any) []byte {
	var b bytes.Buffer
	writePyJSON(&b, v, 0)
	return b.Bytes()
}

func writePyJSON(b *bytes.Buffer, v any, level int) {
	newline := func(l int) {
		b.WriteByte('\n')
		for range l {
			b.WriteByte(' ')
		}
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case json.Number:
		b.WriteString(string(x))
	case string:
		writePyString(b, x)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(level + 1)
			writePyJSON(b, e, level+1)
		}
		newline(level)
		b.WriteByte(']')
	case *omap:
		if len(x.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(level + 1)
			writePyString(b, k)
			b.WriteString(": ")
			writePyJSON(b, x.vals[k], level+1)
		}
		newline(level)
		b.WriteByte('}')
	default:
		panic(fmt.Sprintf("pyJSON: unexpected %T", v)) // only the types above are built
	}
}

// PyString is s as Python's json.dumps writes a string (ensure_ascii): what
// pulp_ansible hashes its namespace metadata over, beside the collection's files.
func PyString(s string) string {
	var b bytes.Buffer
	writePyString(&b, s)
	return b.String()
}

// writePyString is json's py_encode_basestring_ascii: everything outside space..~ is
// escaped, with the short forms for \b \f \n \r \t, and astral characters as a
// surrogate pair.
func writePyString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	u := func(r rune) {
		b.WriteString(`\u`)
		b.WriteByte(hex[r>>12&0xf])
		b.WriteByte(hex[r>>8&0xf])
		b.WriteByte(hex[r>>4&0xf])
		b.WriteByte(hex[r&0xf])
	}
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r >= ' ' && r <= '~':
			b.WriteByte(byte(r))
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			u(r1)
			u(r2)
		default:
			u(r)
		}
	}
	b.WriteByte('"')
}
