package certgen

import (
	"bytes"
	"compress/zlib"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Entitlement signs a client certificate (common name cn) whose Red Hat entitlement (v3,
// as Candlepin issues them) grants paths, such as "/ACME/Library/content/dist/$releasever/os".
func (ca *CA) Entitlement(cn string, paths ...string) (Leaf, error) {
	data, err := asn1.Marshal(EncodeV3(paths))
	if err != nil {
		return Leaf{}, err
	}
	version, err := asn1.MarshalWithParams("3.4", "utf8")
	if err != nil {
		return Leaf{}, err
	}
	tmpl := template(cn)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	tmpl.ExtraExtensions = []pkix.Extension{
		{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 2312, 9, 6}, Value: version},
		{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 2312, 9, 7}, Value: data},
	}
	return ca.leaf(tmpl)
}

// Entitlement certificates: v3 entitlement data written as Candlepin does (X509V3ExtensionUtil), written
// anew from its description, without the decoder's code, so that a decoder mistake
// shows as a failed round trip: a path tree whose path ends all lead to one shared end
// node, equal subtrees merged, words ordered rarest first, and Huffman codes built by
// repeatedly merging the two lightest entries of a list (the first of equal weights;
// merged entries go to the end of the list).

// Arc is an edge of a graph to encode: a word (an index in the word list) and a node.
type Arc struct{ Word, To int }

// EncodeV3 encodes the v3 entitlement data (the zlib-compressed, Huffman-coded path
// tree of OID 1.3.6.1.4.1.2312.9.7) of a certificate granting paths.
func EncodeV3(paths []string) []byte {
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
	graph := make([][]Arc, len(order))
	for i, n := range order {
		for _, k := range kids[n] {
			graph[i] = append(graph[i], Arc{wordIndex[k.word], index[canon[sigs[k.to]]]})
		}
	}
	if len(graph) == 2 { // root and end: the node code needs two leaves
		graph = append(graph, nil)
	}
	return WriteV3(words, graph)
}

// WriteV3 encodes a graph (node 0 the root) over words, whatever its shape.
func WriteV3(words []string, graph [][]Arc) []byte {
	var out bytes.Buffer
	// Writing to a bytes.Buffer at a valid level cannot fail.
	zw, _ := zlib.NewWriterLevel(&out, zlib.BestCompression)
	for _, w := range words {
		zw.Write([]byte(w + "\x00"))
	}
	zw.Close()
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
	wordCodes := ListHuffman(len(words) + 1) // the end word is the last, heaviest
	nodeCodes := ListHuffman(n - 1)          // every node but the root
	var bits []byte
	for _, kids := range graph {
		for _, k := range kids {
			bits = append(bits, wordCodes[k.Word]...)
			bits = append(bits, nodeCodes[k.To-1]...)
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

// ListHuffman returns the codes ('0' and '1' strings) of m symbols weighing 1..m, built
// as Candlepin's makeTrie builds them.
func ListHuffman(m int) [][]byte {
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
