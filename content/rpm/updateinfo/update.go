package updateinfo

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strconv"
)

// Update is one advisory (<update>). Strings are "" where the file has nothing.
type Update struct {
	ID          string `json:"id"`
	UpdatedDate string `json:"updated_date"` // <updated date=…>, as written; see ParseDate
	Description string `json:"description"`
	IssuedDate  string `json:"issued_date"` // <issued date=…>, as written; see ParseDate
	FromStr     string `json:"fromstr"`     // the update's from attribute
	Status      string `json:"status"`
	Title       string `json:"title"`
	Summary     string `json:"summary"`
	Version     string `json:"version"`
	Type        string `json:"type"` // "security", "bugfix", "enhancement", ...
	Severity    string `json:"severity"`
	Solution    string `json:"solution"`
	Release     string `json:"release"`
	Rights      string `json:"rights"`
	PushCount   string `json:"pushcount"`

	RebootSuggested bool `json:"reboot_suggested"`

	Pkglist    []Collection `json:"pkglist"`
	References []Reference  `json:"references"`
}

// Collection is one <collection> of an update's <pkglist>.
type Collection struct {
	Name      string    `json:"name"`
	ShortName string    `json:"shortname"` // the short attribute
	Module    *Module   `json:"module"`    // nil when the collection names no module
	Packages  []Package `json:"packages"`
}

// Module is the modular stream a collection belongs to (its NSVCA).
type Module struct {
	Name    string `json:"name"`
	Stream  string `json:"stream"`
	Version uint64 `json:"version"`
	Context string `json:"context"`
	Arch    string `json:"arch"`
}

// Package is one <package> of a collection.
type Package struct {
	Name     string `json:"name"`
	Epoch    string `json:"epoch"` // "0" when the file gives none
	Version  string `json:"version"`
	Release  string `json:"release"`
	Arch     string `json:"arch"`
	Src      string `json:"src"`
	Filename string `json:"filename"`
	Sum      string `json:"sum"`
	SumType  string `json:"sum_type"` // the <sum type=…> as written: "sha256", "md5", ...

	RebootSuggested  bool `json:"reboot_suggested"`
	ReloginSuggested bool `json:"relogin_suggested"`
	RestartSuggested bool `json:"restart_suggested"`
}

// Reference is one <reference>: a bug, CVE or advisory page the update fixes or cites.
type Reference struct {
	Href  string `json:"href"`
	ID    string `json:"id"`
	Title string `json:"title"`
	Type  string `json:"type"` // "bugzilla", "cve", "self", "other", ...
}

// Sum returns the lower-case hex SHA-256 of every field of u, in a fixed order with each
// value length-prefixed, so that no two different Updates share a sum. Pulp keeps one
// advisory per (id, digest); Sum plays the digest's part.
func (u *Update) Sum() string {
	h := sumWriter{h: sha256.New()}
	h.str(u.ID, u.UpdatedDate, u.Description, u.IssuedDate, u.FromStr, u.Status, u.Title,
		u.Summary, u.Version, u.Type, u.Severity, u.Solution, u.Release, u.Rights, u.PushCount)
	h.bool(u.RebootSuggested)
	h.num(uint64(len(u.Pkglist)))
	for _, c := range u.Pkglist {
		h.str(c.Name, c.ShortName)
		h.bool(c.Module != nil)
		if m := c.Module; m != nil {
			h.str(m.Name, m.Stream, strconv.FormatUint(m.Version, 10), m.Context, m.Arch)
		}
		h.num(uint64(len(c.Packages)))
		for _, p := range c.Packages {
			h.str(p.Name, p.Epoch, p.Version, p.Release, p.Arch, p.Src, p.Filename, p.Sum, p.SumType)
			h.bool(p.RebootSuggested, p.ReloginSuggested, p.RestartSuggested)
		}
	}
	h.num(uint64(len(u.References)))
	for _, r := range u.References {
		h.str(r.Href, r.ID, r.Title, r.Type)
	}
	return hex.EncodeToString(h.h.Sum(nil))
}

// sumWriter feeds values into a hash unambiguously: every string is preceded by its
// length and every list by its count.
type sumWriter struct {
	h   hash.Hash
	buf [binary.MaxVarintLen64]byte
}

func (s *sumWriter) num(n uint64) {
	s.h.Write(s.buf[:binary.PutUvarint(s.buf[:], n)])
}

func (s *sumWriter) str(vs ...string) {
	for _, v := range vs {
		s.num(uint64(len(v)))
		s.h.Write([]byte(v))
	}
}

func (s *sumWriter) bool(vs ...bool) {
	for _, v := range vs {
		if v {
			s.num(1)
		} else {
			s.num(0)
		}
	}
}
