package rpmfile

import (
	"strings"

	"pith/content/rpm/repodata"
)

const (
	modeTypeMask = 0o170000
	modeDir      = 0o040000
	fileGhost    = 1 << 6 // RPMFILE_GHOST
)

// readFiles lists the package's files as createrepo_c does, from dirnames, basenames and
// dirindexes (or, in old packages, oldfilenames), typed by file mode and flags. It also
// returns their raw full paths, which the requires filter needs.
func readFiles(h *header) ([]repodata.File, []string, error) {
	paths, err := filePaths(h)
	if err != nil || len(paths) == 0 {
		return nil, nil, err
	}
	modes, okm, err := h.nums(tagFileModes, typeInt16)
	if err != nil {
		return nil, nil, err
	}
	flags, okf, err := h.nums(tagFileFlags, typeInt32)
	if err != nil {
		return nil, nil, err
	}
	if !okm || !okf {
		return nil, nil, nil
	}
	// createrepo_c lists no files at all when the digests are missing; a package with
	// files always has them, so they only bound the count here.
	n := min(len(paths), modes.len(), flags.len())
	if digests, err := h.strs(tagFileDigests); err != nil {
		return nil, nil, err
	} else if digests != nil {
		n = min(n, len(digests))
	}
	files := make([]repodata.File, n)
	for i := range n {
		var typ string
		switch {
		case modes.at(i)&modeTypeMask == modeDir:
			typ = "dir"
		case flags.at(i)&fileGhost != 0:
			typ = "ghost"
		}
		files[i] = repodata.File{Type: typ, Path: text(paths[i])}
	}
	return files, paths[:n], nil
}

// filePaths returns the raw full path of every file.
func filePaths(h *header) ([]string, error) {
	base, err := h.strs(tagBasenames)
	if err != nil {
		return nil, err
	}
	if base == nil {
		// Old packages list whole paths; rpm converts them to the form below on reading,
		// which gives back the same paths.
		return h.strs(tagOldFilenames)
	}
	dirs, err := h.strs(tagDirnames)
	if err != nil {
		return nil, err
	}
	idx, ok, err := h.nums(tagDirIndexes, typeInt32)
	if err != nil || !ok {
		return nil, err
	}
	n := min(len(base), idx.len())
	paths := make([]string, n)
	var b strings.Builder
	for i := range n {
		d := ""
		if j := idx.at(i); j < uint64(len(dirs)) {
			d = dirs[j]
		}
		b.Reset()
		b.Grow(len(d) + len(base[i]))
		b.WriteString(d)
		b.WriteString(base[i])
		paths[i] = b.String()
	}
	return paths, nil
}

// readChangelogs returns the changelog in header order (newest first, as rpmbuild writes
// it), with createrepo_c's two changes: trailing spaces are cut from the author, and
// entries with the same time get distinct times, see bumpDates.
func readChangelogs(h *header) ([]repodata.Changelog, error) {
	times, ok, err := h.nums(tagChangelogTime, typeInt32)
	if err != nil || !ok {
		return nil, err
	}
	names, err := h.strs(tagChangelogName)
	if err != nil || names == nil {
		return nil, err
	}
	texts, err := h.strs(tagChangelogText)
	if err != nil || texts == nil {
		return nil, err
	}
	n := min(times.len(), len(names), len(texts))
	if n == 0 {
		return nil, nil
	}
	out := make([]repodata.Changelog, n)
	for i := range n {
		author := names[i]
		for len(author) > 1 && author[len(author)-1] == ' ' {
			author = author[:len(author)-1]
		}
		out[i] = repodata.Changelog{Author: text(author), Date: int64(times.at(i)), Text: text(texts[i])}
	}
	bumpDates(out)
	return out, nil
}

// bumpDates gives entries that share a time distinct times, with the result of
// createrepo_c's loop: for each entry whose time equals the last new time seen, every
// entry before it that forms a chain of consecutive times (t, t+1, t+2, ... going
// towards the newest) is moved one second later. Done directly, that loop is quadratic
// in a run of equal times; here each chain is kept as one segment whose dates are
// shifted together, so it is linear.
func bumpDates(cl []repodata.Changelog) {
	// A segment covers entries [start, end]; entry p's date is v + (end - p).
	type segment struct {
		start, end int
		v          int64
	}
	var segs []segment
	var last int64
	for k := range cl {
		t := cl[k].Date
		if t == last && k > 0 {
			top := &segs[len(segs)-1] // ends at k-1, whose date is t
			top.v++
			if len(segs) > 1 {
				prev := segs[len(segs)-2]
				if prev.v == top.v+int64(top.end-top.start)+1 {
					segs[len(segs)-2] = segment{start: prev.start, end: top.end, v: top.v}
					segs = segs[:len(segs)-1]
				}
			}
		} else {
			last = t
		}
		if n := len(segs); n > 0 && segs[n-1].v == t+1 {
			segs[n-1].end, segs[n-1].v = k, t
		} else {
			segs = append(segs, segment{start: k, end: k, v: t})
		}
	}
	for _, s := range segs {
		for p := s.start; p <= s.end; p++ {
			cl[p].Date = s.v + int64(s.end-p)
		}
	}
}
