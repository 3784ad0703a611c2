package repodata

// The package elements of primary, filelists and other.

import (
	"slices"
)

// version reads <version epoch= ver= rel=>; a missing epoch is "0".
func (r *Reader) version(p *Package) error {
	t := r.t
	e, _ := t.attr("epoch")
	v, _ := t.attr("ver")
	rel, _ := t.attr("rel")
	p.Epoch, p.Version, p.Release = intern(e), string(v), string(rel)
	if p.Epoch == "" {
		p.Epoch = "0"
	}
	return t.skip()
}

func (r *Reader) readPrimary(p *Package) error {
	t := r.t
	if t.empty {
		return r.checkPrimary(p)
	}
	for {
		k, err := t.next()
		if err != nil {
			return err
		}
		if k == tokEnd {
			break
		}
		if k != tokStart {
			continue
		}
		uri, local := t.resolve(t.name)
		if uri != r.rootNS {
			err = t.skip()
		} else {
			switch string(local) {
			case "name":
				p.Name, err = r.text()
			case "arch":
				var b []byte
				b, err = t.textContent()
				p.Arch = intern(b)
			case "version":
				err = r.version(p)
			case "checksum":
				typ, _ := t.attr("type")
				p.ChecksumType = checksumType(typ)
				var b []byte
				if b, err = t.textContent(); err == nil {
					p.PkgID, err = r.pkgID(b)
				}
			case "summary":
				p.Summary, err = r.text()
			case "description":
				p.Description, err = r.text()
			case "packager":
				p.Packager, err = r.text()
			case "url":
				p.URL, err = r.text()
			case "time":
				if p.TimeFile, err = r.numAttr("file"); err == nil {
					if p.TimeBuild, err = r.numAttr("build"); err == nil {
						err = t.skip()
					}
				}
			case "size":
				if p.SizePackage, err = r.numAttr("package"); err == nil {
					if p.SizeInstalled, err = r.numAttr("installed"); err == nil {
						if p.SizeArchive, err = r.numAttr("archive"); err == nil {
							err = t.skip()
						}
					}
				}
			case "location":
				href, _ := t.attr("href")
				base, _ := t.attr("xml:base")
				p.LocationHref, p.LocationBase = string(href), string(base)
				err = t.skip()
			case "format":
				err = r.readFormat(p)
			default:
				err = t.skip()
			}
		}
		if err != nil {
			return err
		}
	}
	return r.checkPrimary(p)
}

func (r *Reader) checkPrimary(p *Package) error {
	var missing string
	switch {
	case p.Name == "":
		missing = "<name>"
	case p.Arch == "":
		missing = "<arch>"
	case p.Version == "":
		missing = `<version ver="...">`
	case p.Release == "":
		missing = `<version rel="...">`
	case p.PkgID == "":
		missing = `<checksum pkgid="YES">`
	case p.ChecksumType == "":
		missing = `<checksum type="...">`
	case p.LocationHref == "":
		missing = `<location href="...">`
	}
	if missing != "" {
		return r.pkgErr(p, invalidErr("missing "+missing))
	}
	return nil
}

func (r *Reader) readFormat(p *Package) error {
	t := r.t
	if t.empty {
		return nil
	}
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
		switch {
		case uri == nsRPM:
			switch string(local) {
			case "license":
				p.License, err = r.text()
			case "vendor":
				p.Vendor, err = r.text()
			case "group":
				p.Group, err = r.text()
			case "buildhost":
				p.BuildHost, err = r.text()
			case "sourcerpm":
				p.SourceRPM, err = r.text()
			case "header-range":
				if p.HeaderStart, err = r.numAttr("start"); err == nil {
					if p.HeaderEnd, err = r.numAttr("end"); err == nil {
						err = t.skip()
					}
				}
			case "provides":
				err = r.readDeps(&p.Provides, false)
			case "requires":
				err = r.readDeps(&p.Requires, true)
			case "conflicts":
				err = r.readDeps(&p.Conflicts, false)
			case "obsoletes":
				err = r.readDeps(&p.Obsoletes, false)
			case "suggests":
				err = r.readDeps(&p.Suggests, false)
			case "enhances":
				err = r.readDeps(&p.Enhances, false)
			case "recommends":
				err = r.readDeps(&p.Recommends, false)
			case "supplements":
				err = r.readDeps(&p.Supplements, false)
			default:
				err = t.skip()
			}
		case uri == r.rootNS && string(local) == "file":
			err = r.readFile()
		default:
			err = t.skip()
		}
		if err != nil {
			return err
		}
	}
}

func (r *Reader) readDeps(list *[]Dep, requires bool) error {
	t := r.t
	if t.empty {
		return nil
	}
	r.deps = r.deps[:0]
	for {
		k, err := t.next()
		if err != nil {
			return err
		}
		if k == tokEnd {
			if len(r.deps) > 0 {
				*list = append(slices.Clip(*list), r.deps...)
			}
			return nil
		}
		if k != tokStart {
			continue
		}
		if uri, local := t.resolve(t.name); uri == nsRPM && string(local) == "entry" {
			name, _ := t.attr("name")
			if len(name) == 0 {
				return r.tagErr("<rpm:entry> without a name")
			}
			if err := r.count1(); err != nil {
				return err
			}
			flags, _ := t.attr("flags")
			epoch, _ := t.attr("epoch")
			ver, _ := t.attr("ver")
			rel, _ := t.attr("rel")
			d := Dep{Name: string(name)}
			if len(flags) > 0 { // without flags a version means nothing (and is not written)
				d.Flags, d.Epoch, d.Version, d.Release = intern(flags), intern(epoch), string(ver), string(rel)
			}
			if pre, ok := t.attr("pre"); ok && requires {
				// createrepo_c's reading of the attribute.
				switch string(pre) {
				case "0", "FALSE", "false", "False":
				default:
					d.Pre = true
				}
			}
			r.deps = append(r.deps, d)
		}
		if err := t.skip(); err != nil {
			return err
		}
	}
}

// readFile reads a <file>; an empty one is dropped, an unknown type (createrepo_c
// warns) makes a regular file.
func (r *Reader) readFile() error {
	if err := r.count1(); err != nil {
		return err
	}
	typ, _ := r.t.attr("type")
	ft := ""
	switch string(typ) {
	case "dir":
		ft = "dir"
	case "ghost":
		ft = "ghost"
	}
	b, err := r.t.textContent()
	if err != nil || len(b) == 0 {
		return err
	}
	r.files = append(r.files, File{Type: ft, Path: string(b)})
	return nil
}

// readSecondary reads a filelists or other <package pkgid= name= arch=>.
func (r *Reader) readSecondary(p *Package) error {
	t := r.t
	name, _ := t.attr("name")
	arch, _ := t.attr("arch")
	p.Name, p.Arch = string(name), intern(arch)
	id, ok := t.attr("pkgid")
	if !ok || len(id) == 0 {
		return r.pkgErr(p, invalidErr(`missing <package pkgid="...">`))
	}
	var err error
	if p.PkgID, err = r.pkgID(id); err != nil {
		return err
	}
	if t.empty {
		return nil
	}
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
		switch {
		case uri != r.rootNS:
			err = t.skip()
		case string(local) == "version":
			err = r.version(p)
		case string(local) == "file" && r.kind == Filelists:
			err = r.readFile()
		case string(local) == "changelog" && r.kind == Other:
			err = r.readChangelog(p)
		default:
			err = t.skip()
		}
		if err != nil {
			return err
		}
	}
}

func (r *Reader) readChangelog(p *Package) error {
	if err := r.count1(); err != nil {
		return err
	}
	author, _ := r.t.attr("author")
	c := Changelog{Author: string(author)}
	var err error
	if c.Date, err = r.numAttr("date"); err != nil {
		return err
	}
	if c.Text, err = r.text(); err != nil {
		return err
	}
	r.changelogs = append(r.changelogs, c)
	return nil
}
