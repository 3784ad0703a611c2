package updateinfo

import (
	"encoding/xml"
	"fmt"
	"io"
	"pith/content/rpm/internal/xmltext"
	"strconv"
	"strings"
)

// Parse reads an updateinfo document from r and calls fn with each update, in document
// order, as soon as its </update> is read; fn may keep the Update. name is the file name
// used in errors. Parse stops at the first problem, returning an *Error, or at the first
// error fn returns, returning that error as it is.
func Parse(r io.Reader, name string, fn func(*Update) error) error {
	return parse(r, name, MaxText, fn)
}

// parse is Parse with the text limit as a parameter, so tests need not build 64 MiB.
func parse(r io.Reader, name string, max int, fn func(*Update) error) error {
	lim := &xmltext.RunLimiter{R: r, Max: max + 64<<10} // slack for the tag before the text
	d := xml.NewDecoder(lim)
	d.CharsetReader = xmltext.CharsetReader
	p := &parser{d: d, lim: lim, file: name, max: max, seen: map[string]int{}}
	for {
		tok, err := p.token()
		if err == io.EOF {
			return p.fail(ErrSyntax, "no <updates> element")
		}
		if err != nil {
			return err
		}
		if t, ok := tok.(xml.StartElement); ok {
			if t.Name.Local != "updates" {
				return p.fail(ErrInvalid, "root element is <%s>, not <updates>", t.Name.Local)
			}
			if err := p.updates(fn); err != nil {
				return err
			}
			return p.trailer()
		}
	}
}

func (p *parser) updates(fn func(*Update) error) error {
	for {
		tok, err := p.token()
		if err != nil {
			return p.eof(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "update" {
				if err := p.skip(); err != nil {
					return err
				}
				continue
			}
			start := p.line
			u, err := p.update(t)
			if err != nil {
				return err
			}
			if first, ok := p.seen[u.ID]; ok {
				return &Error{File: p.file, Line: start, ID: u.ID, FirstLine: first, Err: ErrDuplicate,
					Problem: fmt.Sprintf("duplicate update id, first at line %d", first)}
			}
			p.seen[u.ID] = start
			if err := fn(u); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

func (p *parser) update(se xml.StartElement) (*Update, error) {
	start := p.line
	p.id = ""
	defer func() { p.id = "" }()
	u := &Update{Pkglist: []Collection{}, References: []Reference{}}
	err := p.attrs(se, []string{"from", "status", "type", "version"},
		&u.FromStr, &u.Status, &u.Type, &u.Version)
	if err != nil {
		return nil, err
	}
	for {
		tok, err := p.token()
		if err != nil {
			return nil, p.eof(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch name := t.Name.Local; name {
			case "id":
				if u.ID, err = p.text(); err == nil && strings.TrimSpace(u.ID) != "" {
					p.id = u.ID
				}
			case "issued", "updated":
				err = p.date(t, name, u)
			case "reboot_suggested":
				// createrepo_c: the element's presence means true, whatever it says.
				u.RebootSuggested = true
				err = p.skip()
			case "references":
				err = p.references(u)
			case "pkglist":
				err = p.pkglist(u)
			default:
				if dst := u.textField(name); dst != nil {
					*dst, err = p.text()
				} else {
					err = p.skip()
				}
			}
			if err != nil {
				return nil, err
			}
		case xml.EndElement:
			if strings.TrimSpace(u.ID) == "" {
				p.line, p.id = start, ""
				return nil, p.fail(ErrInvalid, "update without id")
			}
			return u, nil
		}
	}
}

// textField returns the field the text element name fills, nil for other elements.
func (u *Update) textField(name string) *string {
	switch name {
	case "title":
		return &u.Title
	case "rights":
		return &u.Rights
	case "release":
		return &u.Release
	case "pushcount":
		return &u.PushCount
	case "severity":
		return &u.Severity
	case "summary":
		return &u.Summary
	case "description":
		return &u.Description
	case "solution":
		return &u.Solution
	}
	return nil
}

func (p *parser) date(se xml.StartElement, name string, u *Update) error {
	v, err := p.attr(se, "date")
	if err != nil {
		return err
	}
	if v != "" {
		if _, err := ParseDate(v); err != nil {
			return p.fail(ErrInvalid, "%s date %q is not a date", name, v)
		}
	}
	if name == "issued" {
		u.IssuedDate = v
	} else {
		u.UpdatedDate = v
	}
	return p.skip()
}

func (p *parser) references(u *Update) error {
	for {
		tok, err := p.token()
		if err != nil {
			return p.eof(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "reference" {
				var r Reference
				err := p.attrs(t, []string{"href", "id", "title", "type"}, &r.Href, &r.ID, &r.Title, &r.Type)
				if err != nil {
					return err
				}
				u.References = append(u.References, r)
			}
			if err := p.skip(); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

func (p *parser) pkglist(u *Update) error {
	for {
		tok, err := p.token()
		if err != nil {
			return p.eof(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "collection" {
				if err := p.skip(); err != nil {
					return err
				}
				continue
			}
			c, err := p.collection(t)
			if err != nil {
				return err
			}
			u.Pkglist = append(u.Pkglist, c)
		case xml.EndElement:
			return nil
		}
	}
}

func (p *parser) collection(se xml.StartElement) (Collection, error) {
	c := Collection{Packages: []Package{}}
	var err error
	if c.ShortName, err = p.attr(se, "short"); err != nil {
		return c, err
	}
	for {
		tok, err := p.token()
		if err != nil {
			return c, p.eof(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "name":
				c.Name, err = p.text()
			case "module":
				c.Module, err = p.module(t)
			case "package":
				var pkg Package
				if pkg, err = p.pkg(t); err == nil {
					c.Packages = append(c.Packages, pkg)
				}
			default:
				err = p.skip()
			}
			if err != nil {
				return c, err
			}
		case xml.EndElement:
			return c, nil
		}
	}
}

func (p *parser) module(se xml.StartElement) (*Module, error) {
	m := &Module{}
	var version string
	err := p.attrs(se, []string{"name", "stream", "version", "context", "arch"},
		&m.Name, &m.Stream, &version, &m.Context, &m.Arch)
	if err != nil {
		return nil, err
	}
	if version != "" {
		if m.Version, err = strconv.ParseUint(version, 10, 64); err != nil {
			return nil, p.fail(ErrInvalid, "module version %q is not a number", version)
		}
	}
	return m, p.skip()
}

func (p *parser) pkg(se xml.StartElement) (Package, error) {
	var k Package
	err := p.attrs(se, []string{"name", "version", "release", "epoch", "arch", "src"},
		&k.Name, &k.Version, &k.Release, &k.Epoch, &k.Arch, &k.Src)
	if err != nil {
		return k, err
	}
	if k.Name == "" {
		return k, p.fail(ErrInvalid, "pkglist package without name")
	}
	if k.Epoch == "" {
		k.Epoch = "0" // as Pulp stores it
	}
	for {
		tok, err := p.token()
		if err != nil {
			return k, p.eof(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "filename":
				k.Filename, err = p.text()
			case "sum":
				if k.SumType, err = p.attr(t, "type"); err == nil {
					k.Sum, err = p.text()
				}
			case "reboot_suggested":
				k.RebootSuggested = true
				err = p.skip()
			case "restart_suggested":
				k.RestartSuggested = true
				err = p.skip()
			case "relogin_suggested":
				k.ReloginSuggested = true
				err = p.skip()
			default:
				err = p.skip()
			}
			if err != nil {
				return k, err
			}
		case xml.EndElement:
			return k, nil
		}
	}
}
