package repodata

import (
	"bytes"
	"strconv"
	"strings"
)

const xmlHeader = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"

// PrimaryFragment returns the <package> element createrepo_c writes into primary.xml
// for p, newline included. Only the files createrepo_c lists in primary are written
// (see IsPrimaryFile); which requires to leave out is the rpm reader's decision.
func PrimaryFragment(p *Package) []byte { return appendPrimary(nil, p) }

// FilelistsFragment returns the <package> element of filelists.xml for p.
func FilelistsFragment(p *Package) []byte { return appendFilelists(nil, p) }

// OtherFragment returns the <package> element of other.xml for p. A changelogLimit
// above zero keeps only the newest entries, as createrepo_c's --changelog-limit does.
func OtherFragment(p *Package, changelogLimit int) []byte {
	return appendOther(nil, p, changelogLimit)
}

// IsPrimaryFile reports whether createrepo_c lists path in primary.xml as well as in
// filelists.xml: paths under /etc/, paths containing "bin/", and /usr/lib/sendmail.
// dnf resolves file requires on these from primary alone.
func IsPrimaryFile(path string) bool {
	return strings.HasPrefix(path, "/etc/") || strings.Contains(path, "bin/") || path == "/usr/lib/sendmail"
}

func appendPrimary(b []byte, p *Package) []byte {
	b = append(b, "<package type=\"rpm\">\n"...)
	b = textElem(b, "  ", "name", p.Name)
	b = textElem(b, "  ", "arch", p.Arch)
	b = appendVersion(b, p)
	b = append(b, `  <checksum type="`...)
	b = escape(b, p.ChecksumType, escAttr)
	b = append(b, `" pkgid="YES">`...)
	b = escape(b, p.PkgID, 0)
	b = append(b, "</checksum>\n"...)
	b = textElem(b, "  ", "summary", p.Summary)
	b = textElem(b, "  ", "description", p.Description)
	b = textElem(b, "  ", "packager", p.Packager)
	b = textElem(b, "  ", "url", p.URL)
	b = append(b, `  <time file="`...)
	b = strconv.AppendInt(b, p.TimeFile, 10)
	b = append(b, `" build="`...)
	b = strconv.AppendInt(b, p.TimeBuild, 10)
	b = append(b, "\"/>\n"...)
	b = append(b, `  <size package="`...)
	b = strconv.AppendInt(b, p.SizePackage, 10)
	b = append(b, `" installed="`...)
	b = strconv.AppendInt(b, p.SizeInstalled, 10)
	b = append(b, `" archive="`...)
	b = strconv.AppendInt(b, p.SizeArchive, 10)
	b = append(b, "\"/>\n"...)
	b = append(b, "  <location "...)
	if p.LocationBase != "" {
		b = append(b, `xml:base="`...)
		if strings.HasPrefix(p.LocationBase, "/") { // createrepo_c makes a path a file: URL
			b = append(b, "file://"...)
		}
		b = escape(b, p.LocationBase, escAttr)
		b = append(b, `" `...)
	}
	b = append(b, `href="`...)
	b = escape(b, p.LocationHref, escAttr)
	b = append(b, "\"/>\n"...)
	b = append(b, "  <format>\n"...)
	b = textElem(b, "    ", "rpm:license", p.License)
	b = textElem(b, "    ", "rpm:vendor", p.Vendor)
	b = textElem(b, "    ", "rpm:group", p.Group)
	b = textElem(b, "    ", "rpm:buildhost", p.BuildHost)
	b = textElem(b, "    ", "rpm:sourcerpm", p.SourceRPM)
	b = append(b, `    <rpm:header-range start="`...)
	b = strconv.AppendInt(b, p.HeaderStart, 10)
	b = append(b, `" end="`...)
	b = strconv.AppendInt(b, p.HeaderEnd, 10)
	b = append(b, "\"/>\n"...)
	b = appendDeps(b, "rpm:provides", p.Provides, false)
	b = appendDeps(b, "rpm:requires", p.Requires, true)
	b = appendDeps(b, "rpm:conflicts", p.Conflicts, false)
	b = appendDeps(b, "rpm:obsoletes", p.Obsoletes, false)
	b = appendDeps(b, "rpm:suggests", p.Suggests, false)
	b = appendDeps(b, "rpm:enhances", p.Enhances, false)
	b = appendDeps(b, "rpm:recommends", p.Recommends, false)
	b = appendDeps(b, "rpm:supplements", p.Supplements, false)
	for _, f := range p.Files {
		if IsPrimaryFile(f.Path) {
			b = appendFile(b, "    ", f)
		}
	}
	return append(b, "  </format>\n</package>\n"...)
}

func appendDeps(b []byte, elem string, deps []Dep, requires bool) []byte {
	if len(deps) == 0 {
		return b
	}
	start := len(b)
	b = append(b, "    <"...)
	b = append(b, elem...)
	b = append(b, ">\n"...)
	n := 0
	for _, d := range deps {
		if d.Name == "" {
			continue
		}
		n++
		b = append(b, `      <rpm:entry name="`...)
		b = escape(b, d.Name, escAttr)
		b = append(b, '"')
		if d.Flags != "" {
			b = attr(b, "flags", d.Flags)
			b = attr(b, "epoch", d.Epoch)
			b = attr(b, "ver", d.Version)
			b = attr(b, "rel", d.Release)
		}
		if requires && d.Pre {
			b = append(b, ` pre="1"`...)
		}
		b = append(b, "/>\n"...)
	}
	if n == 0 { // libxml2 writes a childless element short
		b = append(b[:start], "    <"...)
		b = append(b, elem...)
		return append(b, "/>\n"...)
	}
	b = append(b, "    </"...)
	b = append(b, elem...)
	return append(b, ">\n"...)
}

// attr appends ` name="v"` when v is not empty.
func attr(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ' ')
	b = append(b, name...)
	b = append(b, `="`...)
	b = escape(b, v, escAttr)
	return append(b, '"')
}

// FileMarker is the text that a filelists fragment holds for path, whatever its type:
// searching stored fragments for it finds the packages that install path.
func FileMarker(path string) string {
	return string(append(escape([]byte(">"), path, 0), "</file>"...))
}

func appendFile(b []byte, indent string, f File) []byte {
	b = append(b, indent...)
	if f.Type != "" && f.Type != "file" {
		b = append(b, `<file type="`...)
		b = escape(b, f.Type, escAttr)
		b = append(b, `">`...)
	} else {
		b = append(b, "<file>"...)
	}
	b = escape(b, f.Path, 0)
	return append(b, "</file>\n"...)
}

// appendVersion appends <version epoch= ver= rel=/>, indented by two.
func appendVersion(b []byte, p *Package) []byte {
	e := p.Epoch
	if e == "" {
		e = "0"
	}
	b = append(b, `  <version epoch="`...)
	b = escape(b, e, escAttr)
	b = append(b, `" ver="`...)
	b = escape(b, p.Version, escAttr)
	b = append(b, `" rel="`...)
	b = escape(b, p.Release, escAttr)
	return append(b, "\"/>\n"...)
}

// appendPackageStart appends filelists' and other's <package pkgid= name= arch=> and
// <version>.
func appendPackageStart(b []byte, p *Package) []byte {
	b = append(b, `<package pkgid="`...)
	b = escape(b, p.PkgID, escAttr)
	b = append(b, `" name="`...)
	b = escape(b, p.Name, escAttr)
	b = append(b, `" arch="`...)
	b = escape(b, p.Arch, escAttr)
	b = append(b, "\">\n"...)
	return appendVersion(b, p)
}

func appendFilelists(b []byte, p *Package) []byte {
	b = appendPackageStart(b, p)
	for _, f := range p.Files {
		b = appendFile(b, "  ", f)
	}
	return append(b, "</package>\n"...)
}

func appendOther(b []byte, p *Package, limit int) []byte {
	b = appendPackageStart(b, p)
	for _, c := range newestChangelogs(p.Changelogs, limit) {
		b = append(b, `  <changelog author="`...)
		b = escape(b, c.Author, escAttr)
		b = append(b, `" date="`...)
		b = strconv.AppendInt(b, c.Date, 10)
		b = append(b, `">`...)
		b = escape(b, c.Text, 0)
		b = append(b, "</changelog>\n"...)
	}
	return append(b, "</package>\n"...)
}

// newestChangelogs returns the limit newest entries of cl, keeping their order.
// createrepo_c lists the oldest first; a list that runs the other way is handled too.
func newestChangelogs(cl []Changelog, limit int) []Changelog {
	if limit <= 0 || len(cl) <= limit {
		return cl
	}
	if cl[0].Date <= cl[len(cl)-1].Date {
		return cl[len(cl)-limit:]
	}
	return cl[:limit]
}

// textElem appends indent<name>text</name> and a newline; empty text gives
// <name></name>, as createrepo_c writes it.
func textElem(b []byte, indent, name, text string) []byte {
	b = append(b, indent...)
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = escape(b, text, 0)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, ">\n"...)
}

// Relocate returns a primary fragment whose <location> says href, without xml:base: a
// publication serves each package at a path of its own layout, next to its metadata.
// A fragment without a <location> element is returned unchanged.
func Relocate(frag []byte, href string) []byte {
	start := bytes.Index(frag, []byte("<location "))
	if start < 0 {
		return frag
	}
	end := bytes.Index(frag[start:], []byte("/>"))
	if end < 0 {
		return frag
	}
	out := make([]byte, 0, len(frag)+len(href))
	out = append(out, frag[:start]...)
	out = append(out, `<location href="`...)
	out = escape(out, href, escAttr)
	out = append(out, `"`...)
	return append(out, frag[start+end:]...)
}
