package repodata

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// scanner is a streaming tokenizer for the XML subset repodata uses. encoding/xml's
// Decoder allocates for every token and runs at a few tens of MB/s; this one hands out
// slices of its read buffer and decodes in place only when a value holds an entity or a
// carriage return.
//
// It enforces well-formedness: matching tags, one root element, quoted attributes,
// no duplicate attributes, valid UTF-8 and XML 1.0 characters, the five predefined
// entities and character references (any other entity is an error; DOCTYPE internal
// subsets are refused, so entity expansion cannot blow up), CDATA, comments and
// processing instructions. Line ends are normalized (CR LF and CR become LF) and
// attribute values are whitespace-normalized as the XML spec says. Namespaces are
// resolved on demand by prefix (resolve).
//
// Slices returned (name, attrs, text) are valid only until the next call.
type scanner struct {
	file  string
	r     io.Reader
	rerr  error // sticky error of r; io.EOF at the end
	buf   []byte
	pos   int // next byte to scan
	end   int // end of valid data in buf
	limit int // largest token (and buffer) accepted
	grow  int // smallest buffer size; tests make it tiny to cross buffer ends often

	discarded int64 // bytes dropped from the front of buf so far
	lines     int   // '\n' bytes before buf[linePos]
	linePos   int
	started   bool
	bom       int // length of a leading byte order mark

	// The current token.
	kind    tokKind
	tokPos  int
	name    []byte
	attrs   []xmlAttr
	empty   bool // the start tag was self-closing: no children, no end token follows
	text    []byte
	scratch []byte // decoded values of the current token
	content []byte // textContent's result

	names    []byte // names of the open elements, concatenated
	nameEnds []int
	ns       []nsBinding
	sawRoot  bool
	done     bool // the root element is closed
	err      error
}

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokStart
	tokEnd
	tokText
)

type status uint8

const (
	stToken status = iota // a token is ready
	stSkip                // markup consumed without a token (comment, PI, whitespace outside root)
	stShort               // more input is needed to finish the token
)

type xmlAttr struct {
	name  []byte
	value []byte
	// While the tag is scanned, a value decoded into scratch is kept as offsets, since
	// scratch may move as it grows.
	vs, ve    int
	inScratch bool
}

type nsBinding struct {
	prefix string
	uri    string
	depth  int // the binding ends when fewer elements than this are open
}

// Bounds on input. Repodata needs a depth of 6, 6 attributes and 2 namespaces; the
// bounds keep every step linear in the input.
const (
	maxToken    = 64 << 20 // a text node, tag or comment larger than this is refused
	maxDepth    = 256      // libxml2's default too
	maxAttrs    = 256
	maxBindings = 64
	minBufSize  = 64 << 10
)

// unbound is the namespace of an element whose prefix is not declared; it matches nothing.
const unbound = "\x00unbound"

func newScanner(r io.Reader, file string) *scanner {
	grow := minBufSize
	// An input in memory (a stored fragment, read once per package when rendered)
	// gets a buffer its size instead of 64 KiB: one byte more, so the first read
	// reaches its end.
	if l, ok := r.(interface{ Len() int }); ok && l.Len() < grow {
		grow = max(l.Len()+1, 512)
	}
	return &scanner{file: file, r: r, limit: maxToken, grow: grow}
}

// errAt returns a positioned error for a problem at buffer position pos.
func (t *scanner) errAt(pos int, err error) *Error {
	return &Error{File: t.file, Line: t.lineAt(pos), Offset: t.discarded + int64(pos), Err: err}
}

func (t *scanner) synErr(pos int, format string, args ...any) *Error {
	return t.errAt(pos, syntaxErr(fmt.Sprintf(format, args...)))
}

func (t *scanner) fail(err error) (tokKind, error) {
	t.err = err
	return tokEOF, err
}

// lineAt returns the 1-based line of buffer position pos. Calls with growing positions
// count each byte once.
func (t *scanner) lineAt(pos int) int {
	if pos > t.end {
		pos = t.end
	}
	if pos >= t.linePos {
		t.lines += bytes.Count(t.buf[t.linePos:pos], []byte{'\n'})
		t.linePos = pos
		return t.lines + 1
	}
	return t.lines + 1 - bytes.Count(t.buf[pos:t.linePos], []byte{'\n'})
}

// line returns the line where the current token starts.
func (t *scanner) line() int { return t.lineAt(t.tokPos) }

// more reads input, keeping the current token (from tokPos) in the buffer. It returns
// false when no byte could be added: at the end of input (err nil) or on a read error.
func (t *scanner) more() (bool, error) {
	if t.rerr != nil {
		return false, t.readErr()
	}
	if k := t.tokPos; k > 0 {
		if t.linePos < k {
			t.lines += bytes.Count(t.buf[t.linePos:k], []byte{'\n'})
			t.linePos = k
		}
		copy(t.buf, t.buf[k:t.end])
		t.discarded += int64(k)
		t.end -= k
		t.pos -= k
		t.linePos -= k
		t.tokPos = 0
	}
	if t.end == len(t.buf) {
		if len(t.buf) >= t.limit {
			return false, t.errAt(0, &problem{ErrTooLarge, "a single text node or tag is larger than " + sizeString(t.limit)})
		}
		n := min(max(2*len(t.buf), t.grow), t.limit)
		nb := make([]byte, n)
		copy(nb, t.buf[:t.end])
		t.buf = nb
	}
	start := t.end
	for zero := 0; t.end < len(t.buf); {
		n, err := t.r.Read(t.buf[t.end:])
		if n < 0 || n > len(t.buf)-t.end {
			t.rerr = errors.New("reader returned an invalid count")
			break
		}
		t.end += n
		if err != nil {
			t.rerr = err
			break
		}
		if n == 0 {
			if zero++; zero > 100 {
				t.rerr = io.ErrNoProgress
				break
			}
		}
	}
	if t.end > start {
		return true, nil
	}
	return false, t.readErr()
}

// readErr is nil at a clean end of input, else the read error, positioned.
func (t *scanner) readErr() error {
	if t.rerr == nil || t.rerr == io.EOF {
		return nil
	}
	return t.errAt(t.end, fmt.Errorf("read: %w", t.rerr))
}

// next scans the next token.
func (t *scanner) next() (tokKind, error) {
	if t.err != nil {
		return tokEOF, t.err
	}
	// Bindings declared on elements that are now closed go out of scope.
	for n := len(t.ns); n > 0 && t.ns[n-1].depth > len(t.nameEnds); n-- {
		t.ns = t.ns[:n-1]
	}
	t.empty = false
	if !t.started {
		if err := t.start(); err != nil {
			return t.fail(err)
		}
	}
	for {
		t.tokPos = t.pos
		if t.pos >= t.end {
			got, err := t.more()
			if err != nil {
				return t.fail(err)
			}
			if !got {
				return t.atEOF()
			}
			continue
		}
		var st status
		var err error
		text := t.buf[t.pos] != '<'
		if text {
			st, err = t.scanText()
		} else {
			st, err = t.scanMarkup()
		}
		if err != nil {
			return t.fail(err)
		}
		switch st {
		case stToken:
			return t.kind, nil
		case stShort:
			t.pos = t.tokPos
			got, err := t.more()
			if err != nil {
				return t.fail(err)
			}
			if !got && !text {
				return t.fail(t.eofErr(t.tokPos))
			}
		}
	}
}

// start reads the first bytes and skips a UTF-8 byte order mark.
func (t *scanner) start() error {
	t.started = true
	for t.end < 3 {
		got, err := t.more()
		if err != nil {
			return err
		}
		if !got {
			break
		}
	}
	if bytes.HasPrefix(t.buf[:t.end], []byte("\xef\xbb\xbf")) {
		t.pos, t.bom = 3, 3
	}
	return nil
}

func (t *scanner) atEOF() (tokKind, error) {
	if len(t.nameEnds) > 0 || !t.sawRoot {
		return t.fail(t.eofErr(t.end))
	}
	t.kind = tokEOF
	return tokEOF, nil
}

func (t *scanner) eofErr(pos int) error {
	if n := len(t.nameEnds); n > 0 {
		return t.synErr(pos, "unexpected end of file: <%s> not closed", t.openName(n-1))
	}
	if !t.sawRoot {
		return t.synErr(pos, "unexpected end of file: no root element")
	}
	return t.synErr(pos, "unexpected end of file")
}

func (t *scanner) openName(i int) []byte {
	s := 0
	if i > 0 {
		s = t.nameEnds[i-1]
	}
	return t.names[s:t.nameEnds[i]]
}

func sizeString(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// skip consumes the rest of the element whose start tag is the current token.
func (t *scanner) skip() error {
	if t.empty {
		return nil
	}
	d := len(t.nameEnds) - 1
	for {
		k, err := t.next()
		if err != nil {
			return err
		}
		if k == tokEnd && len(t.nameEnds) == d {
			return nil
		}
	}
}

// textContent consumes the element whose start tag is the current token and returns
// its text (child elements are skipped). The result is valid until the next call.
func (t *scanner) textContent() ([]byte, error) {
	t.content = t.content[:0]
	if t.empty {
		return t.content, nil
	}
	for {
		k, err := t.next()
		if err != nil {
			return nil, err
		}
		switch k {
		case tokText:
			if len(t.content)+len(t.text) > t.limit {
				return nil, t.errAt(t.tokPos, &problem{ErrTooLarge, "text of an element is larger than " + sizeString(t.limit)})
			}
			t.content = append(t.content, t.text...)
		case tokStart:
			if err := t.skip(); err != nil {
				return nil, err
			}
		case tokEnd:
			return t.content, nil
		}
	}
}

// resolve splits a qualified name and returns its namespace URI: the innermost binding
// of its prefix, "" for no prefix and no default namespace, the rpm namespace for an
// undeclared "rpm:" (lenient: some generators forget the declaration), else unbound.
func (t *scanner) resolve(qname []byte) (string, []byte) {
	var prefix, local []byte
	if i := bytes.IndexByte(qname, ':'); i >= 0 {
		prefix, local = qname[:i], qname[i+1:]
	} else {
		local = qname
	}
	for j := len(t.ns) - 1; j >= 0; j-- {
		if t.ns[j].prefix == string(prefix) {
			return t.ns[j].uri, local
		}
	}
	switch string(prefix) {
	case "":
		return "", local
	case "rpm":
		return nsRPM, local
	}
	return unbound, local
}

// attr returns the value of the current start tag's attribute with qualified name name.
func (t *scanner) attr(name string) ([]byte, bool) {
	for i := range t.attrs {
		if string(t.attrs[i].name) == name {
			return t.attrs[i].value, true
		}
	}
	return nil, false
}
