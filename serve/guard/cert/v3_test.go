package cert

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"math/rand/v2"
	"pith/internal/certgen"
	"slices"
	"strings"
	"testing"
)

// paths lists the granted paths of a tree, at most limit of them and stopping after
// as many steps again (a looping tree has endless paths that end nowhere), to compare
// with what was encoded.
func (t *tree) paths(limit int) []string {
	var out []string
	steps := 0
	var walk func(i int32, prefix string, depth int)
	walk = func(i int32, prefix string, depth int) {
		if steps++; len(out) >= limit || steps > 64*limit || depth > maxSegments {
			return
		}
		nd := &t.nodes[i]
		if nd.end {
			out = append(out, prefix)
			return
		}
		for _, e := range append(slices.Clone(nd.lit), nd.wild...) {
			walk(e.to, prefix+"/"+e.word, depth+1)
		}
	}
	if len(t.nodes) > 0 {
		walk(0, "", 0)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestV3RoundTrip(t *testing.T) {
	t.Parallel()
	cases := [][]string{
		{"/one"},
		{"/a/b"},
		{"/content/dist/rhel/server/7/$releasever/$basearch/os", "/content/dist/rhel/server/7/$releasever/$basearch/debug"},
		// Katello: organization and lifecycle environment before the path; a path
		// granted as well as a longer one below it.
		{"/ACME/Library/custom/Product/Repo", "/ACME/Library/custom/Product/Repo/extra", "/ACME/Dev/custom/Product/Repo"},
		{"/foo/path/never", "/foo/path/always/$releasever", "/path/to/$basearch/$releasever/awesomeos", "/path/to/awesomeos/x86_64"},
	}
	// And a large random one: many paths sharing segments, as an organisation with
	// many products has.
	r := rand.New(rand.NewPCG(1, 2))
	var big []string
	for range 2000 {
		big = append(big, fmt.Sprintf("/org%d/env%d/content/dist/p%d/$releasever/$basearch/r%d", r.IntN(3), r.IntN(4), r.IntN(300), r.IntN(5)))
	}
	cases = append(cases, big)
	for _, paths := range cases {
		tr, err := decodeV3(certgen.EncodeV3(paths))
		if err != nil {
			t.Fatalf("%d paths: %v", len(paths), err)
		}
		want := slices.Clone(paths)
		slices.Sort(want)
		want = slices.Compact(want)
		if got := tr.paths(1 << 20); !slices.Equal(got, want) {
			t.Errorf("%d paths: decoded %d paths, first %q; want %d, first %q", len(paths), len(got), got[:min(3, len(got))], len(want), want[:min(3, len(want))])
		}
		for _, p := range paths {
			if !tr.allows(p) || !tr.allows(p+"/repodata/repomd.xml") {
				t.Errorf("%s is not allowed by its own tree", p)
			}
		}
	}
}

// zlibOf compresses b.
func zlibOf(b []byte) []byte {
	var out bytes.Buffer
	zw := zlib.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// TestV3Hostile: data no Candlepin writes fails with an error, or decodes to a tree
// whose checks still end.
func TestV3Hostile(t *testing.T) {
	t.Parallel()
	good := certgen.EncodeV3([]string{"/a/b", "/c"})
	words := zlibOf([]byte("a\x00b\x00"))
	badSum := slices.Clone(words)
	badSum[len(badSum)-1] ^= 1
	for name, data := range map[string][]byte{
		"empty":                nil,
		"not zlib":             []byte("hello"),
		"zlib bomb":            append(zlibOf(make([]byte, 4<<20)), 3, 0),
		"bad checksum":         append(badSum, 3, 0xff),
		"no node count":        words,
		"no NUL at the end":    append(zlibOf([]byte("a\x00b")), 3, 0xff),
		"an empty word":        append(zlibOf([]byte("a\x00\x00b\x00")), 3, 0xff),
		"no words":             append(zlibOf([]byte("\x00")), 3, 0xff),
		"not UTF-8":            append(zlibOf([]byte("\xff\x00")), 3, 0xff),
		"too many words":       append(zlibOf(bytes.Repeat([]byte("w\x00"), maxWords)), 3, 0xff),
		"two nodes":            append(slices.Clone(words), 2, 0xff),
		"count of 0 bytes":     append(slices.Clone(words), 0x80, 0xff),
		"count of 5 bytes":     append(slices.Clone(words), 0x85, 0, 0, 0, 0, 3),
		"huge node count":      append(slices.Clone(words), 0x84, 0x7f, 0xff, 0xff, 0xff, 0xff),
		"more nodes than bits": append(slices.Clone(words), 0x82, 0x01, 0x00, 0xff, 0xff),
		"bits end early":       good[:len(good)-1],
	} {
		if _, err := decodeV3(data); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}

	// A graph that loops (a node its own child, under a variable) and is wide: the
	// check still walks each segment once.
	loop := certgen.WriteV3([]string{"$any", "x"}, [][]certgen.Arc{
		{{Word: 0, To: 1}, {Word: 0, To: 1}, {Word: 1, To: 2}},
		{{Word: 0, To: 1}, {Word: 0, To: 0 + 1}, {Word: 1, To: 2}},
		nil,
	})
	tr, err := decodeV3(loop)
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("/q", maxSegments-1)
	if !tr.allows(deep+"/x") || tr.allows(deep) || tr.allows(deep+"/q/x") {
		t.Error("the looping tree allows the wrong paths")
	}

	// An edge to the root is no node code at all: the root has none.
	// A tree whose root has no edges grants nothing (Pulp would grant everything).
	bare := certgen.WriteV3([]string{"a"}, [][]certgen.Arc{nil, nil, nil})
	if tr, err := decodeV3(bare); err != nil || tr.allows("/a") || tr.allows("/") {
		t.Errorf("a tree of no paths: err %v, allows something", err)
	}
}

func FuzzDecodeV3(f *testing.F) {
	f.Add(certgen.EncodeV3([]string{"/content/dist/rhel/$releasever/$basearch/os", "/ACME/Library/custom/p/r"}))
	f.Add(certgen.EncodeV3([]string{"/a"}))
	f.Add(certgen.WriteV3([]string{"$any", "x"}, [][]certgen.Arc{{{Word: 0, To: 1}}, {{Word: 0, To: 1}, {Word: 1, To: 2}}, nil}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := decodeV3(data)
		if err != nil {
			return
		}
		if len(tr.nodes) > maxNodes {
			t.Fatalf("%d nodes", len(tr.nodes))
		}
		edges := 0
		for _, nd := range tr.nodes {
			edges += len(nd.lit) + len(nd.wild)
			for _, e := range append(slices.Clone(nd.lit), nd.wild...) {
				if e.to <= 0 || int(e.to) >= len(tr.nodes) {
					t.Fatalf("an edge to node %d of %d", e.to, len(tr.nodes))
				}
			}
		}
		if edges > maxEdges {
			t.Fatalf("%d edges", edges)
		}
		for _, p := range tr.paths(16) {
			if !tr.allows(p) {
				t.Errorf("%q is listed but not allowed", p)
			}
		}
		tr.allows("/a/b/c/d/e/f")
	})
}
