package rpm

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"pith/content/rpm/comps"
	"pith/content/rpm/modulemd"
	"pith/content/rpm/repodata"
	"pith/content/rpm/updateinfo"
	"pith/meta"
)

// CopyEntry is one entry of an rpm copy: units of a source repository version to add
// to a destination repository whose content starts as DestVersion.
type CopyEntry struct {
	Source, SourceVersion int64 // repository id and version number
	Dest, DestVersion     int64
	Content               []int64 // nil: every unit of the source version
}

// CopyPlan returns, for each entry, the units its destination gets, and the dependency
// problems found, the way Pulp's copy does it:
//
//   - Units named by the selected ones come along: the packages and modules of an
//     advisory, the groups of a category or environment, and the newest package of each
//     name a group lists when the selection has none of that name.
//   - With solve, the packages and module streams of the selection are "installed" on
//     top of the destinations, as dnf would: every requirement not already met by a
//     destination or by what is copied is met from the sources, recursively; weak
//     dependencies (Recommends) are followed when something provides them. A module
//     brings its artifacts and the module streams it requires. Unmet requirements do
//     not fail the copy; they are returned as problems, as Pulp logs them.
//
// When Content is nil the whole source version is copied and nothing is added to it.
func CopyPlan(ctx context.Context, q meta.Querier, entries []CopyEntry, solve bool) ([][]int64, []string, error) {
	out := make([][]int64, len(entries))
	srcs := make([]*versionSet, len(entries))
	for i, e := range entries {
		src, err := loadVersionSet(ctx, q, e.Source, e.SourceVersion)
		if err != nil {
			return nil, nil, err
		}
		srcs[i] = src
		if e.Content == nil {
			out[i] = src.ids()
			continue
		}
		out[i] = withChildren(src.pick(e.Content), src)
	}
	if !solve {
		return out, nil, nil
	}
	s := newSolver(ctx, q)
	for i, e := range entries {
		dst, err := loadVersionSet(ctx, q, e.Dest, e.DestVersion)
		if err != nil {
			return nil, nil, err
		}
		s.addSet(dst, -1)
		s.addSet(srcs[i], i)
	}
	for i := range entries {
		for _, id := range out[i] {
			s.request(id)
		}
	}
	if err := s.run(); err != nil {
		return nil, nil, err
	}
	added := make([]map[int64]bool, len(entries))
	for i := range entries {
		added[i] = map[int64]bool{}
		for _, id := range out[i] {
			added[i][id] = true
		}
	}
	ids := make([]int64, 0, len(s.chosenFrom))
	for id := range s.chosenFrom {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if e := s.chosenFrom[id]; !added[e][id] {
			out[e] = append(out[e], id)
		}
	}
	return out, s.problems, nil
}

// setUnit is one unit of a repository version, with the attributes copying reads.
type setUnit struct {
	id      int64
	typ     string
	repoKey string
	attrs   []byte
}

// versionSet is the units of one repository version.
type versionSet struct {
	repoID, number int64
	units          []setUnit
	byID           map[int64]*setUnit
}

var copyTypes = []string{PackageType, AdvisoryType, GroupType, CategoryType, EnvironmentType, ModulemdType}

func loadVersionSet(ctx context.Context, q meta.Querier, repoID, n int64) (*versionSet, error) {
	vs := &versionSet{repoID: repoID, number: n, byID: map[int64]*setUnit{}}
	rows, err := q.Query(ctx, `SELECT c.id, c.type, c.repo_key, c.attrs FROM contents c WHERE `+inVersion, repoID, n, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var u setUnit
		var attrs string
		if err := rows.Scan(&u.id, &u.typ, &u.repoKey, &attrs); err != nil {
			return nil, err
		}
		for _, t := range copyTypes {
			if t == u.typ {
				u.attrs = []byte(attrs) // only the types copying reads keep theirs
			}
		}
		vs.units = append(vs.units, u)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range vs.units {
		vs.byID[vs.units[i].id] = &vs.units[i]
	}
	return vs, nil
}

func (vs *versionSet) ids() []int64 {
	ids := make([]int64, len(vs.units))
	for i, u := range vs.units {
		ids[i] = u.id
	}
	return ids
}

func (vs *versionSet) pick(ids []int64) []*setUnit {
	var out []*setUnit
	for _, id := range ids {
		if u := vs.byID[id]; u != nil {
			out = append(out, u)
		}
	}
	return out
}

// withChildren returns the ids of the selection and of the units it names in the source.
func withChildren(sel []*setUnit, src *versionSet) []int64 {
	have := map[int64]bool{}
	var out []int64
	add := func(id int64) {
		if !have[id] {
			have[id] = true
			out = append(out, id)
		}
	}
	byKey := map[string][]*setUnit{} // type + " " + repo key
	for i := range src.units {
		u := &src.units[i]
		byKey[u.typ+" "+u.repoKey] = append(byKey[u.typ+" "+u.repoKey], u)
	}
	groupNames := map[string]bool{}
	var groups []*setUnit
	selectedNames := map[string]bool{}
	for _, u := range sel {
		add(u.id)
		switch u.typ {
		case AdvisoryType:
			var adv updateinfo.Update
			json.Unmarshal(u.attrs, &adv)
			for _, col := range adv.Pkglist {
				for _, p := range col.Packages {
					e := p.Epoch
					if e == "" {
						e = "0"
					}
					for _, c := range byKey[PackageType+" "+p.Name+"-"+e+":"+p.Version+"-"+p.Release+"."+p.Arch] {
						add(c.id)
					}
				}
				if m := col.Module; m != nil {
					for _, c := range byKey[ModulemdType+" "+fmt.Sprintf("%s:%s:%d:%s:%s", m.Name, m.Stream, m.Version, m.Context, m.Arch)] {
						add(c.id)
					}
				}
			}
		case CategoryType, EnvironmentType:
			var x struct {
				GroupIDs  []comps.GroupID `json:"group_ids"`
				OptionIDs []comps.GroupID `json:"option_ids"`
			}
			json.Unmarshal(u.attrs, &x)
			for _, g := range append(x.GroupIDs, x.OptionIDs...) {
				groupNames[g.Name] = true
			}
		case GroupType:
			groups = append(groups, u)
		case PackageType:
			var p struct{ Name string }
			json.Unmarshal(u.attrs, &p)
			selectedNames[p.Name] = true
		}
	}
	for name := range groupNames {
		for _, g := range byKey[GroupType+" "+name] {
			add(g.id)
			groups = append(groups, g)
		}
	}
	wanted := map[string]bool{}
	for _, g := range groups {
		var x comps.Group
		json.Unmarshal(g.attrs, &x)
		for _, p := range x.Packages {
			if !selectedNames[p.Name] {
				wanted[p.Name] = true
			}
		}
	}
	if len(wanted) > 0 {
		newest := map[string]*pkgInfo{} // name.arch -> newest
		for i := range src.units {
			u := &src.units[i]
			if u.typ != PackageType {
				continue
			}
			var p pkgInfo
			json.Unmarshal(u.attrs, &p)
			if !wanted[p.Name] {
				continue
			}
			p.id = u.id
			k := p.Name + "." + p.Arch
			if cur := newest[k]; cur == nil || p.compare(cur) > 0 {
				newest[k] = &p
			}
		}
		for _, p := range newest {
			add(p.id)
		}
	}
	return out
}

// pkgInfo is the part of a package's attributes dependency solving reads.
type pkgInfo struct {
	id                                  int64
	Name, Epoch, Version, Release, Arch string
	Provides, Requires, Recommends      []repodata.Dep
}

func (p *pkgInfo) compare(o *pkgInfo) int {
	return compareEVR(p.Epoch, p.Version, p.Release, o.Epoch, o.Version, o.Release)
}

func (p *pkgInfo) nevra() string {
	e := p.Epoch
	if e == "" {
		e = "0"
	}
	return p.Name + "-" + e + ":" + p.Version + "-" + p.Release + "." + p.Arch
}

// moduleInfo is the part of a module stream dependency solving reads.
type moduleInfo struct {
	id int64
	modulemd.Modulemd
}

func (m *moduleInfo) stream() string { return m.Name + ":" + m.Stream }
