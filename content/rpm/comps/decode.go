package comps

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"pith/content/rpm/internal/xmltext"
	"strings"
)

// xmlNS is the namespace encoding/xml gives the xml: prefix (as in xml:lang).
const xmlNS = "http://www.w3.org/XML/1998/namespace"

// parser reads one document. This file is its generic half: tokens with the line they
// start on, text and attributes within their bounds, errors that say where.
type parser struct {
	d    *xml.Decoder
	lim  *xmltext.RunLimiter
	file string
	max  int
	line int            // line where the token last read starts
	kind string         // kind of the unit being read
	id   string         // its id, once read
	seen map[string]int // kind+"\x00"+id -> line of the unit
}

// token reads the next token, noting the line it starts on and turning decoder errors
// into *Error. It returns io.EOF as it is.
func (p *parser) token() (xml.Token, error) {
	p.line, _ = p.d.InputPos()
	tok, err := p.d.Token()
	if err == nil || err == io.EOF {
		return tok, err
	}
	var se *xml.SyntaxError
	switch {
	case errors.Is(err, xmltext.ErrRun):
		return nil, p.fail(ErrTooLarge, "text longer than %d bytes", p.max)
	case errors.As(err, &se):
		p.line = se.Line
		return nil, p.fail(ErrSyntax, "%s", se.Msg)
	case p.lim.Err != nil && errors.Is(err, p.lim.Err):
		e := p.fail(err, "read: %v", err)
		return nil, e
	}
	return nil, p.fail(ErrSyntax, "%s", strings.TrimPrefix(err.Error(), "xml: "))
}

func (p *parser) fail(kind error, format string, args ...any) *Error {
	return &Error{File: p.file, Line: p.line, Kind: p.kind, ID: p.id,
		Problem: fmt.Sprintf(format, args...), Err: kind}
}

// next reads the next token inside an element, where the end of input is an error.
func (p *parser) next() (xml.Token, error) {
	tok, err := p.token()
	if err == io.EOF {
		return nil, p.fail(ErrSyntax, "unexpected end of document")
	}
	return tok, err
}

// skip consumes the rest of the element whose start tag was just read.
func (p *parser) skip() error {
	for depth := 1; depth > 0; {
		tok, err := p.next()
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
	}
	return nil
}

// text reads the character data of the element whose start tag was just read, up to
// its end tag, text inside child elements included, and trims the XML white space
// around it.
func (p *parser) text() (string, error) {
	var b []byte
	for depth := 1; ; {
		tok, err := p.next()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if len(b)+len(t) > p.max {
				return "", p.fail(ErrTooLarge, "text longer than %d bytes", p.max)
			}
			b = append(b, t...)
		case xml.StartElement:
			depth++
		case xml.EndElement:
			if depth--; depth == 0 {
				return strings.Trim(string(b), " \t\r\n"), nil
			}
		}
	}
}

// attr returns the value of attribute local in namespace space and whether it is there.
func (p *parser) attr(se xml.StartElement, space, local string) (string, bool, error) {
	for _, a := range se.Attr {
		if a.Name.Local == local && (a.Name.Space == space || space == xmlNS && a.Name.Space == "xml") {
			if len(a.Value) > p.max {
				return "", false, p.fail(ErrTooLarge, "attribute %s longer than %d bytes", local, p.max)
			}
			return a.Value, true, nil
		}
	}
	return "", false, nil
}

// trailer reads what follows the root element: only comments, processing instructions
// and white space may.
func (p *parser) trailer() error {
	for {
		tok, err := p.token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return p.fail(ErrSyntax, "element <%s> after </comps>", t.Name.Local)
		case xml.CharData:
			if len(strings.TrimSpace(string(t))) > 0 {
				return p.fail(ErrSyntax, "text after </comps>")
			}
		}
	}
}
