package comps

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Pulp's digest of a comps unit (pulp_rpm's dict_digest) is the SHA-256 of the str() of
// each value of the unit's field dict, sorted and concatenated. The values are what
// libcomps hands Python: None for a missing name or requires, True or None for
// basearchonly, ints for types, dicts in libcomps' (sorted) key order. The functions
// below build those str() forms.

// Sum returns g's digest as Pulp computes it.
func (g *Group) Sum() string {
	pkgs := make([]string, len(g.Packages))
	for i, p := range g.Packages {
		bao := "None"
		if p.BaseArchOnly {
			bao = "True"
		}
		pkgs[i] = fmt.Sprintf("{'name': %s, 'type': %d, 'basearchonly': %s, 'requires': %s}",
			pyOptRepr(p.Name), int(p.Type), bao, pyOptRepr(p.Requires))
	}
	return dictDigest(g.ID, pyBool(g.Default), pyBool(g.UserVisible), pyOptInt(g.DisplayOrder),
		pyOptStr(g.Name), g.Description, pyList(pkgs), pyBool(g.BiarchOnly),
		pyDict(g.DescByLang), pyDict(g.NameByLang))
}

// Sum returns c's digest as Pulp computes it.
func (c *Category) Sum() string {
	return dictDigest(c.ID, pyOptStr(c.Name), c.Description, pyOptInt(c.DisplayOrder),
		pyGroupIDs(c.GroupIDs), pyDict(c.DescByLang), pyDict(c.NameByLang))
}

// Sum returns e's digest as Pulp computes it.
func (e *Environment) Sum() string {
	return dictDigest(e.ID, pyOptStr(e.Name), e.Description, pyOptInt(e.DisplayOrder),
		pyGroupIDs(e.GroupIDs), pyGroupIDs(e.OptionIDs), pyDict(e.DescByLang), pyDict(e.NameByLang))
}

// Sum returns l's digest as Pulp computes it.
func (l *Langpacks) Sum() string {
	return dictDigest(pyDict(l.Matches))
}

func dictDigest(values ...string) string {
	slices.Sort(values) // Python sorts str by code point; UTF-8 bytes sort the same
	h := sha256.Sum256([]byte(strings.Join(values, "")))
	return hex.EncodeToString(h[:])
}

func pyGroupIDs(ids []GroupID) string {
	items := make([]string, len(ids))
	for i, g := range ids {
		items[i] = "{'name': " + pyOptRepr(g.Name) + ", 'default': " + pyBool(g.Default) + "}"
	}
	return pyList(items)
}

func pyList(items []string) string { return "[" + strings.Join(items, ", ") + "]" }

// pyDict is str() of a dict in libcomps' order: its dicts are radix trees, which hand
// keys out sorted.
func pyDict(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	items := make([]string, len(keys))
	for i, k := range keys {
		items[i] = pyRepr(k) + ": " + pyRepr(m[k])
	}
	return "{" + strings.Join(items, ", ") + "}"
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func pyOptInt(p *int) string {
	if p == nil {
		return "None"
	}
	return strconv.Itoa(*p)
}

// pyOptStr is str() of a value libcomps gives as None when empty.
func pyOptStr(s string) string {
	if s == "" {
		return "None"
	}
	return s
}

// pyOptRepr is repr() of a value libcomps gives as None when empty.
func pyOptRepr(s string) string {
	if s == "" {
		return "None"
	}
	return pyRepr(s)
}

// pyRepr is Python 3's repr() of a str.
func pyRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	b := make([]byte, 0, len(s)+2)
	b = append(b, quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r < 0x20 || r == 0x7f:
			b = fmt.Appendf(b, `\x%02x`, r)
		case r < 0x7f || unicode.IsPrint(r):
			// Go's IsPrint and Python's isprintable agree: letters, marks, numbers,
			// punctuation, symbols and the ASCII space.
			b = append(b, string(r)...)
		case r <= 0xff:
			b = fmt.Appendf(b, `\x%02x`, r)
		case r <= 0xffff:
			b = fmt.Appendf(b, `\u%04x`, r)
		default:
			b = fmt.Appendf(b, `\U%08x`, r)
		}
	}
	return string(append(b, quote))
}
