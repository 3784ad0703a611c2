package updateinfo

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"pith/content/rpm/internal/xmltext"
	"strings"
)

// parser reads one document. This file is its generic half: tokens with the line they
// start on, text and attributes within their bounds, errors that say where.
type parser struct {
	d    *xml.Decoder
	lim  *xmltext.RunLimiter
	file string
	max  int
	line int            // line where the token last read starts
	id   string         // id of the update being read, once its <id> is read
	seen map[string]int // update id -> line of its <update>
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
		return nil, &Error{File: p.file, Line: p.line, ID: p.id, Problem: "read: " + err.Error(), Err: err}
	}
	return nil, p.fail(ErrSyntax, "%s", strings.TrimPrefix(err.Error(), "xml: "))
}

func (p *parser) fail(kind error, format string, args ...any) *Error {
	return &Error{File: p.file, Line: p.line, ID: p.id, Problem: fmt.Sprintf(format, args...), Err: kind}
}

// skip consumes the rest of the element whose start tag was just read.
func (p *parser) skip() error {
	for depth := 1; depth > 0; {
		tok, err := p.token()
		if err != nil {
			return p.eof(err)
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

// eof turns an io.EOF inside an element into a syntax error (the decoder reports one
// itself; this is belt and braces).
func (p *parser) eof(err error) error {
	if err == io.EOF {
		return p.fail(ErrSyntax, "unexpected end of document")
	}
	return err
}

// text reads the character data of the element whose start tag was just read, up to
// its end tag. Text inside child elements counts, as createrepo_c counts it.
func (p *parser) text() (string, error) {
	var b []byte
	for depth := 1; ; {
		tok, err := p.token()
		if err != nil {
			return "", p.eof(err)
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
				return string(b), nil
			}
		}
	}
}

// attr returns the value of the unqualified attribute name, "" when it is absent.
func (p *parser) attr(se xml.StartElement, name string) (string, error) {
	for _, a := range se.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			if len(a.Value) > p.max {
				return "", p.fail(ErrTooLarge, "attribute %s longer than %d bytes", name, p.max)
			}
			return a.Value, nil
		}
	}
	return "", nil
}

// attrs reads several attributes into the given strings.
func (p *parser) attrs(se xml.StartElement, names []string, dst ...*string) error {
	for i, n := range names {
		v, err := p.attr(se, n)
		if err != nil {
			return err
		}
		*dst[i] = v
	}
	return nil
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
			return p.fail(ErrSyntax, "element <%s> after </updates>", t.Name.Local)
		case xml.CharData:
			if len(strings.TrimSpace(string(t))) > 0 {
				return p.fail(ErrSyntax, "text after </updates>")
			}
		}
	}
}
