package cert

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The v3 entitlement data (Candlepin's X509V3ExtensionUtil, read by Pulp's
// rhsm_check_path and subscription-manager's PathTree) is:
//
//   - a zlib stream of the tree's distinct segments ("words"), each ended by a NUL,
//     rarest first;
//   - right after it, the number of tree nodes: one byte below 128, or 128+k followed
//     by k big-endian bytes;
//   - then a bit string, most significant bit first: for each node in turn (the root
//     first), its edges as (word code, node code) pairs and then the code of the end
//     word. A node without edges ends a granted path.
//
// Codes are Huffman codes over weights 1, 2, 3, … in list order: the words with the end
// word last, and the nodes but the root. Equal weights are merged in order of creation,
// leaves first, and the lighter of a pair goes left (bit 0).
func decodeV3(data []byte) (tree, error) {
	br := bytes.NewReader(data)
	zr, err := zlib.NewReader(br)
	if err != nil {
		return tree{}, fmt.Errorf("word list: %v", err)
	}
	// The LimitReader stops a zlib bomb after maxLex bytes. A bytes.Reader is an
	// io.ByteReader, so zlib reads no further than its stream's end.
	lex, err := io.ReadAll(io.LimitReader(zr, maxLex+1))
	if err != nil {
		return tree{}, fmt.Errorf("word list: %v", err)
	}
	if len(lex) > maxLex {
		return tree{}, fmt.Errorf("word list: more than %d bytes decompressed", maxLex)
	}
	words, err := wordList(lex)
	if err != nil {
		return tree{}, err
	}
	rest := data[len(data)-br.Len():]
	n, rest, err := nodeCount(rest)
	if err != nil {
		return tree{}, err
	}
	// Every node costs at least one bit (its end word), so a count the bits cannot
	// hold is refused before anything is allocated for it.
	if n < 3 || n > maxNodes || n > 8*len(rest) {
		return tree{}, fmt.Errorf("node count %d: want 3 to %d, and at most one a bit", n, maxNodes)
	}
	wordCode := huffman(len(words))
	nodeCode := huffman(n - 1)
	end := len(words) - 1
	t := tree{nodes: make([]node, n)}
	bits := bitReader{data: rest}
	edges := 0
	for i := range t.nodes {
		nd := &t.nodes[i]
		for {
			w, err := wordCode.decode(&bits)
			if err != nil {
				return tree{}, fmt.Errorf("node %d: %v", i, err)
			}
			if w == end {
				break
			}
			to, err := nodeCode.decode(&bits)
			if err != nil {
				return tree{}, fmt.Errorf("node %d: %v", i, err)
			}
			if edges++; edges > maxEdges {
				return tree{}, fmt.Errorf("more than %d edges", maxEdges)
			}
			// As in Pulp and subscription-manager, only a word starting with "$"
			// is a variable in v3 data.
			e := edge{word: words[w], to: int32(to + 1)}
			if strings.HasPrefix(e.word, "$") {
				nd.wild = append(nd.wild, e)
			} else {
				nd.lit = append(nd.lit, e)
			}
		}
		// The root never ends a path: in Pulp an empty tree would grant everything.
		nd.end = i > 0 && len(nd.lit) == 0 && len(nd.wild) == 0
		nd.sort()
	}
	return t, nil
}

// wordList splits the decompressed words and appends the end word, "".
func wordList(lex []byte) ([]string, error) {
	if len(lex) == 0 || lex[len(lex)-1] != 0 {
		return nil, errors.New("word list: not NUL-terminated")
	}
	s := string(lex[:len(lex)-1])
	if strings.Count(s, "\x00")+2 > maxWords {
		return nil, fmt.Errorf("word list: more than %d words", maxWords)
	}
	words := strings.Split(s, "\x00")
	for i, w := range words {
		if w == "" || !utf8.ValidString(w) {
			return nil, fmt.Errorf("word list: word %d is empty or not UTF-8", i+1)
		}
	}
	return append(words, ""), nil
}

func nodeCount(b []byte) (int, []byte, error) {
	if len(b) == 0 {
		return 0, nil, errors.New("no node count")
	}
	if b[0] < 128 {
		return int(b[0]), b[1:], nil
	}
	k := int(b[0]) - 128
	if k < 1 || k > 4 || len(b) < 1+k {
		return 0, nil, errors.New("malformed node count")
	}
	n := 0
	for _, c := range b[1 : 1+k] {
		n = n<<8 | int(c)
	}
	return n, b[1+k:], nil
}

type bitReader struct {
	data []byte
	pos  int // in bits
}

var errShort = errors.New("the node data ends early")

func (r *bitReader) bit() (int, error) {
	if r.pos >= 8*len(r.data) {
		return 0, errShort
	}
	b := r.data[r.pos/8] >> (7 - r.pos%8) & 1
	r.pos++
	return int(b), nil
}

// code is a Huffman tree: inner nodes in child, a child < 0 being the leaf of symbol
// -child-1. Decoding a symbol costs one input bit per level, so no input can make it
// loop.
type code struct {
	child [][2]int32
}

// huffman builds the code of m symbols weighing 1..m. Merged weights only grow, so two
// queues in creation order (leaves, merged nodes) replace a priority queue; taking from
// the leaves on a tie gives Candlepin's order.
func huffman(m int) code {
	type item struct {
		weight int64
		ref    int32 // a child reference as in code.child
	}
	var c code
	leaves := make([]item, m)
	for i := range leaves {
		leaves[i] = item{weight: int64(i + 1), ref: int32(-i - 1)}
	}
	merged := make([]item, 0, m)
	mi := 0
	take := func() item {
		if len(leaves) > 0 && (mi == len(merged) || leaves[0].weight <= merged[mi].weight) {
			it := leaves[0]
			leaves = leaves[1:]
			return it
		}
		mi++
		return merged[mi-1]
	}
	for len(leaves)+len(merged)-mi > 1 {
		l, r := take(), take()
		c.child = append(c.child, [2]int32{l.ref, r.ref})
		merged = append(merged, item{weight: l.weight + r.weight, ref: int32(len(c.child) - 1)})
	}
	return c
}

// decode reads one symbol. The root is the last node merged.
func (c code) decode(r *bitReader) (int, error) {
	at := int32(len(c.child) - 1)
	for {
		b, err := r.bit()
		if err != nil {
			return 0, err
		}
		next := c.child[at][b]
		if next < 0 {
			return int(-next - 1), nil
		}
		at = next
	}
}
