package cert

import (
	"fmt"
	"slices"
	"strings"
)

// tree is a graph of path segments from node 0, the root. Candlepin's v3 encoding shares
// equal subtrees, so a node may have several parents; a hostile one may even loop.
// Matching walks the request path's segments once, following every edge a segment
// matches, so it costs at most segments × edges whatever the shape.
type tree struct {
	nodes []node
}

type node struct {
	end  bool   // a granted path ends here: everything below it is granted
	lit  []edge // sorted by word; a word may repeat
	wild []edge // $variables
}

type edge struct {
	word string
	to   int32
	pre  int32 // of a variable: the length of word's literal part, before its "$"
}

// allows walks path through the tree; see Entitlement.Allows.
func (t *tree) allows(path string) bool {
	if len(t.nodes) == 0 || !clean(path) {
		return false
	}
	var buf1, buf2 [8]int32
	var small [4]uint64
	seen := small[:]
	if len(t.nodes) > 64*len(small) {
		seen = make([]uint64, (len(t.nodes)+63)/64)
	}
	cur, next := append(buf1[:0], 0), buf2[:0]
	for rest := path; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		if seg == "" {
			continue
		}
		next = next[:0]
		for _, i := range cur {
			nd := &t.nodes[i]
			if nd.end {
				return true
			}
			k, _ := slices.BinarySearchFunc(nd.lit, seg, func(e edge, s string) int { return strings.Compare(e.word, s) })
			for ; k < len(nd.lit) && nd.lit[k].word == seg; k++ {
				next = visit(next, seen, nd.lit[k].to)
			}
			for _, w := range nd.wild {
				if len(seg) > int(w.pre) && strings.HasPrefix(seg, w.word[:w.pre]) {
					next = visit(next, seen, w.to)
				}
			}
		}
		for _, i := range next {
			seen[i/64] &^= 1 << (i % 64)
		}
		if len(next) == 0 {
			return false
		}
		cur, next = next, cur
	}
	for _, i := range cur {
		if t.nodes[i].end {
			return true
		}
	}
	return false
}

// clean reports whether path has no "." or ".." segment anywhere (even below a granted
// prefix, where it could climb out of it) and at most maxSegments segments.
func clean(path string) bool {
	n := 0
	for rest := path; rest != ""; {
		var seg string
		seg, rest, _ = strings.Cut(rest, "/")
		switch seg {
		case "":
			continue
		case ".", "..":
			return false
		}
		if n++; n > maxSegments {
			return false
		}
	}
	return true
}

// visit adds node i to the set next unless it is there already.
func visit(next []int32, seen []uint64, i int32) []int32 {
	if seen[i/64]&(1<<(i%64)) != 0 {
		return next
	}
	seen[i/64] |= 1 << (i % 64)
	return append(next, i)
}

// v1Tree builds the tree of a v1 certificate's content paths. As in Pulp, a "$" starts a
// variable that runs to the end of its segment and matches one or more characters.
func v1Tree(paths []string) (tree, error) {
	type key struct {
		from int32
		word string // of a variable, its literal part
		wild bool
	}
	t := tree{nodes: []node{{}}}
	children := map[key]int32{}
	for _, p := range paths {
		at := int32(0)
		for seg := range strings.SplitSeq(p, "/") {
			if seg == "" {
				continue
			}
			if t.nodes[at].end {
				break // a shorter path already grants everything below
			}
			k, pre := key{from: at, word: seg}, 0
			if i := strings.IndexByte(seg, '$'); i >= 0 {
				k.word, k.wild, pre = seg[:i], true, i
			}
			if to, ok := children[k]; ok {
				at = to
				continue
			}
			if len(t.nodes) == maxNodes {
				return tree{}, fmt.Errorf("the content paths make more than %d nodes", maxNodes)
			}
			to := int32(len(t.nodes))
			t.nodes = append(t.nodes, node{})
			children[k] = to
			if k.wild {
				t.nodes[at].wild = append(t.nodes[at].wild, edge{word: seg, to: to, pre: int32(pre)})
			} else {
				t.nodes[at].lit = append(t.nodes[at].lit, edge{word: seg, to: to})
			}
			at = to
		}
		// An empty path grants nothing, as in Pulp: the root is never an end.
		if at != 0 {
			t.nodes[at].end = true
		}
	}
	for i := range t.nodes {
		t.nodes[i].sort()
	}
	return t, nil
}

func (n *node) sort() {
	slices.SortFunc(n.lit, func(a, b edge) int { return strings.Compare(a.word, b.word) })
}
