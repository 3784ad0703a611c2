package api

import (
	"os"
	"strings"
	"testing"

	"pith/api/access"
)

// Every condition the shipped policies name can be evaluated (rpm adds its own,
// has_perms_to_copy, through its table).
func TestShippedConditionsKnown(t *testing.T) {
	d, err := access.Core()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"../content/file/access.json", "../content/rpm/access.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		o, err := access.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		d.Merge(o)
	}
	for name, p := range d.Policies {
		for _, st := range p.Statements {
			for _, c := range st.Condition {
				n, _, _ := strings.Cut(c, ":")
				if _, ok := conditions[n]; !ok && n != "has_perms_to_copy" {
					t.Errorf("policy %s names condition %s, which pith cannot evaluate", name, n)
				}
			}
		}
	}
}
