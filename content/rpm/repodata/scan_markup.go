package repodata

// The scanner's markup: text, tags, comments, CDATA, processing instructions, DOCTYPE.

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

func (t *scanner) scanText() (status, error) {
	b := t.buf[t.pos:t.end]
	i := bytes.IndexByte(b, '<')
	if i < 0 {
		if t.rerr == nil {
			return stShort, nil
		}
		i = len(b)
	}
	raw := b[:i]
	if j := bytes.Index(raw, []byte("]]>")); j >= 0 {
		return 0, t.synErr(t.pos+j, `"]]>" in text outside a CDATA section`)
	}
	if len(t.nameEnds) == 0 {
		for j, c := range raw {
			if !isSpace(c) {
				return 0, t.synErr(t.pos+j, "text outside the root element")
			}
		}
		t.pos += i
		return stSkip, nil
	}
	t.scratch = t.scratch[:0]
	out, _, err := t.decode(raw, modeText, t.pos)
	if err != nil {
		return 0, err
	}
	t.text = out
	t.kind = tokText
	t.pos += i
	return stToken, nil
}

// hasPrefixAt reports whether b[p:] starts with s: 1 yes, 0 no, -1 not enough data.
func hasPrefixAt(b []byte, p int, s string) int {
	n := min(len(b)-p, len(s))
	if string(b[p:p+n]) != s[:n] {
		return 0
	}
	if n < len(s) {
		return -1
	}
	return 1
}

func (t *scanner) scanMarkup() (status, error) {
	b := t.buf[:t.end]
	p := t.pos
	if p+1 >= len(b) {
		return stShort, nil
	}
	switch b[p+1] {
	case '/':
		return t.scanEndTag()
	case '?':
		return t.scanPI()
	case '!':
		short := false
		for i, s := range [...]string{"<!--", "<![CDATA[", "<!DOCTYPE"} {
			switch hasPrefixAt(b, p, s) {
			case 1:
				switch i {
				case 0:
					return t.scanComment()
				case 1:
					return t.scanCDATA()
				}
				return t.scanDoctype()
			case -1:
				short = true
			}
		}
		if short {
			return stShort, nil
		}
		return 0, t.synErr(p, "unexpected \"<!\"")
	}
	return t.scanStartTag()
}

func (t *scanner) scanName(b []byte, p int) (int, status, error) {
	if p >= len(b) {
		return p, stShort, nil
	}
	if nameStart[b[p]] == 0 {
		return p, 0, t.synErr(p, "invalid character %q where a name should start", b[p])
	}
	s := p
	var hi byte
	for p < len(b) && nameChar[b[p]] != 0 {
		hi |= b[p]
		p++
	}
	if p >= len(b) {
		return p, stShort, nil
	}
	if hi >= utf8.RuneSelf && !utf8.Valid(b[s:p]) {
		return p, 0, t.synErr(s, "invalid UTF-8 in a name")
	}
	// Namespaces in XML: at most one colon, between a prefix and a local part.
	if i := bytes.IndexByte(b[s:p], ':'); i >= 0 && (i == 0 || s+i == p-1 || bytes.IndexByte(b[s+i+1:p], ':') >= 0) {
		return p, 0, t.synErr(s, "invalid qualified name %q", b[s:p])
	}
	return p, stToken, nil
}

func (t *scanner) skipSpace(b []byte, p int) int {
	for p < len(b) && isSpace(b[p]) {
		p++
	}
	return p
}

func (t *scanner) scanStartTag() (status, error) {
	b := t.buf[:t.end]
	p := t.pos + 1
	if t.done {
		return 0, t.synErr(t.pos, "element after the end of the root element")
	}
	ns := p
	p, st, err := t.scanName(b, p)
	if st != stToken || err != nil {
		return st, err
	}
	name := b[ns:p]
	t.attrs = t.attrs[:0]
	t.scratch = t.scratch[:0]
	empty := false
	for {
		sp := p
		p = t.skipSpace(b, p)
		if p >= len(b) {
			return stShort, nil
		}
		c := b[p]
		if c == '>' {
			p++
			break
		}
		if c == '/' {
			if p+1 >= len(b) {
				return stShort, nil
			}
			if b[p+1] != '>' {
				return 0, t.synErr(p, "expected \"/>\" in <%s>", name)
			}
			p += 2
			empty = true
			break
		}
		if p == sp {
			return 0, t.synErr(p, "expected a space before an attribute in <%s>", name)
		}
		as := p
		p, st, err = t.scanName(b, p)
		if st != stToken || err != nil {
			return st, err
		}
		a := xmlAttr{name: b[as:p]}
		p = t.skipSpace(b, p)
		if p >= len(b) {
			return stShort, nil
		}
		if b[p] != '=' {
			return 0, t.synErr(p, "attribute %s of <%s> has no value", a.name, name)
		}
		p = t.skipSpace(b, p+1)
		if p >= len(b) {
			return stShort, nil
		}
		q := b[p]
		if q != '"' && q != '\'' {
			return 0, t.synErr(p, "attribute %s of <%s>: value not quoted", a.name, name)
		}
		p++
		i := bytes.IndexByte(b[p:], q)
		if i < 0 {
			return stShort, nil
		}
		vs := len(t.scratch)
		v, copied, err := t.decode(b[p:p+i], modeAttr, p)
		if err != nil {
			return 0, err
		}
		if copied {
			a.vs, a.ve, a.inScratch = vs, len(t.scratch), true
		} else {
			a.value = v
		}
		p += i + 1
		if len(t.attrs) == maxAttrs {
			return 0, t.errAt(as, &problem{ErrTooLarge, fmt.Sprintf("more than %d attributes in <%s>", maxAttrs, name)})
		}
		t.attrs = append(t.attrs, a)
	}
	for j := range t.attrs {
		if a := &t.attrs[j]; a.inScratch {
			a.value = t.scratch[a.vs:a.ve]
		}
	}
	if err := t.checkDuplicates(name); err != nil {
		return 0, err
	}
	if !empty && len(t.nameEnds) == maxDepth {
		return 0, t.errAt(t.pos, &problem{ErrTooLarge, fmt.Sprintf("elements nested deeper than %d", maxDepth)})
	}
	if len(t.nameEnds) == 0 {
		t.sawRoot = true
	}
	if empty {
		if len(t.nameEnds) == 0 {
			t.done = true
		}
	} else {
		t.names = append(t.names, name...)
		t.nameEnds = append(t.nameEnds, len(t.names))
	}
	for j := range t.attrs {
		an := t.attrs[j].name
		if !bytes.HasPrefix(an, []byte("xmlns")) {
			continue
		}
		var prefix string
		if len(an) > 5 {
			if an[5] != ':' {
				continue
			}
			prefix = string(an[6:])
		}
		d := len(t.nameEnds)
		if empty {
			d++
		}
		if len(t.ns) == maxBindings {
			return 0, t.errAt(t.pos, &problem{ErrTooLarge, fmt.Sprintf("more than %d namespace declarations in scope", maxBindings)})
		}
		t.ns = append(t.ns, nsBinding{prefix: prefix, uri: string(t.attrs[j].value), depth: d})
	}
	t.name = name
	t.empty = empty
	t.kind = tokStart
	t.pos = p
	return stToken, nil
}

// checkDuplicates refuses a start tag with an attribute given twice.
func (t *scanner) checkDuplicates(name []byte) error {
	if len(t.attrs) <= 8 {
		for i := 1; i < len(t.attrs); i++ {
			for j := range i {
				if bytes.Equal(t.attrs[i].name, t.attrs[j].name) {
					return t.synErr(t.pos, "duplicate attribute %s in <%s>", t.attrs[i].name, name)
				}
			}
		}
		return nil
	}
	seen := make(map[string]bool, len(t.attrs))
	for _, a := range t.attrs {
		if seen[string(a.name)] {
			return t.synErr(t.pos, "duplicate attribute %s in <%s>", a.name, name)
		}
		seen[string(a.name)] = true
	}
	return nil
}

func (t *scanner) scanEndTag() (status, error) {
	b := t.buf[:t.end]
	p := t.pos + 2
	ns := p
	p, st, err := t.scanName(b, p)
	if st != stToken || err != nil {
		return st, err
	}
	name := b[ns:p]
	p = t.skipSpace(b, p)
	if p >= len(b) {
		return stShort, nil
	}
	if b[p] != '>' {
		return 0, t.synErr(p, "expected \">\" in </%s>", name)
	}
	p++
	n := len(t.nameEnds)
	if n == 0 {
		return 0, t.synErr(t.pos, "unexpected end tag </%s>", name)
	}
	if open := t.openName(n - 1); !bytes.Equal(open, name) {
		return 0, t.synErr(t.pos, "end tag </%s> does not match <%s>", name, open)
	}
	t.names = t.names[:len(t.names)-len(name)]
	t.nameEnds = t.nameEnds[:n-1]
	if n == 1 {
		t.done = true
	}
	t.name = name
	t.kind = tokEnd
	t.pos = p
	return stToken, nil
}

func (t *scanner) scanComment() (status, error) {
	b := t.buf[:t.end]
	s := t.pos + 4
	i := bytes.Index(b[s:], []byte("--"))
	if i < 0 || s+i+2 >= len(b) {
		return stShort, nil
	}
	if b[s+i+2] != '>' {
		return 0, t.synErr(s+i, "\"--\" inside a comment")
	}
	t.pos = s + i + 3
	return stSkip, nil
}

func (t *scanner) scanCDATA() (status, error) {
	b := t.buf[:t.end]
	s := t.pos + len("<![CDATA[")
	i := bytes.Index(b[s:], []byte("]]>"))
	if i < 0 {
		return stShort, nil
	}
	if len(t.nameEnds) == 0 {
		return 0, t.synErr(t.pos, "CDATA outside the root element")
	}
	t.scratch = t.scratch[:0]
	out, _, err := t.decode(b[s:s+i], modeCDATA, s)
	if err != nil {
		return 0, err
	}
	t.text = out
	t.kind = tokText
	t.pos = s + i + 3
	return stToken, nil
}

func (t *scanner) scanPI() (status, error) {
	b := t.buf[:t.end]
	p := t.pos + 2
	ns := p
	p, st, err := t.scanName(b, p)
	if st != stToken || err != nil {
		return st, err
	}
	target := b[ns:p]
	i := bytes.Index(b[p:], []byte("?>"))
	if i < 0 {
		return stShort, nil
	}
	body := b[p : p+i]
	if len(body) > 0 && !isSpace(body[0]) {
		return 0, t.synErr(p, "processing instruction <?%s...: expected a space after the target", target)
	}
	if bytes.EqualFold(target, []byte("xml")) {
		if string(target) != "xml" || t.discarded+int64(t.pos) != int64(t.bom) {
			return 0, t.synErr(t.pos, "XML declaration not at the start of the file")
		}
		if v := declAttr(body, "version"); v != nil && string(v) != "1.0" {
			return 0, t.errAt(t.pos, invalidErr(fmt.Sprintf("unsupported XML version %q", v)))
		}
		if enc := declAttr(body, "encoding"); enc != nil && !bytes.EqualFold(enc, []byte("utf-8")) &&
			!bytes.EqualFold(enc, []byte("utf8")) && !bytes.EqualFold(enc, []byte("us-ascii")) {
			return 0, t.errAt(t.pos, invalidErr(fmt.Sprintf("unsupported encoding %q (only UTF-8)", enc)))
		}
	}
	t.pos = p + i + 2
	return stSkip, nil
}

// declAttr returns the value of name="..." in an XML declaration, or nil.
func declAttr(body []byte, name string) []byte {
	i := bytes.Index(body, []byte(name))
	if i < 0 {
		return nil
	}
	rest := bytes.TrimLeft(body[i+len(name):], " \t\r\n")
	if len(rest) == 0 || rest[0] != '=' {
		return nil
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) == 0 || (rest[0] != '"' && rest[0] != '\'') {
		return nil
	}
	j := bytes.IndexByte(rest[1:], rest[0])
	if j < 0 {
		return nil
	}
	return rest[1 : 1+j]
}

func (t *scanner) scanDoctype() (status, error) {
	b := t.buf[:t.end]
	if t.sawRoot {
		return 0, t.synErr(t.pos, "DOCTYPE after the root element started")
	}
	s := t.pos + len("<!DOCTYPE")
	if s >= len(b) {
		return stShort, nil
	}
	if !isSpace(b[s]) {
		return 0, t.synErr(s, "malformed DOCTYPE")
	}
	for p := s; p < len(b); p++ {
		switch c := b[p]; c {
		case '"', '\'':
			i := bytes.IndexByte(b[p+1:], c)
			if i < 0 {
				return stShort, nil
			}
			p += i + 1
		case '[':
			return 0, t.errAt(p, invalidErr("DOCTYPE with an internal subset is not supported"))
		case '<':
			return 0, t.synErr(p, "malformed DOCTYPE")
		case '>':
			t.pos = p + 1
			return stSkip, nil
		}
	}
	return stShort, nil
}
