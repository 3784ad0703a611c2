package updateinfo

import (
	"errors"
	"fmt"
	"io"
	"pith/content/rpm/internal/xmltext"
	"strconv"
	"strings"
)

// Header and Footer wrap a sequence of MarshalUpdate fragments into a document.
const (
	Header = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<updates>\n"
	Footer = "</updates>\n"
)

// MarshalUpdate returns u as an <update> element laid out as createrepo_c lays it out,
// indented for its place inside <updates> and ending in a newline. Empty strings are
// left out. It fails, wrapping ErrInvalid, where Parse would fail on the result: no id,
// a package without a name, a date ParseDate does not read, or a character XML cannot
// carry.
func MarshalUpdate(u *Update) ([]byte, error) {
	if err := check(u); err != nil {
		return nil, fmt.Errorf("update %q: %w: %v", u.ID, ErrInvalid, err)
	}
	b := make([]byte, 0, 1024)
	b = append(b, "  <update"...)
	b = attr(b, "from", u.FromStr)
	b = attr(b, "status", u.Status)
	b = attr(b, "type", u.Type)
	b = attr(b, "version", u.Version)
	b = append(b, ">\n"...)
	b = elem(b, 4, "id", u.ID)
	b = elem(b, 4, "title", u.Title)
	if u.IssuedDate != "" {
		b = append(attr(append(b, "    <issued"...), "date", u.IssuedDate), "/>\n"...)
	}
	if u.UpdatedDate != "" {
		b = append(attr(append(b, "    <updated"...), "date", u.UpdatedDate), "/>\n"...)
	}
	b = elem(b, 4, "rights", u.Rights)
	b = elem(b, 4, "release", u.Release)
	b = elem(b, 4, "pushcount", u.PushCount)
	b = elem(b, 4, "severity", u.Severity)
	b = elem(b, 4, "summary", u.Summary)
	b = elem(b, 4, "description", u.Description)
	b = elem(b, 4, "solution", u.Solution)
	if u.RebootSuggested {
		b = append(b, "    <reboot_suggested>True</reboot_suggested>\n"...)
	}
	if len(u.References) == 0 {
		b = append(b, "    <references/>\n"...)
	} else {
		b = append(b, "    <references>\n"...)
		for _, r := range u.References {
			b = append(b, "      <reference"...)
			b = attr(b, "href", r.Href)
			b = attr(b, "id", r.ID)
			b = attr(b, "type", r.Type)
			b = attr(b, "title", r.Title)
			b = append(b, "/>\n"...)
		}
		b = append(b, "    </references>\n"...)
	}
	if len(u.Pkglist) == 0 {
		b = append(b, "    <pkglist/>\n"...)
	} else {
		b = append(b, "    <pkglist>\n"...)
		for i := range u.Pkglist {
			b = appendCollection(b, &u.Pkglist[i])
		}
		b = append(b, "    </pkglist>\n"...)
	}
	return append(b, "  </update>\n"...), nil
}

func appendCollection(b []byte, c *Collection) []byte {
	b = attr(append(b, "      <collection"...), "short", c.ShortName)
	if c.Name == "" && c.Module == nil && len(c.Packages) == 0 {
		return append(b, "/>\n"...)
	}
	b = append(b, ">\n"...)
	b = elem(b, 8, "name", c.Name)
	if m := c.Module; m != nil {
		b = append(b, "        <module"...)
		b = attr(b, "name", m.Name)
		b = attr(b, "stream", m.Stream)
		b = append(strconv.AppendUint(append(b, ` version="`...), m.Version, 10), '"')
		b = attr(b, "context", m.Context)
		b = attr(b, "arch", m.Arch)
		b = append(b, "/>\n"...)
	}
	for i := range c.Packages {
		b = appendPackage(b, &c.Packages[i])
	}
	return append(b, "      </collection>\n"...)
}

func appendPackage(b []byte, p *Package) []byte {
	b = append(b, "        <package"...)
	b = attr(b, "name", p.Name)
	b = attr(b, "version", p.Version)
	b = attr(b, "release", p.Release)
	b = attr(b, "epoch", p.Epoch)
	b = attr(b, "arch", p.Arch)
	b = attr(b, "src", p.Src)
	hasSum := p.Sum != "" || p.SumType != ""
	if p.Filename == "" && !hasSum && !p.RebootSuggested && !p.RestartSuggested && !p.ReloginSuggested {
		return append(b, "/>\n"...)
	}
	b = append(b, ">\n"...)
	b = elem(b, 10, "filename", p.Filename)
	if hasSum {
		b = attr(append(b, "          <sum"...), "type", p.SumType)
		b = append(xmltext.AppendText(append(b, '>'), p.Sum), "</sum>\n"...)
	}
	if p.RebootSuggested {
		b = append(b, "          <reboot_suggested>True</reboot_suggested>\n"...)
	}
	if p.RestartSuggested {
		b = append(b, "          <restart_suggested>True</restart_suggested>\n"...)
	}
	if p.ReloginSuggested {
		b = append(b, "          <relogin_suggested>True</relogin_suggested>\n"...)
	}
	return append(b, "        </package>\n"...)
}

// attr appends ` name="value"`, or nothing when value is empty.
func attr(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(append(append(b, ' '), name...), `="`...)
	return append(xmltext.AppendAttr(b, value), '"')
}

// elem appends an indented <name>value</name> line, or nothing when value is empty.
func elem(b []byte, indent int, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(append(append(b, strings.Repeat(" ", indent)...), '<'), name...)
	b = xmltext.AppendText(append(b, '>'), value)
	return append(append(append(b, "</"...), name...), ">\n"...)
}

// check finds what would make the written update unreadable or different when read back.
func check(u *Update) error {
	if strings.TrimSpace(u.ID) == "" {
		return errors.New("no id")
	}
	for _, d := range []struct{ name, v string }{{"issued", u.IssuedDate}, {"updated", u.UpdatedDate}} {
		if d.v != "" {
			if _, err := ParseDate(d.v); err != nil {
				return fmt.Errorf("%s date %q is not a date", d.name, d.v)
			}
		}
	}
	strs := []string{u.ID, u.UpdatedDate, u.Description, u.IssuedDate, u.FromStr, u.Status,
		u.Title, u.Summary, u.Version, u.Type, u.Severity, u.Solution, u.Release, u.Rights, u.PushCount}
	for _, r := range u.References {
		strs = append(strs, r.Href, r.ID, r.Title, r.Type)
	}
	for _, c := range u.Pkglist {
		strs = append(strs, c.Name, c.ShortName)
		if m := c.Module; m != nil {
			strs = append(strs, m.Name, m.Stream, m.Context, m.Arch)
		}
		for _, p := range c.Packages {
			if p.Name == "" {
				return errors.New("pkglist package without name")
			}
			strs = append(strs, p.Name, p.Epoch, p.Version, p.Release, p.Arch, p.Src, p.Filename, p.Sum, p.SumType)
		}
	}
	for _, s := range strs {
		if len(s) > MaxText {
			return fmt.Errorf("value longer than %d bytes", MaxText)
		}
		if err := xmltext.CheckChars(s); err != nil {
			return err
		}
	}
	return nil
}

// Writer writes an updateinfo document: Header, one fragment per Write, and Footer on
// Close. It refuses a second update with an id already written, as Parse would refuse
// the document.
type Writer struct {
	w      io.Writer
	seen   map[string]struct{}
	header bool
	err    error
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, seen: map[string]struct{}{}}
}

// Write appends u to the document.
func (w *Writer) Write(u *Update) error {
	if w.err != nil {
		return w.err
	}
	if _, dup := w.seen[u.ID]; dup {
		return fmt.Errorf("update %q: %w", u.ID, ErrDuplicate)
	}
	frag, err := MarshalUpdate(u)
	if err != nil {
		return err
	}
	if err := w.start(); err != nil {
		return err
	}
	if _, err := w.w.Write(frag); err != nil {
		w.err = err
		return err
	}
	w.seen[u.ID] = struct{}{}
	return nil
}

// Close ends the document; it does not close the underlying writer.
func (w *Writer) Close() error {
	if err := w.start(); err != nil {
		return err
	}
	if _, err := io.WriteString(w.w, Footer); err != nil {
		w.err = err
		return err
	}
	w.err = errors.New("updateinfo: write after Close")
	return nil
}

func (w *Writer) start() error {
	if w.err != nil {
		return w.err
	}
	if !w.header {
		w.header = true
		if _, err := io.WriteString(w.w, Header); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}
