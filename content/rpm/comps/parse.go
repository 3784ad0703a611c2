package comps

import (
	"encoding/xml"
	"fmt"
	"io"
	"pith/content/rpm/internal/xmltext"
	"strconv"
)

// Parse reads a comps document from r; name is the file name used in errors. It returns
// the units in document order, each with its Digest set, or an *Error.
func Parse(r io.Reader, name string) (*Comps, error) {
	return parse(r, name, MaxText)
}

// parse is Parse with the text limit as a parameter, so tests need not build 64 MiB.
func parse(r io.Reader, name string, max int) (*Comps, error) {
	lim := &xmltext.RunLimiter{R: r, Max: max + 64<<10} // slack for the tag before the text
	d := xml.NewDecoder(lim)
	d.CharsetReader = xmltext.CharsetReader
	p := &parser{d: d, lim: lim, file: name, max: max, seen: map[string]int{}}
	for {
		tok, err := p.token()
		if err == io.EOF {
			return nil, p.fail(ErrSyntax, "no <comps> element")
		}
		if err != nil {
			return nil, err
		}
		if t, ok := tok.(xml.StartElement); ok {
			if t.Name.Local != "comps" {
				return nil, p.fail(ErrInvalid, "root element is <%s>, not <comps>", t.Name.Local)
			}
			c, err := p.comps()
			if err != nil {
				return nil, err
			}
			return c, p.trailer()
		}
	}
}

func (p *parser) comps() (*Comps, error) {
	c := &Comps{Groups: []Group{}, Categories: []Category{}, Environments: []Environment{}}
	matches := map[string]string{}
	for {
		tok, err := p.next()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			start := p.line
			switch t.Name.Local {
			case "group":
				var g Group
				if g, err = p.group(); err == nil {
					if err = p.unique("group", g.ID, start); err == nil {
						g.Digest = g.Sum()
						c.Groups = append(c.Groups, g)
					}
				}
			case "category":
				var cat Category
				if cat, err = p.category(); err == nil {
					if err = p.unique("category", cat.ID, start); err == nil {
						cat.Digest = cat.Sum()
						c.Categories = append(c.Categories, cat)
					}
				}
			case "environment":
				var e Environment
				if e, err = p.environment(); err == nil {
					if err = p.unique("environment", e.ID, start); err == nil {
						e.Digest = e.Sum()
						c.Environments = append(c.Environments, e)
					}
				}
			case "langpacks":
				err = p.langpacks(matches)
			default:
				err = p.skip()
			}
			if err != nil {
				return nil, err
			}
		case xml.EndElement:
			if len(matches) > 0 {
				c.Langpacks = &Langpacks{Matches: matches}
				c.Langpacks.Digest = c.Langpacks.Sum()
			}
			return c, nil
		}
	}
}

// unique records that a unit of kind with id starts at line, failing if one already did.
func (p *parser) unique(kind, id string, line int) error {
	key := kind + "\x00" + id
	if first, ok := p.seen[key]; ok {
		return &Error{File: p.file, Line: line, Kind: kind, ID: id, FirstLine: first, Err: ErrDuplicate,
			Problem: fmt.Sprintf("duplicate %s id, first at line %d", kind, first)}
	}
	p.seen[key] = line
	return nil
}

// begin notes that a unit of kind starts; the returned function checks, at its end tag,
// that it had an id, and forgets it.
func (p *parser) begin(kind string) (end func(id string) error) {
	start := p.line
	p.kind, p.id = kind, ""
	return func(id string) error {
		defer func() { p.kind, p.id = "", "" }()
		if id == "" {
			p.line, p.kind = start, ""
			return p.fail(ErrInvalid, "%s without id", kind)
		}
		return nil
	}
}

// common reads the children groups, categories and environments share: id, name,
// description, their translations and display_order. It reports whether it knew t.
func (p *parser) common(t xml.StartElement, id, name, desc *string, names, descs map[string]string,
	order **int) (bool, error) {
	var err error
	switch t.Name.Local {
	case "id":
		if *id, err = p.text(); err == nil {
			p.id = *id
		}
	case "name", "description":
		lang, ok, aerr := p.attr(t, xmlNS, "lang")
		if aerr != nil {
			return true, aerr
		}
		dst, byLang := name, names
		if t.Name.Local == "description" {
			dst, byLang = desc, descs
		}
		var v string
		if v, err = p.text(); err == nil {
			if ok {
				byLang[lang] = v
			} else {
				*dst = v
			}
		}
	case "display_order":
		var v string
		if v, err = p.text(); err == nil {
			*order, err = p.displayOrder(v)
		}
	default:
		return false, nil
	}
	return true, err
}

// displayOrder reads the integer a display_order starts with, as libcomps' sscanf("%d")
// does: no digits give 0.
func (p *parser) displayOrder(s string) (*int, error) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	n := 0
	if j > i {
		v, err := strconv.ParseInt(s[:j], 10, 32)
		if err != nil {
			return nil, p.fail(ErrInvalid, "display_order %q out of range", s)
		}
		n = int(v)
	}
	return &n, nil
}

// flag reads a boolean element: "true" or "false", anything else keeps the default.
func (p *parser) flag(dst *bool) error {
	v, err := p.text()
	switch v {
	case "true":
		*dst = true
	case "false":
		*dst = false
	}
	return err
}

func (p *parser) group() (Group, error) {
	end := p.begin("group")
	g := Group{UserVisible: true, Packages: []Package{}, NameByLang: map[string]string{}, DescByLang: map[string]string{}}
	for {
		tok, err := p.next()
		if err != nil {
			return g, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			known, err := p.common(t, &g.ID, &g.Name, &g.Description, g.NameByLang, g.DescByLang, &g.DisplayOrder)
			if !known {
				switch t.Name.Local {
				case "default":
					err = p.flag(&g.Default)
				case "uservisible":
					err = p.flag(&g.UserVisible)
				case "biarchonly":
					err = p.flag(&g.BiarchOnly)
				case "packagelist":
					err = p.packagelist(&g)
				default:
					err = p.skip()
				}
			}
			if err != nil {
				return g, err
			}
		case xml.EndElement:
			return g, end(g.ID)
		}
	}
}

func (p *parser) packagelist(g *Group) error {
	seen := make(map[Package]bool, len(g.Packages))
	for _, k := range g.Packages {
		seen[k] = true
	}
	for {
		tok, err := p.next()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "packagereq" {
				if err := p.skip(); err != nil {
					return err
				}
				continue
			}
			var k Package
			typ, _, err := p.attr(t, "", "type")
			if err != nil {
				return err
			}
			k.Type = packageType(typ)
			if k.Requires, _, err = p.attr(t, "", "requires"); err != nil {
				return err
			}
			bao, _, err := p.attr(t, "", "basearchonly")
			if err != nil {
				return err
			}
			k.BaseArchOnly = bao == "true"
			if k.Name, err = p.text(); err != nil {
				return err
			}
			if k.Name == "" {
				return p.fail(ErrInvalid, "packagereq without name")
			}
			if !seen[k] { // Pulp keeps exact duplicates once
				seen[k] = true
				g.Packages = append(g.Packages, k)
			}
		case xml.EndElement:
			return nil
		}
	}
}

func (p *parser) category() (Category, error) {
	end := p.begin("category")
	c := Category{GroupIDs: []GroupID{}, NameByLang: map[string]string{}, DescByLang: map[string]string{}}
	for {
		tok, err := p.next()
		if err != nil {
			return c, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			known, err := p.common(t, &c.ID, &c.Name, &c.Description, c.NameByLang, c.DescByLang, &c.DisplayOrder)
			if !known {
				if t.Name.Local == "grouplist" {
					c.GroupIDs, err = p.groupIDs(c.GroupIDs)
				} else {
					err = p.skip()
				}
			}
			if err != nil {
				return c, err
			}
		case xml.EndElement:
			return c, end(c.ID)
		}
	}
}

func (p *parser) environment() (Environment, error) {
	end := p.begin("environment")
	e := Environment{GroupIDs: []GroupID{}, OptionIDs: []GroupID{},
		NameByLang: map[string]string{}, DescByLang: map[string]string{}}
	for {
		tok, err := p.next()
		if err != nil {
			return e, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			known, err := p.common(t, &e.ID, &e.Name, &e.Description, e.NameByLang, e.DescByLang, &e.DisplayOrder)
			if !known {
				switch t.Name.Local {
				case "grouplist":
					e.GroupIDs, err = p.groupIDs(e.GroupIDs)
				case "optionlist":
					e.OptionIDs, err = p.groupIDs(e.OptionIDs)
				default:
					err = p.skip()
				}
			}
			if err != nil {
				return e, err
			}
		case xml.EndElement:
			return e, end(e.ID)
		}
	}
}

// groupIDs reads the <groupid>s of a grouplist or optionlist onto ids.
func (p *parser) groupIDs(ids []GroupID) ([]GroupID, error) {
	for {
		tok, err := p.next()
		if err != nil {
			return ids, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "groupid" {
				if err := p.skip(); err != nil {
					return ids, err
				}
				continue
			}
			def, _, err := p.attr(t, "", "default")
			if err != nil {
				return ids, err
			}
			name, err := p.text()
			if err != nil {
				return ids, err
			}
			if name == "" {
				return ids, p.fail(ErrInvalid, "groupid without name")
			}
			ids = append(ids, GroupID{Name: name, Default: def == "true"})
		case xml.EndElement:
			return ids, nil
		}
	}
}

func (p *parser) langpacks(matches map[string]string) error {
	p.kind = "langpacks"
	defer func() { p.kind = "" }()
	for {
		tok, err := p.next()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "match" {
				name, _, err := p.attr(t, "", "name")
				if err != nil {
					return err
				}
				install, _, err := p.attr(t, "", "install")
				if err != nil {
					return err
				}
				if name == "" {
					return p.fail(ErrInvalid, "match without name")
				}
				matches[name] = install
			}
			if err := p.skip(); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}
