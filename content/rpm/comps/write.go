package comps

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"pith/content/rpm/internal/xmltext"
	"slices"
	"strconv"
	"strings"
)

// header is what libcomps starts a document with.
const header = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE comps PUBLIC "-//Red Hat, Inc.//DTD Comps info//EN" "comps.dtd">
<comps>
`

// Write writes c as a comps.xml document the way Pulp has libcomps write it: groups,
// then categories, then environments, each sorted by id, then langpacks sorted by name;
// default and uservisible always written, biarchonly when true. Digest fields are not
// written. It fails, wrapping ErrInvalid or ErrDuplicate, where Parse would fail on the
// result.
func Write(w io.Writer, c *Comps) error {
	if err := check(c); err != nil {
		return err
	}
	b := make([]byte, 0, 4096)
	b = append(b, header...)
	for _, g := range sortedByID(c.Groups, func(g *Group) string { return g.ID }) {
		b = appendGroup(b, g)
	}
	for _, cat := range sortedByID(c.Categories, func(c *Category) string { return c.ID }) {
		b = append(b, "  <category>\n"...)
		b = appendCommon(b, cat.ID, cat.Name, cat.Description, cat.NameByLang, cat.DescByLang, cat.DisplayOrder)
		b = appendGroupIDs(b, "grouplist", cat.GroupIDs)
		b = append(b, "  </category>\n"...)
	}
	for _, e := range sortedByID(c.Environments, func(e *Environment) string { return e.ID }) {
		b = append(b, "  <environment>\n"...)
		b = appendCommon(b, e.ID, e.Name, e.Description, e.NameByLang, e.DescByLang, e.DisplayOrder)
		b = appendGroupIDs(b, "grouplist", e.GroupIDs)
		b = appendGroupIDs(b, "optionlist", e.OptionIDs)
		b = append(b, "  </environment>\n"...)
	}
	if c.Langpacks != nil && len(c.Langpacks.Matches) > 0 {
		b = append(b, "  <langpacks>\n"...)
		for _, name := range sortedKeys(c.Langpacks.Matches) {
			b = attr(append(b, "    <match"...), "name", name)
			b = append(attr(b, "install", c.Langpacks.Matches[name]), "/>\n"...)
		}
		b = append(b, "  </langpacks>\n"...)
	}
	b = append(b, "</comps>\n"...)
	_, err := w.Write(b)
	return err
}

func sortedByID[T any](units []T, id func(*T) string) []*T {
	ps := make([]*T, len(units))
	for i := range units {
		ps[i] = &units[i]
	}
	slices.SortStableFunc(ps, func(a, b *T) int { return cmp.Compare(id(a), id(b)) })
	return ps
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func appendGroup(b []byte, g *Group) []byte {
	b = append(b, "  <group>\n"...)
	b = appendCommon(b, g.ID, g.Name, g.Description, g.NameByLang, g.DescByLang, nil)
	b = elem(b, "default", strconv.FormatBool(g.Default))
	b = elem(b, "uservisible", strconv.FormatBool(g.UserVisible))
	if g.BiarchOnly {
		b = elem(b, "biarchonly", "true")
	}
	if g.DisplayOrder != nil {
		b = elem(b, "display_order", strconv.Itoa(*g.DisplayOrder))
	}
	if len(g.Packages) == 0 {
		b = append(b, "    <packagelist/>\n"...)
	} else {
		b = append(b, "    <packagelist>\n"...)
		for _, p := range g.Packages {
			b = attr(append(b, "      <packagereq"...), "type", p.Type.String())
			b = attr(b, "requires", p.Requires)
			if p.BaseArchOnly {
				b = attr(b, "basearchonly", "true")
			}
			b = append(xmltext.AppendText(append(b, '>'), p.Name), "</packagereq>\n"...)
		}
		b = append(b, "    </packagelist>\n"...)
	}
	return append(b, "  </group>\n"...)
}

// appendCommon writes what groups, categories and environments share, in libcomps'
// order. A group passes order nil: its display_order comes after its flags.
func appendCommon(b []byte, id, name, desc string, names, descs map[string]string, order *int) []byte {
	b = elem(b, "id", id)
	b = elem(b, "name", name)
	for _, lang := range sortedKeys(names) {
		b = langElem(b, "name", lang, names[lang])
	}
	b = elem(b, "description", desc)
	for _, lang := range sortedKeys(descs) {
		b = langElem(b, "description", lang, descs[lang])
	}
	if order != nil {
		b = elem(b, "display_order", strconv.Itoa(*order))
	}
	return b
}

func appendGroupIDs(b []byte, list string, ids []GroupID) []byte {
	if len(ids) == 0 {
		return b
	}
	b = append(append(append(b, "    <"...), list...), ">\n"...)
	for _, g := range ids {
		b = append(b, "      <groupid"...)
		if g.Default {
			b = attr(b, "default", "true")
		}
		b = append(xmltext.AppendText(append(b, '>'), g.Name), "</groupid>\n"...)
	}
	return append(append(append(b, "    </"...), list...), ">\n"...)
}

// elem appends an indented <name>value</name> line; an empty value gives <name/>.
func elem(b []byte, name, value string) []byte {
	b = append(append(b, "    <"...), name...)
	if value == "" {
		return append(b, "/>\n"...)
	}
	b = xmltext.AppendText(append(b, '>'), value)
	return append(append(append(b, "</"...), name...), ">\n"...)
}

func langElem(b []byte, name, lang, value string) []byte {
	b = append(append(b, "    <"...), name...)
	b = append(xmltext.AppendAttr(append(b, ` xml:lang="`...), lang), `">`...)
	b = xmltext.AppendText(b, value)
	return append(append(append(b, "</"...), name...), ">\n"...)
}

// attr appends ` name="value"`, or nothing when value is empty.
func attr(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(append(append(b, ' '), name...), `="`...)
	return append(xmltext.AppendAttr(b, value), '"')
}

// check finds what would make the written document unreadable or read back different.
func check(c *Comps) error {
	var strs []string
	seen := map[string]bool{}
	unit := func(kind, id string, order *int, names, descs map[string]string, vals ...string) error {
		if strings.Trim(id, " \t\r\n") == "" {
			return fmt.Errorf("%w: %s without id", ErrInvalid, kind)
		}
		if seen[kind+"\x00"+id] {
			return fmt.Errorf("%w: %s %q", ErrDuplicate, kind, id)
		}
		seen[kind+"\x00"+id] = true
		if order != nil && (*order > math.MaxInt32 || *order < math.MinInt32) {
			return fmt.Errorf("%w: %s %q: display_order %d out of range", ErrInvalid, kind, id, *order)
		}
		strs = append(strs, vals...)
		for k, v := range names {
			strs = append(strs, k, v)
		}
		for k, v := range descs {
			strs = append(strs, k, v)
		}
		return nil
	}
	groupIDs := func(kind, id string, ids []GroupID) error {
		for _, g := range ids {
			if g.Name == "" {
				return fmt.Errorf("%w: %s %q: groupid without name", ErrInvalid, kind, id)
			}
			strs = append(strs, g.Name)
		}
		return nil
	}
	for _, g := range c.Groups {
		if err := unit("group", g.ID, g.DisplayOrder, g.NameByLang, g.DescByLang, g.ID, g.Name, g.Description); err != nil {
			return err
		}
		for _, p := range g.Packages {
			if p.Name == "" {
				return fmt.Errorf("%w: group %q: packagereq without name", ErrInvalid, g.ID)
			}
			strs = append(strs, p.Name, p.Requires)
		}
	}
	for _, cat := range c.Categories {
		if err := unit("category", cat.ID, cat.DisplayOrder, cat.NameByLang, cat.DescByLang,
			cat.ID, cat.Name, cat.Description); err != nil {
			return err
		}
		if err := groupIDs("category", cat.ID, cat.GroupIDs); err != nil {
			return err
		}
	}
	for _, e := range c.Environments {
		if err := unit("environment", e.ID, e.DisplayOrder, e.NameByLang, e.DescByLang,
			e.ID, e.Name, e.Description); err != nil {
			return err
		}
		if err := groupIDs("environment", e.ID, e.GroupIDs); err != nil {
			return err
		}
		if err := groupIDs("environment", e.ID, e.OptionIDs); err != nil {
			return err
		}
	}
	if c.Langpacks != nil {
		for name, install := range c.Langpacks.Matches {
			if name == "" {
				return fmt.Errorf("%w: langpacks match without name", ErrInvalid)
			}
			strs = append(strs, name, install)
		}
	}
	for _, s := range strs {
		if len(s) > MaxText {
			return fmt.Errorf("%w: value longer than %d bytes", ErrInvalid, MaxText)
		}
		if err := xmltext.CheckChars(s); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	return nil
}
