package serve

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"pith/meta"
)

// checkpointAt makes a checkpoint publication of version n as if created at ts.
func (f *fixture) checkpointAt(n int64, ts time.Time) meta.Publication {
	f.t.Helper()
	p := f.publish(n)
	if _, err := f.db.Exec(context.Background(), `UPDATE publications SET checkpoint = ?, created = ? WHERE id = ?`, true, ts.UnixMicro(), p.ID); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// replace makes a version whose only unit is a.txt holding data.
func (f *fixture) replace(data []byte) meta.Version {
	f.t.Helper()
	ctx := context.Background()
	c := f.stored("a.txt", data)
	var v meta.Version
	err := f.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		v, _, err = meta.NewVersion(ctx, tx, f.repo.ID, meta.Change{RemoveAll: true, Add: []int64{c.ID}})
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

// A checkpoint distribution lists its repository's checkpoint publications by time and
// serves each under its timestamp; another time redirects to the checkpoint current
// then, and a malformed or future time, or one before every checkpoint, is a 404.
func TestCheckpointDistribution(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	v1 := f.version(f.stored("a.txt", []byte("one")))
	f.checkpointAt(v1.Number, time.Date(2024, 1, 2, 3, 4, 5, 250e6, time.UTC))
	plain := f.publish(v1.Number) // not a checkpoint: never listed nor served
	f.db.Exec(ctx, `UPDATE publications SET created = ? WHERE id = ?`, time.Date(2024, 2, 2, 0, 0, 0, 0, time.UTC).UnixMicro(), plain.ID)
	f.checkpointAt(f.replace([]byte("three")).Number, time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC))
	for _, d := range []meta.Distribution{
		{Type: "file.file", Name: "cp", BasePath: "cp", RepositoryID: &f.repo.ID, Checkpoint: true},
		{Type: "file.file", Name: "latest", BasePath: "latest", RepositoryID: &f.repo.ID},
	} {
		if _, err := meta.CreateDistribution(ctx, f.db, d); err != nil {
			t.Fatal(err)
		}
	}
	rec := f.get("/pulp/content/cp/")
	if body := rec.Body.String(); rec.Code != 200 || !strings.Contains(body, `<a href="20240102T030405Z/">`) ||
		!strings.Contains(body, `<a href="20240304T050607Z/">`) || strings.Count(body, "<a href") != 3 {
		t.Errorf("checkpoint listing: %d\n%s", rec.Code, body)
	}
	check := func(path string, code int, want string) {
		t.Helper()
		rec := f.get("/pulp/content/" + path)
		got := rec.Body.String()
		if code == 301 {
			got = rec.Header().Get("Location")
		}
		if rec.Code != code || want != "" && got != want {
			t.Errorf("GET %s: %d %q, want %d %q", path, rec.Code, got, code, want)
		}
	}
	check("cp/20240102T030405Z/a.txt", 200, "one")
	check("cp/20240304T050607Z/a.txt", 200, "three")
	check("latest/a.txt", 200, "three")
	check("cp/20240102T030405Z/", 200, "")
	check("cp/20240102T030405Z", 301, "/pulp/content/cp/20240102T030405Z/")
	check("cp/garbage", 301, "/pulp/content/cp/garbage/")
	check("cp", 301, "/pulp/content/cp/")
	// Between the two (the plain publication's time too): the older checkpoint.
	check("cp/20240202T000000Z/a.txt", 301, "/pulp/content/cp/20240102T030405Z/a.txt")
	check("cp/20240102T030406Z/", 301, "/pulp/content/cp/20240102T030405Z/")
	check("cp/20991231T235959Z/a.txt", 404, "")                              // the future
	check("cp/"+time.Now().UTC().Format(checkpointLayout)+"/a.txt", 301, "") // now is not the future
	for _, bad := range []string{
		"20240102T030404Z", // before every checkpoint
		"garbage", "2024-01-02T03:04:05Z", "20240102t030405Z", "20240102T030405z", "20240102T030405",
		"20240102T030405ZZ", "+0240102T030405Z", "2024010２T030405Z", "20241302T000000Z", "20240230T000000Z",
		"20240102T250000Z", "20240102T036000Z", "00000000T000000Z", "99999999T999999Z",
	} {
		check("cp/"+bad+"/a.txt", 404, "")
	}
	check("cp/20240102T030405Z/missing", 404, "")

	// A new checkpoint: a time that redirected now names it, and what each checkpoint
	// served (cached) stays.
	f.checkpointAt(f.replace([]byte("two")).Number, time.Date(2024, 2, 2, 0, 0, 0, 0, time.UTC))
	f.srv.Invalidate()
	check("cp/20240202T000000Z/a.txt", 200, "two")
	check("cp/20240102T030405Z/a.txt", 200, "one")
	check("cp/20240304T050607Z/a.txt", 200, "three")
}

var checkpointPattern = regexp.MustCompile(`^\d{8}T\d{6}Z$`)

// FuzzParseCheckpoint: a segment is a checkpoint time only in Pulp's pattern, and then
// names the second it ends.
func FuzzParseCheckpoint(f *testing.F) {
	for _, s := range []string{"20240102T030405Z", "20240230T000000Z", "29990101T000000Z", "x", ""} {
		f.Add(s)
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, seg string) {
		end, ok := parseCheckpoint(seg, now)
		if !ok {
			return
		}
		if !checkpointPattern.MatchString(seg) {
			t.Fatalf("%q accepted outside the pattern", seg)
		}
		if got := checkpointName(end); got != seg {
			t.Fatalf("%q ends at %s", seg, got)
		}
		if time.UnixMicro(end).After(now.Add(time.Second)) {
			t.Fatalf("%q is in the future", seg)
		}
	})
}
