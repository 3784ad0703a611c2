package rpm

import "pith/content/rpm/rpmfile"

// vercmp compares two version (or release) strings the way rpm's rpmvercmp does.
func vercmp(a, b string) int { return rpmfile.Vercmp(a, b) }

// compareEVR orders two epoch:version-release triples as rpm does; an empty epoch is 0.
func compareEVR(e1, v1, r1, e2, v2, r2 string) int {
	if e1 == "" {
		e1 = "0"
	}
	if e2 == "" {
		e2 = "0"
	}
	if c := vercmp(e1, e2); c != 0 {
		return c
	}
	if c := vercmp(v1, v2); c != 0 {
		return c
	}
	return vercmp(r1, r2)
}
