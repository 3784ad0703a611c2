package repodata

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Repomd is repomd.xml: the index of a repository's metadata files.
type Repomd struct {
	Revision        string
	RepoID          string // <repoid>, rare
	RepoIDType      string
	ContentHash     string // <contenthash>, rare
	ContentHashType string
	ContentTags     []string    // <tags><content>
	RepoTags        []string    // <tags><repo>
	DistroTags      []DistroTag // <tags><distro>
	Records         []Record    // the <data> elements, in file order
}

// DistroTag is a <tags><distro cpeid="...">name</distro>.
type DistroTag struct {
	CPEID string
	Name  string
}

// Record is one <data type="..."> of repomd.xml.
type Record struct {
	Type               string // "primary", "filelists", "other", "updateinfo", "primary_zck", ...
	LocationHref       string
	LocationBase       string // xml:base, usually empty
	Checksum           string
	ChecksumType       string
	OpenChecksum       string // of the decompressed file; empty when absent
	OpenChecksumType   string
	HeaderChecksum     string // zchunk header
	HeaderChecksumType string
	Size               int64 // -1 when absent
	OpenSize           int64 // -1 when absent
	HeaderSize         int64 // -1 when absent
	Timestamp          int64
	DatabaseVersion    int // sqlite databases (type "*_db"); 0 when absent
}

// Record returns the first record of type typ, or nil.
func (m *Repomd) Record(typ string) *Record {
	for i := range m.Records {
		if m.Records[i].Type == typ {
			return &m.Records[i]
		}
	}
	return nil
}

// ParseRepomd reads repomd.xml; name is used in errors. A <data> without type, location
// or checksum is an error; unknown elements are ignored.
func ParseRepomd(r io.Reader, name string) (*Repomd, error) {
	t := newScanner(r, name)
	k, err := t.next()
	for err == nil && k != tokStart {
		k, err = t.next()
	}
	if err != nil {
		return nil, err
	}
	rootNS, local := t.resolve(t.name)
	if string(local) != "repomd" {
		return nil, t.errAt(t.tokPos, invalidErr(fmt.Sprintf("root element is <%s>, expected <repomd>", t.name)))
	}
	m := &Repomd{}
	p := repomdParser{t: t, ns: rootNS}
	if !t.empty {
		if err := p.children(func(local string) error {
			switch local {
			case "revision":
				return p.text(&m.Revision)
			case "repoid":
				m.RepoIDType = p.attr("type")
				return p.text(&m.RepoID)
			case "contenthash":
				m.ContentHashType = p.attr("type")
				return p.text(&m.ContentHash)
			case "tags":
				return p.tags(m)
			case "data":
				return p.data(m)
			}
			return t.skip()
		}); err != nil {
			return nil, err
		}
	}
	if _, err := t.next(); err != nil {
		return nil, err
	}
	return m, nil
}

type repomdParser struct {
	t  *scanner
	ns string
}

// children calls fn with the local name of each child element of the current element
// that is in the document's namespace; fn must consume the child.
func (p *repomdParser) children(fn func(local string) error) error {
	t := p.t
	for {
		k, err := t.next()
		if err != nil {
			return err
		}
		if k == tokEnd {
			return nil
		}
		if k != tokStart {
			continue
		}
		uri, local := t.resolve(t.name)
		if uri != p.ns {
			err = t.skip()
		} else {
			err = fn(string(local))
		}
		if err != nil {
			return err
		}
	}
}

func (p *repomdParser) attr(name string) string {
	v, _ := p.t.attr(name)
	return string(v)
}

func (p *repomdParser) text(dst *string) error {
	b, err := p.t.textContent()
	*dst = string(b)
	return err
}

func (p *repomdParser) num(dst *int64) error {
	t := p.t
	name := string(t.name)
	pos := t.tokPos
	b, err := t.textContent()
	if err != nil {
		return err
	}
	n, ok := parseNum(b)
	if !ok {
		return t.errAt(pos, invalidErr(fmt.Sprintf("<%s>%s</%s>: not a number", name, b, name)))
	}
	*dst = n
	return nil
}

func (p *repomdParser) tags(m *Repomd) error {
	if p.t.empty {
		return nil
	}
	return p.children(func(local string) error {
		var s string
		switch local {
		case "content":
			err := p.text(&s)
			m.ContentTags = append(m.ContentTags, s)
			return err
		case "repo":
			err := p.text(&s)
			m.RepoTags = append(m.RepoTags, s)
			return err
		case "distro":
			d := DistroTag{CPEID: p.attr("cpeid")}
			err := p.text(&d.Name)
			m.DistroTags = append(m.DistroTags, d)
			return err
		}
		return p.t.skip()
	})
}

func (p *repomdParser) data(m *Repomd) error {
	t := p.t
	line, off := t.line(), t.discarded+int64(t.tokPos)
	rec := Record{Type: p.attr("type"), Size: -1, OpenSize: -1, HeaderSize: -1}
	if !t.empty {
		err := p.children(func(local string) error {
			switch local {
			case "location":
				rec.LocationHref, rec.LocationBase = p.attr("href"), p.attr("xml:base")
				return t.skip()
			case "checksum":
				rec.ChecksumType = checksumType([]byte(p.attr("type")))
				return p.text(&rec.Checksum)
			case "open-checksum":
				rec.OpenChecksumType = checksumType([]byte(p.attr("type")))
				return p.text(&rec.OpenChecksum)
			case "header-checksum":
				rec.HeaderChecksumType = checksumType([]byte(p.attr("type")))
				return p.text(&rec.HeaderChecksum)
			case "timestamp":
				return p.num(&rec.Timestamp)
			case "size":
				return p.num(&rec.Size)
			case "open-size":
				return p.num(&rec.OpenSize)
			case "header-size":
				return p.num(&rec.HeaderSize)
			case "database_version":
				var v int64
				err := p.num(&v)
				rec.DatabaseVersion = int(min(v, 1<<31-1))
				return err
			}
			return t.skip()
		})
		if err != nil {
			return err
		}
	}
	rec.Checksum = strings.TrimSpace(rec.Checksum)
	if rec.OpenChecksum = strings.TrimSpace(rec.OpenChecksum); rec.OpenChecksum == "" {
		rec.OpenChecksumType = ""
	}
	if rec.HeaderChecksum = strings.TrimSpace(rec.HeaderChecksum); rec.HeaderChecksum == "" {
		rec.HeaderChecksumType = ""
	}
	var missing string
	switch {
	case rec.Type == "":
		missing = "the type attribute"
	case rec.LocationHref == "":
		missing = `<location href="...">`
	case rec.Checksum == "":
		missing = "<checksum>"
	case rec.ChecksumType == "":
		missing = `<checksum type="...">`
	}
	if missing != "" {
		what := "<data>"
		if rec.Type != "" {
			what = fmt.Sprintf("<data type=%q>", rec.Type)
		}
		return &Error{File: t.file, Line: line, Offset: off, Err: invalidErr(what + ": missing " + missing)}
	}
	m.Records = append(m.Records, rec)
	return nil
}

// Bytes returns repomd.xml for m, laid out as createrepo_c writes it: tags in the order
// content, repo, distro, records in m's order. The result depends on m alone.
func (m *Repomd) Bytes() []byte {
	b := make([]byte, 0, 512+len(m.Records)*512)
	b = append(b, xmlHeader...)
	b = append(b, `<repomd xmlns="`+nsRepo+`" xmlns:rpm="`+nsRPM+`">`+"\n"...)
	b = repomdText(b, "  ", "revision", "", "", m.Revision)
	if m.RepoID != "" || m.RepoIDType != "" {
		b = repomdText(b, "  ", "repoid", "type", m.RepoIDType, m.RepoID)
	}
	if m.ContentHash != "" || m.ContentHashType != "" {
		b = repomdText(b, "  ", "contenthash", "type", m.ContentHashType, m.ContentHash)
	}
	if len(m.ContentTags)+len(m.RepoTags)+len(m.DistroTags) > 0 {
		b = append(b, "  <tags>\n"...)
		for _, s := range m.ContentTags {
			b = repomdText(b, "    ", "content", "", "", s)
		}
		for _, s := range m.RepoTags {
			b = repomdText(b, "    ", "repo", "", "", s)
		}
		for _, d := range m.DistroTags {
			b = repomdText(b, "    ", "distro", "cpeid", d.CPEID, d.Name)
		}
		b = append(b, "  </tags>\n"...)
	}
	for i := range m.Records {
		b = m.Records[i].appendXML(b)
	}
	b = append(b, "</repomd>\n"...)
	return b
}

// repomdText appends indent<name attr="v">text</name>; the attribute only when v is set.
func repomdText(b []byte, indent, name, attr, v, text string) []byte {
	b = append(b, indent...)
	b = append(b, '<')
	b = append(b, name...)
	if attr != "" && v != "" {
		b = append(b, ' ')
		b = append(b, attr...)
		b = append(b, `="`...)
		b = escape(b, v, escAttr|escUTF8)
		b = append(b, '"')
	}
	b = append(b, '>')
	b = escape(b, text, escUTF8)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, ">\n"...)
}

func (r *Record) appendXML(b []byte) []byte {
	b = append(b, `  <data type="`...)
	b = escape(b, r.Type, escAttr|escUTF8)
	b = append(b, "\">\n"...)
	b = repomdText(b, "    ", "checksum", "type", r.ChecksumType, r.Checksum)
	if r.OpenChecksum != "" {
		b = repomdText(b, "    ", "open-checksum", "type", r.OpenChecksumType, r.OpenChecksum)
	}
	if r.HeaderChecksum != "" {
		b = repomdText(b, "    ", "header-checksum", "type", r.HeaderChecksumType, r.HeaderChecksum)
	}
	b = append(b, `    <location href="`...)
	b = escape(b, r.LocationHref, escAttr|escUTF8)
	if r.LocationBase != "" {
		b = append(b, `" xml:base="`...)
		b = escape(b, r.LocationBase, escAttr|escUTF8)
	}
	b = append(b, "\"/>\n"...)
	num := func(b []byte, name string, n int64) []byte {
		b = append(b, "    <"...)
		b = append(b, name...)
		b = append(b, '>')
		b = strconv.AppendInt(b, n, 10)
		b = append(b, "</"...)
		b = append(b, name...)
		return append(b, ">\n"...)
	}
	b = num(b, "timestamp", r.Timestamp)
	if r.Size >= 0 {
		b = num(b, "size", r.Size)
	}
	if r.OpenSize >= 0 {
		b = num(b, "open-size", r.OpenSize)
	}
	if r.HeaderSize >= 0 {
		b = num(b, "header-size", r.HeaderSize)
	}
	if r.DatabaseVersion != 0 || strings.HasSuffix(r.Type, "_db") {
		b = num(b, "database_version", int64(r.DatabaseVersion))
	}
	return append(b, "  </data>\n"...)
}
