package rpm

import (
	"encoding/json"
	"os"
	"testing"

	"pith/content"
)

// A PackageResource row of any shape is a package or an error naming a column, never a
// panic; a package read is one newPackageRow can store.
func FuzzPackageRow(f *testing.F) {
	b, err := os.ReadFile("testdata/pulpexport/repository-rpmport-zoo_1/pulp_rpm.app.modelresource.PackageResource.json")
	if err != nil {
		f.Fatal(err)
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(b, &rows); err != nil {
		f.Fatal(err)
	}
	for _, r := range rows[:3] {
		f.Add([]byte(r))
	}
	f.Add([]byte(`{"name": "a", "files": "[[null, null, null]]", "requires": "[[\"x\", \"EQ\", null, null, null, false]]"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var row content.Row
		if json.Unmarshal(b, &row) != nil {
			return
		}
		c := &cells{row: row}
		p := packageOf(c)
		if c.err != nil {
			return
		}
		if _, err := newPackageRow(p); err != nil {
			t.Fatalf("package %s read but not stored: %v", p.NEVRA(), err)
		}
	})
}
