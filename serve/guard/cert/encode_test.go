package cert

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// This file writes v3 entitlement data as Candlepin does (X509V3ExtensionUtil), written
// anew from its description, without the decoder's code, so that a decoder mistake
// shows as a failed round trip: a path tree whose path ends all lead to one shared end
// node, equal subtrees merged, words ordered rarest first, and Huffman codes built by
// repeatedly merging the two lightest entries of a list (the first of equal weights;
// merged entries go to the end of the list).

// arc is an edge of a graph to encode: a word (an index in the word list) and a node.
type arc struct{ word, to int }

// encodeV3 encodes the tree of paths.
func encodeV3(t testing.TB, paths []string) []byte {
	t.Helper()
	// Build the tree with node names; "end" is the shared end node.
	kids := map[string][]struct {
		word string
		to   string
	}{"root": nil, "end": nil}
	fresh := 0
	for _, p := range paths {
		segs := strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
		at := "root"
		for i, s := range segs {
			last := i == len(segs)-1
			next := ""
			for _, k := range kids[at] {
				if k.word == s && (k.to == "end") == last {
					next = k.to
				}
			}
			if next == "" {
				if last {
					next = "end"
				} else {
					fresh++
					next = fmt.Sprint("n", fresh)
					kids[next] = nil
				}
				kids[at] = append(kids[at], struct{ word, to string }{s, next})
			}
			at = next
		}
	}
	// Merge equal subtrees: a node's signature is its sorted (word, child signature)s.
	sigs := map[string]string{}
	canon := map[string]string{} // signature -> the node kept
	var sig func(n string) string
	sig = func(n string) string {
		if s, ok := sigs[n]; ok {
			return s
		}
		var parts []string
		for _, k := range kids[n] {
			parts = append(parts, k.word+"\x01"+sig(k.to))
		}
		sort.Strings(parts)
		s := "(" + strings.Join(parts, "\x02") + ")"
		if n == "root" {
			s = "root" // the root is never merged
		}
		sigs[n] = s
		if _, ok := canon[s]; !ok {
			canon[s] = n
		}
		return s
	}
	sig("root")
	// Order nodes root first, breadth first, and number the words by rarity.
	order, index := []string{"root"}, map[string]int{"root": 0}
	count := map[string]int{}
	for i := 0; i < len(order); i++ {
		for _, k := range kids[order[i]] {
			to := canon[sigs[k.to]]
			count[k.word]++
			if _, ok := index[to]; !ok {
				index[to] = len(order)
				order = append(order, to)
			}
		}
	}
	words := make([]string, 0, len(count))
	for w := range count {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if count[words[i]] != count[words[j]] {
			return count[words[i]] < count[words[j]]
		}
		return words[i] < words[j]
	})
	wordIndex := map[string]int{}
	for i, w := range words {
		wordIndex[w] = i
	}
	graph := make([][]arc, len(order))
	for i, n := range order {
		for _, k := range kids[n] {
			graph[i] = append(graph[i], arc{wordIndex[k.word], index[canon[sigs[k.to]]]})
		}
	}
	if len(graph) == 2 { // root and end: the node code needs two leaves
		graph = append(graph, nil)
	}
	return writeV3(t, words, graph)
}

// writeV3 encodes a graph (node 0 the root) over words, whatever its shape.
func writeV3(t testing.TB, words []string, graph [][]arc) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&out, zlib.BestCompression)
	for _, w := range words {
		zw.Write([]byte(w + "\x00"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	n := len(graph)
	if n < 128 {
		out.WriteByte(byte(n))
	} else {
		var be []byte
		for v := n; v > 0; v >>= 8 {
			be = append([]byte{byte(v)}, be...)
		}
		out.WriteByte(byte(128 + len(be)))
		out.Write(be)
	}
	wordCodes := listHuffman(len(words) + 1) // the end word is the last, heaviest
	nodeCodes := listHuffman(n - 1)          // every node but the root
	var bits []byte
	for _, kids := range graph {
		for _, k := range kids {
			bits = append(bits, wordCodes[k.word]...)
			bits = append(bits, nodeCodes[k.to-1]...)
		}
		bits = append(bits, wordCodes[len(words)]...)
	}
	for i := 0; i < len(bits); i += 8 {
		var b byte
		for j := 0; j < 8; j++ {
			b <<= 1
			if i+j < len(bits) && bits[i+j] == '1' {
				b |= 1
			}
		}
		out.WriteByte(b)
	}
	return out.Bytes()
}

// listHuffman returns the codes ('0' and '1' strings) of m symbols weighing 1..m, built
// as Candlepin's makeTrie builds them.
func listHuffman(m int) [][]byte {
	type hnode struct {
		weight      int
		sym         int // -1 for a merged node
		left, right *hnode
	}
	list := make([]*hnode, m)
	for i := range list {
		list[i] = &hnode{weight: i + 1, sym: i}
	}
	smallest := func(exclude int) int {
		best := -1
		for i, n := range list {
			if i != exclude && (best == -1 || n.weight < list[best].weight) {
				best = i
			}
		}
		return best
	}
	for len(list) > 1 {
		a := smallest(-1)
		b := smallest(a)
		l, r := list[a], list[b]
		list = slices.DeleteFunc(list, func(n *hnode) bool { return n == l || n == r })
		list = append(list, &hnode{weight: l.weight + r.weight, sym: -1, left: l, right: r})
	}
	codes := make([][]byte, m)
	var walk func(n *hnode, code []byte)
	walk = func(n *hnode, code []byte) {
		if n.sym >= 0 {
			codes[n.sym] = code
			return
		}
		walk(n.left, append(slices.Clone(code), '0'))
		walk(n.right, append(slices.Clone(code), '1'))
	}
	walk(list[0], nil)
	return codes
}
