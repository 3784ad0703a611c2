package updateinfo

import (
	"errors"
	"strings"
	"testing"
)

// Pulp's upload example parses, with createrepo_c's names, a numeric pushcount and
// module version, and the default epoch.
func TestParseJSON(t *testing.T) {
	u, err := ParseJSON(strings.NewReader(`{
		"id": "RHSA-2024:0001", "updated": "2024-01-02 00:00:00", "issued": "2024-01-01 00:00:00",
		"from": "security@example.com", "type": "security", "severity": "Important", "pushcount": 2,
		"title": "bear update", "reboot_suggested": true,
		"pkglist": [{"name": "coll", "short": "c1", "module": {"name": "bear", "stream": "1", "version": 20240101, "context": "abc", "arch": "x86_64"},
			"packages": [{"name": "bear", "version": "4.1", "release": "1", "arch": "noarch", "filename": "bear-4.1-1.noarch.rpm", "sum": "", "sum_type": ""}]}],
		"references": [{"href": "https://example.com/1", "id": "1", "title": "t", "type": "bugzilla"}]
	}`), "advisory.json")
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != "RHSA-2024:0001" || u.UpdatedDate != "2024-01-02 00:00:00" || u.IssuedDate != "2024-01-01 00:00:00" || u.FromStr != "security@example.com" ||
		u.PushCount != "2" || !u.RebootSuggested {
		t.Errorf("update: %+v", u)
	}
	c := u.Pkglist[0]
	if c.ShortName != "c1" || c.Module == nil || c.Module.Version != 20240101 || c.Packages[0].Epoch != "0" {
		t.Errorf("collection: %+v %+v", c, c.Module)
	}
	if r := u.References[0]; r.ID != "1" || r.Type != "bugzilla" {
		t.Errorf("reference: %+v", r)
	}
	// The API's own names work too.
	if _, err := ParseJSON(strings.NewReader(`{"id": "X", "updated_date": "2024-01-02", "issued_date": "2024-01-01", "fromstr": "a",
		"pkglist": [{"name": "c", "shortname": "s", "packages": []}], "references": [{"href": "h", "ref_id": "1", "ref_type": "cve", "title": ""}]}`), "a.json"); err != nil {
		t.Error(err)
	}
}

func TestParseJSONBad(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`not json`, "not a JSON object"},
		{`{"id": "X", "updated": "2024-01-02"`, "not a JSON object"},
		{`{"id": "X", "updated": "2024-01-02", "issued": "2024-01-01"} {}`, "more than one JSON value"},
		{`{"updated": "2024-01-02", "issued": "2024-01-01"}`, "id is required"},
		{`{"id": "X", "issued": "2024-01-01"}`, "updated_date is required"},
		{`{"id": "X", "updated": "2024-01-02", "issued": "2024-01-01", "severty": "x"}`, `unknown field "severty"`},
		{`{"id": "X", "updated": "yesterday", "issued": "2024-01-01"}`, "not a date"},
		{`{"id": "X", "updated": "2024-01-02", "issued": "2024-01-01", "pkglist": [{"packages": [{"version": "1"}]}]}`, "without name"},
		{`{"id": "X", "updated": "2024-01-02", "issued": "2024-01-01", "pkglist": [{"module": {"name": "m", "version": "v1"}}]}`, "not a number"},
		{`{"id": "X", "updated": "2024-01-02", "issued": "2024-01-01", "pushcount": [1]}`, "neither a string nor a number"},
	} {
		_, err := ParseJSON(strings.NewReader(tc.in), "advisory.json")
		var pe *Error
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "advisory.json") {
			t.Errorf("%s: %v, want an error naming advisory.json and %q", tc.in, err, tc.want)
		}
	}
}
