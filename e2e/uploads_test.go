package e2e

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Two overlapping chunks PUT at once (to two API processes where there are two): exactly
// one is accepted, the other gets Pulp's 400, and the upload commits with the accepted
// chunk's bytes, whichever won and however the two overlap (the same range with other
// bytes included).
func TestChunkOverlapRace(t *testing.T) {
	for name, start := range installations() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := start(t)
			other := s.api2
			if other == "" {
				other = s.url
			}
			const total = 3000
			type chunk struct {
				off int
				alt bool // other bytes than the file's
				n   int
			}
			pairs := [][2]chunk{
				{{0, false, 2000}, {1000, false, 2000}},
				{{1000, false, 2000}, {0, false, 1500}},
				{{0, false, 2000}, {0, true, 2000}},
				{{500, true, 1000}, {0, false, 2000}},
			}
			for i := 0; i < 24; i++ {
				file, alt := make([]byte, total), make([]byte, total)
				rand.Read(file)
				rand.Read(alt)
				code, up := call(t, "POST", s.url+"/pulp/api/v3/uploads/", "application/json", strings.NewReader(fmt.Sprintf(`{"size": %d}`, total)))
				if code != 201 {
					t.Fatalf("create upload: %d %v", code, up)
				}
				href := up["pulp_href"].(string)
				pair := pairs[i%len(pairs)]
				bytesOf := func(c chunk) []byte {
					if c.alt {
						return alt[c.off : c.off+c.n]
					}
					return file[c.off : c.off+c.n]
				}
				var wg sync.WaitGroup
				codes, bodies, errs := make([]int, 2), make([]map[string]any, 2), make([]error, 2)
				for j, c := range pair {
					wg.Add(1)
					go func() {
						defer wg.Done()
						codes[j], bodies[j], errs[j] = sendChunk([]string{s.url, other}[j], href, c.off, total, bytesOf(c))
					}()
				}
				wg.Wait()
				won := -1
				for j := range pair {
					switch {
					case errs[j] != nil:
						t.Fatalf("attempt %d: chunk %d: %v", i, j, errs[j])
					case codes[j] == 200 && won < 0:
						won = j
					case codes[j] != 400 || !strings.Contains(fmt.Sprint(bodies[j]), "overlaps"):
						t.Fatalf("attempt %d, chunks %+v: answers %d %v and %d %v; want one 200 and one 400 naming the overlap",
							i, pair, codes[0], bodies[0], codes[1], bodies[1])
					}
				}
				if won < 0 {
					t.Fatalf("attempt %d: both chunks refused: %v %v", i, bodies[0], bodies[1])
				}
				// The rest of the file around the accepted chunk, then the commit.
				w := pair[won]
				want := bytes.Clone(file)
				copy(want[w.off:], bytesOf(w))
				for _, r := range [][2]int{{0, w.off}, {w.off + w.n, total}} {
					if r[0] == r[1] {
						continue
					}
					if code, m, err := sendChunk(s.url, href, r[0], total, want[r[0]:r[1]]); err != nil || code != 200 {
						t.Fatalf("attempt %d: chunk %d-%d: %d %v %v", i, r[0], r[1]-1, code, m, err)
					}
				}
				commitUpload(t, other, href, want)
			}
		})
	}
}
