package updateinfo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// MaxJSON is the largest advisory document ParseJSON reads, in bytes.
const MaxJSON = 64 << 20

// ParseJSON reads one advisory as Pulp's advisory upload takes it: a JSON object with
// the fields of the advisory API (id, updated_date, issued_date, fromstr, pkglist,
// references, ...), where createrepo_c's names are also accepted (updated, issued, from;
// a collection's short; a reference's id and type for ref_id and ref_type). id, the
// updated date and the issued date are required. A field pith does not know is an
// error naming it, so that a typo is not dropped silently. Errors are *Error with
// ErrInvalid (or ErrSyntax for JSON that does not parse), naming the document.
func ParseJSON(r io.Reader, name string) (*Update, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxJSON+1))
	if err != nil {
		return nil, &Error{File: name, Problem: err.Error(), Err: err}
	}
	if len(b) > MaxJSON {
		return nil, &Error{File: name, Problem: fmt.Sprintf("larger than %d bytes", MaxJSON), Err: ErrTooLarge}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var in jsonUpdate
	if err := dec.Decode(&in); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Problem: "not a JSON object: " + err.Error(), Err: ErrSyntax}
		}
		return nil, &Error{File: name, Problem: err.Error(), Err: ErrInvalid}
	}
	if dec.More() {
		return nil, &Error{File: name, Problem: "more than one JSON value", Err: ErrSyntax}
	}
	u := &Update{
		ID: in.ID, UpdatedDate: either(in.UpdatedDate, in.Updated), IssuedDate: either(in.IssuedDate, in.Issued),
		FromStr: either(in.FromStr, in.From), Description: in.Description, Status: in.Status, Title: in.Title, Summary: in.Summary,
		Version: string(in.Version), Type: in.Type, Severity: in.Severity, Solution: in.Solution, Release: in.Release, Rights: in.Rights,
		PushCount: string(in.PushCount), RebootSuggested: in.RebootSuggested,
	}
	invalid := func(format string, args ...any) error {
		return &Error{File: name, ID: u.ID, Problem: fmt.Sprintf(format, args...), Err: ErrInvalid}
	}
	for field, v := range map[string]string{"id": u.ID, "updated_date": u.UpdatedDate, "issued_date": u.IssuedDate} {
		if v == "" {
			return nil, invalid("%s is required (id, updated_date and issued_date must all be given)", field)
		}
	}
	for _, c := range in.Pkglist {
		col := Collection{Name: c.Name, ShortName: either(c.ShortName, c.Short), Packages: c.Packages}
		if c.Module != nil {
			v, err := strconv.ParseUint(string(c.Module.Version), 10, 64)
			if err != nil && c.Module.Version != "" {
				return nil, invalid("pkglist: module %s: version %q is not a number", c.Module.Name, c.Module.Version)
			}
			col.Module = &Module{Name: c.Module.Name, Stream: string(c.Module.Stream), Version: v, Context: c.Module.Context, Arch: c.Module.Arch}
		}
		for i := range col.Packages {
			if col.Packages[i].Epoch == "" {
				col.Packages[i].Epoch = "0" // as the XML parser (and Pulp) store it
			}
		}
		u.Pkglist = append(u.Pkglist, col)
	}
	for _, r := range in.References {
		u.References = append(u.References, Reference{Href: r.Href, ID: either(r.RefID, r.ID), Title: r.Title, Type: either(r.RefType, r.Type)})
	}
	if err := check(u); err != nil {
		return nil, invalid("%v", err)
	}
	return u, nil
}

func either(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// jsonUpdate is the upload's shape.
type jsonUpdate struct {
	ID              string    `json:"id"`
	UpdatedDate     string    `json:"updated_date"`
	Updated         string    `json:"updated"`
	IssuedDate      string    `json:"issued_date"`
	Issued          string    `json:"issued"`
	FromStr         string    `json:"fromstr"`
	From            string    `json:"from"`
	Description     string    `json:"description"`
	Status          string    `json:"status"`
	Title           string    `json:"title"`
	Summary         string    `json:"summary"`
	Version         jsonText  `json:"version"`
	Type            string    `json:"type"`
	Severity        string    `json:"severity"`
	Solution        string    `json:"solution"`
	Release         string    `json:"release"`
	Rights          string    `json:"rights"`
	PushCount       jsonText  `json:"pushcount"`
	RebootSuggested bool      `json:"reboot_suggested"`
	Pkglist         []jsonCol `json:"pkglist"`
	References      []jsonRef `json:"references"`
}

type jsonCol struct {
	Name      string    `json:"name"`
	ShortName string    `json:"shortname"`
	Short     string    `json:"short"`
	Module    *jsonMod  `json:"module"`
	Packages  []Package `json:"packages"`
}

type jsonMod struct {
	Name    string   `json:"name"`
	Stream  jsonText `json:"stream"`
	Version jsonText `json:"version"`
	Context string   `json:"context"`
	Arch    string   `json:"arch"`
}

type jsonRef struct {
	Href    string `json:"href"`
	RefID   string `json:"ref_id"`
	ID      string `json:"id"`
	Title   string `json:"title"`
	RefType string `json:"ref_type"`
	Type    string `json:"type"`
}

// jsonText is a string that may be written as a JSON number (a version, a pushcount,
// a module's stream or version).
type jsonText string

func (t *jsonText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = jsonText(s)
		return nil
	}
	if string(b) == "null" {
		*t = ""
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("%s is neither a string nor a number", b)
	}
	*t = jsonText(n)
	return nil
}
