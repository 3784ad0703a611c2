package meta_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"pith/meta"
)

// What a refresh records is found by sha256 across sources, replaced path by path, and
// dropped with the path, the source's remote change or the source; the remote of a
// source cannot be deleted.
func TestACSFiles(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		rem := func(name string) meta.Remote {
			m, err := meta.CreateRemote(ctx, db, meta.Remote{Type: "file.file", Name: name, URL: "http://" + name + "/", Policy: "on_demand"})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		r1, r2 := rem("one"), rem("two")
		a, err := meta.CreateACS(ctx, db, meta.ACS{Type: "file.file", Name: "a", RemoteID: r1.ID, Paths: []string{"x/", "y/"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := meta.CreateACS(ctx, db, meta.ACS{Type: "rpm.rpm", Name: "a", RemoteID: r2.ID}); !errors.Is(err, meta.ErrConflict) {
			t.Errorf("second source named a: %v", err)
		}
		b, err := meta.CreateACS(ctx, db, meta.ACS{Type: "rpm.rpm", Name: "b", RemoteID: r2.ID})
		if err != nil {
			t.Fatal(err)
		}
		var many []meta.ACSFile
		for i := range 450 { // more than one insert statement
			many = append(many, meta.ACSFile{SHA256: fmt.Sprintf("%064x", i), Size: int64(i), URL: fmt.Sprint("http://one/x/", i)})
		}
		many = append(many, many[0]) // a duplicate checksum counts once
		for _, step := range []struct {
			acs   meta.ACS
			path  string
			files []meta.ACSFile
		}{
			{a, "x/", many},
			{a, "y/", []meta.ACSFile{{SHA256: "s1", Size: 1, URL: "http://one/y/s1"}}},
			{b, "", []meta.ACSFile{{SHA256: "s1", Size: 1, URL: "http://two/s1"}}},
		} {
			if err := meta.SetACSFiles(ctx, db, step.acs.ID, step.path, step.files); err != nil {
				t.Fatal(err)
			}
		}
		got, err := meta.ACSSources(ctx, db, []string{"s1", fmt.Sprintf("%064x", 7), "none"})
		if err != nil {
			t.Fatal(err)
		}
		if s := got["s1"]; len(s) != 2 || s[0].ACSName != "a" || s[0].URL != "http://one/y/s1" || s[1].RemoteID != r2.ID {
			t.Errorf("sources of s1: %+v", s)
		}
		if s := got[fmt.Sprintf("%064x", 7)]; len(s) != 1 || s[0].URL != "http://one/x/7" || s[0].Size != 7 {
			t.Errorf("sources of 7: %+v", s)
		}
		if _, ok := got["none"]; ok {
			t.Error("a checksum no source lists has sources")
		}
		if x, _ := meta.ACSByID(ctx, db, a.ID); x.LastRefreshed == nil || x.RemotePulpID != r1.PulpID {
			t.Errorf("after refresh: %+v", x)
		}
		// Refreshing a path again replaces what it listed.
		if err := meta.SetACSFiles(ctx, db, a.ID, "x/", many[:1]); err != nil {
			t.Fatal(err)
		}
		count := func() int {
			var n int
			if err := db.QueryRow(ctx, `SELECT count(*) FROM acs_artifacts`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := count(); n != 3 {
			t.Errorf("%d rows after a refresh of x/ with one file, want 3", n)
		}
		// The remote of a source stays.
		if err := meta.DeleteRemote(ctx, db, r1.ID); !errors.Is(err, meta.ErrInUse) {
			t.Errorf("delete of a source's remote: %v", err)
		}
		// A path dropped by an update drops its files; a new remote drops them all.
		a.Paths = []string{"x/"}
		if err := meta.UpdateACS(ctx, db, a); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != 2 {
			t.Errorf("%d rows after y/ was dropped, want 2", n)
		}
		a.RemoteID = r2.ID
		if err := meta.UpdateACS(ctx, db, a); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != 1 {
			t.Errorf("%d rows after a's remote changed, want 1", n)
		}
		if err := meta.DeleteACS(ctx, db, b.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != 0 {
			t.Errorf("%d rows after b was deleted", n)
		}
		if err := meta.DeleteRemote(ctx, db, r1.ID); err != nil {
			t.Errorf("delete of a remote no source uses: %v", err)
		}
	})
}
