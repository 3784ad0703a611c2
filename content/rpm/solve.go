package rpm

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"pith/content/rpm/repodata"
	"pith/meta"
)

// solver finds the packages and module streams that installing a selection on top of
// the destinations needs, preferring what a destination already has, as dnf (libsolv
// with "focus installed") does. It is greedy: it follows requirements one by one and
// never backtracks, and it does not weigh conflicts or obsoletes.
type solver struct {
	ctx  context.Context
	q    meta.Querier
	sets []*versionSet

	pkgs     map[int64]*solvPkg
	byNEVRA  map[string][]*solvPkg
	provides map[string][]provider // capability name -> its providers
	files    map[string][]*solvPkg // path -> packages with that file (memo)

	mods     map[int64]*solvModule
	modsByNm map[string][]*solvModule
	enabled  map[string]bool // "name:stream" of the module streams in or going to a destination

	chosen     map[int64]bool
	chosenFrom map[int64]int // unit id -> the copy entry whose source it comes from
	queue      []*solvPkg
	problems   []string
}

type solvPkg struct {
	pkgInfo
	entry     int  // the first entry whose source has it; -1: only in destinations
	installed bool // in a destination
	module    *solvModule
}

type provider struct {
	p   *solvPkg
	dep repodata.Dep
}

type solvModule struct {
	moduleInfo
	entry     int
	installed bool
}

func newSolver(ctx context.Context, q meta.Querier) *solver {
	return &solver{ctx: ctx, q: q, pkgs: map[int64]*solvPkg{}, byNEVRA: map[string][]*solvPkg{}, provides: map[string][]provider{},
		files: map[string][]*solvPkg{}, mods: map[int64]*solvModule{}, modsByNm: map[string][]*solvModule{}, enabled: map[string]bool{},
		chosen: map[int64]bool{}, chosenFrom: map[int64]int{}}
}

// addSet adds the packages and modules of a version: a source of entry, or a
// destination when entry is -1.
func (s *solver) addSet(vs *versionSet, entry int) {
	s.sets = append(s.sets, vs)
	for i := range vs.units {
		u := &vs.units[i]
		switch u.typ {
		case PackageType:
			p := s.pkgs[u.id]
			if p == nil {
				p = &solvPkg{entry: -1}
				json.Unmarshal(u.attrs, &p.pkgInfo)
				p.id = u.id
				s.pkgs[u.id] = p
				s.byNEVRA[p.nevra()] = append(s.byNEVRA[p.nevra()], p)
				self := repodata.Dep{Name: p.Name, Flags: "EQ", Epoch: p.Epoch, Version: p.Version, Release: p.Release}
				for _, d := range append(p.Provides, self) {
					s.provides[d.Name] = append(s.provides[d.Name], provider{p, d})
				}
			}
			s.mark(&p.entry, &p.installed, entry)
		case ModulemdType:
			m := s.mods[u.id]
			if m == nil {
				m = &solvModule{entry: -1}
				json.Unmarshal(u.attrs, &m.Modulemd)
				m.id = u.id
				s.mods[u.id] = m
				s.modsByNm[m.Name] = append(s.modsByNm[m.Name], m)
			}
			s.mark(&m.entry, &m.installed, entry)
			if entry < 0 {
				s.enabled[m.stream()] = true
			}
		}
	}
}

func (s *solver) mark(at *int, installed *bool, entry int) {
	switch {
	case entry < 0:
		*installed = true
	case *at < 0:
		*at = entry
	}
}

// request asks for a unit of the selection; units other than packages and modules
// are copied as they are.
func (s *solver) request(id int64) {
	if p := s.pkgs[id]; p != nil {
		s.choose(p)
	} else if m := s.mods[id]; m != nil {
		s.chooseModule(m)
	}
}

func (s *solver) choose(p *solvPkg) {
	if s.chosen[p.id] {
		return
	}
	s.chosen[p.id] = true
	if !p.installed && p.entry >= 0 {
		s.chosenFrom[p.id] = p.entry
	}
	s.queue = append(s.queue, p)
	if p.module != nil {
		s.chooseModule(p.module)
	}
}

func (s *solver) chooseModule(m *solvModule) {
	if s.chosen[m.id] {
		return
	}
	s.chosen[m.id] = true
	if !m.installed && m.entry >= 0 {
		s.chosenFrom[m.id] = m.entry
	}
	s.enabled[m.stream()] = true
	for _, a := range m.Artifacts {
		for _, p := range s.byNEVRA[a] {
			if p.entry >= 0 || p.installed {
				s.choose(p)
			}
		}
	}
	if len(m.Dependencies) == 0 {
		return
	}
	for name, streams := range m.Dependencies[0].Requires {
		if name == "platform" || s.moduleEnabled(name, streams) {
			continue
		}
		if best := s.bestModule(name, streams, m.Arch); best != nil {
			s.chooseModule(best)
		} else {
			s.problem("nothing provides module(%s:%s) needed by module %s:%s", name, strings.Join(streams, ","), m.stream(), m.Context)
		}
	}
}

func streamAccepted(stream string, streams []string) bool {
	any := true
	for _, st := range streams {
		if strings.HasPrefix(st, "-") {
			if st[1:] == stream {
				return false
			}
			continue
		}
		any = false
		if st == stream {
			return true
		}
	}
	return any
}

func (s *solver) moduleEnabled(name string, streams []string) bool {
	for _, m := range s.modsByNm[name] {
		if s.enabled[m.stream()] && streamAccepted(m.Stream, streams) {
			return true
		}
	}
	return false
}

func (s *solver) bestModule(name string, streams []string, arch string) *solvModule {
	var best *solvModule
	for _, m := range s.modsByNm[name] {
		if m.entry < 0 || !streamAccepted(m.Stream, streams) || (m.Arch != arch && m.Arch != "noarch" && arch != "noarch") {
			continue
		}
		if best == nil || m.Version > best.Version {
			best = m
		}
	}
	return best
}

func (s *solver) problem(format string, args ...any) {
	if len(s.problems) < 100 {
		s.problems = append(s.problems, fmt.Sprintf(format, args...))
	}
}

// run links packages to their modules, then follows the requirements of everything
// chosen until nothing new is chosen.
func (s *solver) run() error {
	for _, m := range s.mods {
		for _, a := range m.Artifacts {
			for _, p := range s.byNEVRA[a] {
				if p.module == nil || m.entry >= 0 && p.module.entry < 0 {
					p.module = m
				}
			}
		}
	}
	for _, p := range s.queue { // chosen before the links were known
		if p.module != nil {
			s.chooseModule(p.module)
		}
	}
	for len(s.queue) > 0 {
		p := s.queue[0]
		s.queue = s.queue[1:]
		if p.Arch == "src" || p.Arch == "nosrc" {
			continue // a source package's requirements are build requirements
		}
		for _, d := range p.Requires {
			if err := s.need(p, d, true); err != nil {
				return err
			}
		}
		for _, d := range p.Recommends {
			if err := s.need(p, d, false); err != nil {
				return err
			}
		}
	}
	sort.Strings(s.problems)
	return nil
}

// need makes sure a requirement of p is met; strict ones that can't be are problems.
func (s *solver) need(p *solvPkg, d repodata.Dep, strict bool) error {
	if strings.HasPrefix(d.Name, "rpmlib(") {
		return nil // provided by rpm itself
	}
	if strings.HasPrefix(d.Name, "(") {
		rd, err := parseRichDep(d.Name)
		if err != nil {
			s.problem("%s of %s: %v", d.Name, p.nevra(), err)
			return nil
		}
		ok, err := s.ensure(p, rd)
		if err == nil && !ok && strict {
			s.problem("nothing provides %s needed by %s", d.Name, p.nevra())
		}
		return err
	}
	ok, err := s.ensureLeaf(p, d)
	if err == nil && !ok && strict {
		s.problem("nothing provides %s needed by %s", depString(d), p.nevra())
	}
	return err
}

func depString(d repodata.Dep) string {
	if d.Flags == "" {
		return d.Name
	}
	op := map[string]string{"EQ": "=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}[d.Flags]
	evr := d.Version
	if d.Epoch != "" && d.Epoch != "0" {
		evr = d.Epoch + ":" + evr
	}
	if d.Release != "" {
		evr += "-" + d.Release
	}
	return d.Name + " " + op + " " + evr
}

// ensureLeaf meets one capability: true when it is met or was made met.
func (s *solver) ensureLeaf(p *solvPkg, d repodata.Dep) (bool, error) {
	provs, err := s.providers(d)
	if err != nil {
		return false, err
	}
	var best *solvPkg
	for _, c := range provs {
		if c.installed || s.chosen[c.id] {
			return true, nil
		}
		if c.entry >= 0 && c.Arch != "src" && c.Arch != "nosrc" && (best == nil || s.better(p, d, c, best)) {
			best = c
		}
	}
	if best == nil {
		return false, nil
	}
	s.choose(best)
	return true, nil
}

// met says whether a capability is provided by what destinations have or get.
func (s *solver) met(d repodata.Dep) (bool, error) {
	provs, err := s.providers(d)
	for _, c := range provs {
		if c.installed || s.chosen[c.id] {
			return true, err
		}
	}
	return false, err
}

// ensure meets a rich dependency as far as it can.
func (s *solver) ensure(p *solvPkg, rd *richDep) (bool, error) {
	switch rd.op {
	case "":
		return s.ensureLeaf(p, rd.leaf)
	case "and", "with":
		ok := true
		for _, a := range rd.args {
			got, err := s.ensure(p, a)
			if err != nil {
				return false, err
			}
			ok = ok && got
		}
		return ok, nil
	case "or":
		if ok, err := s.holds(rd); ok || err != nil {
			return ok, err
		}
		for _, a := range rd.args {
			if got, err := s.ensure(p, a); got || err != nil {
				return got, err
			}
		}
		return false, nil
	case "if", "unless":
		cond, err := s.holds(rd.args[1])
		if err != nil {
			return false, err
		}
		if cond == (rd.op == "if") {
			return s.ensure(p, rd.args[0])
		}
		if rd.hasElseCase {
			return s.ensure(p, rd.args[2])
		}
		return true, nil
	case "without":
		return s.ensure(p, rd.args[0])
	}
	return false, fmt.Errorf("unknown operator %q", rd.op)
}

// holds evaluates a rich dependency against what destinations have or get.
func (s *solver) holds(rd *richDep) (bool, error) {
	switch rd.op {
	case "":
		return s.met(rd.leaf)
	case "and", "with", "or":
		for _, a := range rd.args {
			ok, err := s.holds(a)
			if err != nil {
				return false, err
			}
			if rd.op == "or" && ok {
				return true, nil
			}
			if rd.op != "or" && !ok {
				return false, nil
			}
		}
		return rd.op != "or", nil
	case "if", "unless":
		then, err := s.holds(rd.args[0])
		if err != nil {
			return false, err
		}
		cond, err := s.holds(rd.args[1])
		if err != nil {
			return false, err
		}
		if cond == (rd.op == "if") {
			return then, nil
		}
		if rd.hasElseCase {
			return s.holds(rd.args[2])
		}
		return true, nil
	case "without":
		a, err := s.holds(rd.args[0])
		if err != nil || !a {
			return false, err
		}
		b, err := s.holds(rd.args[1])
		return !b, err
	}
	return false, fmt.Errorf("unknown operator %q", rd.op)
}

// providers lists the packages that provide a capability in a matching version; a
// path is also provided by every package that installs it.
func (s *solver) providers(d repodata.Dep) ([]*solvPkg, error) {
	var out []*solvPkg
	for _, pr := range s.provides[d.Name] {
		if rangesOverlap(pr.dep, d) {
			out = append(out, pr.p)
		}
	}
	if strings.HasPrefix(d.Name, "/") {
		fp, err := s.fileProviders(d.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, fp...)
	}
	return out, nil
}

// fileProviders finds the packages of the loaded versions whose file list has path,
// searching the stored filelists fragments.
func (s *solver) fileProviders(path string) ([]*solvPkg, error) {
	if fp, ok := s.files[path]; ok {
		return fp, nil
	}
	marker := repodata.FileMarker(path)
	var out []*solvPkg
	seen := map[int64]bool{}
	for _, vs := range s.sets {
		rows, err := s.q.Query(s.ctx, `SELECT f.content_id FROM rpm_fragments f JOIN contents c ON c.id = f.content_id
			WHERE `+s.q.Dialect().Contains("f.filelists_xml", false)+` AND `+inVersion, marker, vs.repoID, vs.number, vs.number)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			if p := s.pkgs[id]; p != nil && !seen[id] {
				seen[id] = true
				out = append(out, p)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	s.files[path] = out
	return out, nil
}

// better says whether candidate a meets requirement d of p better than b: a module
// stream already enabled, p's architecture, the capability's own name, the newest
// version, the shortest name.
func (s *solver) better(p *solvPkg, d repodata.Dep, a, b *solvPkg) bool {
	key := func(c *solvPkg) [3]int {
		mod := 0
		if c.module != nil && !s.enabled[c.module.stream()] {
			mod = 1
		}
		return [3]int{mod, archRank(p.Arch, c.Arch), btoi(c.Name != d.Name)}
	}
	ka, kb := key(a), key(b)
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] < kb[i]
		}
	}
	if a.Name == b.Name {
		if c := a.compare(&b.pkgInfo); c != 0 {
			return c > 0
		}
	}
	if len(a.Name) != len(b.Name) {
		return len(a.Name) < len(b.Name)
	}
	return a.Name < b.Name
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// archRank orders the architectures of candidates for a package of arch want.
func archRank(want, arch string) int {
	switch {
	case arch == want:
		return 0
	case arch == "noarch":
		return 1
	case want == "noarch" && (arch == "x86_64" || arch == "aarch64" || arch == "ppc64le" || arch == "s390x"):
		return 2
	}
	return 3
}

// rangesOverlap says whether a provided capability satisfies a required one, as rpm
// compares them: no version on either side matches, a release missing on either side
// is not compared.
func rangesOverlap(prov, req repodata.Dep) bool {
	if prov.Flags == "" || req.Flags == "" {
		return true
	}
	pr, rr := prov.Release, req.Release
	if pr == "" || rr == "" {
		pr, rr = "", ""
	}
	c := compareEVR(prov.Epoch, prov.Version, pr, req.Epoch, req.Version, rr)
	pf, rf := senses(prov.Flags), senses(req.Flags)
	switch {
	case c < 0:
		return pf&senseGT != 0 || rf&senseLT != 0
	case c > 0:
		return pf&senseLT != 0 || rf&senseGT != 0
	}
	return pf&rf != 0
}

const (
	senseLT = 1 << iota
	senseEQ
	senseGT
)

func senses(flags string) int {
	return map[string]int{"EQ": senseEQ, "LT": senseLT, "LE": senseLT | senseEQ, "GT": senseGT, "GE": senseGT | senseEQ}[flags]
}
