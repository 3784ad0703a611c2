package rpm_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"pith/content/rpm"
	"pith/task"

	"github.com/google/go-cmp/cmp"
)

// Prune keeps the newest version of each package name and arch, and only removes
// packages added before keep_days; a dry run changes nothing.
func TestPrune(t *testing.T) {
	e := newEnv(t)
	repo := e.repo("zoo")
	if tk := e.sync(repo, e.remote("zoo", "yum-katello/zoo/", "on_demand"), rpm.Additive); tk.State != task.Completed {
		t.Fatalf("sync: %s %s", tk.State, tk.Error)
	}
	prune := func(keep int64, dry bool) {
		t.Helper()
		tk, err := e.q.Dispatch(context.Background(), task.Spec{Name: rpm.PruneTask, Args: rpm.PruneArgs{Repository: repo.PulpID, KeepDays: keep, DryRun: dry}})
		if err != nil {
			t.Fatal(err)
		}
		if tk = e.wait(tk); tk.State != task.Completed {
			t.Fatalf("prune: %s %s", tk.State, tk.Error)
		}
	}
	prune(14, false) // everything was added just now
	prune(0, true)
	if n := e.latest(repo).Summary.Present[rpm.PackageType]; n != 20 {
		t.Fatalf("after keep_days=14 and a dry run: %d packages, want all 20", n)
	}
	prune(0, false)
	// armadillo and walrus lose two older versions each; duck, elephant and kangaroo one.
	if n := e.latest(repo).Summary.Present[rpm.PackageType]; n != 13 {
		t.Errorf("after keep_days=0: %d packages, want 13", n)
	}
}

// Copying units brings the units they name: an advisory's packages and modules, a
// category's groups and the newest package of each name the groups list; with
// dependency solving, a module's artifacts and a package's requirements and module.
func TestCopyPlanZoo(t *testing.T) {
	e := newEnv(t)
	repo := e.repo("zoo")
	if tk := e.sync(repo, e.remote("zoo", "yum-katello/zoo/", "on_demand"), rpm.Additive); tk.State != task.Completed {
		t.Fatalf("sync: %s %s", tk.State, tk.Error)
	}
	dest := e.repo("dest")
	ctx := context.Background()
	unit := func(typ, key string) int64 {
		t.Helper()
		var id int64
		if err := e.db.QueryRow(ctx, `SELECT id FROM contents WHERE type = ? AND repo_key = ?`, typ, key).Scan(&id); err != nil {
			t.Fatalf("%s %s: %v", typ, key, err)
		}
		return id
	}
	keys := func(ids []int64) []string {
		var out []string
		for _, id := range ids {
			var typ, key string
			if err := e.db.QueryRow(ctx, `SELECT type, repo_key FROM contents WHERE id = ?`, id).Scan(&typ, &key); err != nil {
				t.Fatal(err)
			}
			out = append(out, strings.TrimPrefix(typ, "rpm.")+" "+key)
		}
		slices.Sort(out)
		return out
	}
	plan := func(solve bool, content ...int64) ([]string, []string) {
		t.Helper()
		units, problems, err := rpm.CopyPlan(ctx, e.db, []rpm.CopyEntry{{Source: repo.ID, SourceVersion: 1, Dest: dest.ID, DestVersion: 0, Content: content}}, solve)
		if err != nil {
			t.Fatal(err)
		}
		return keys(units[0]), problems
	}
	got, _ := plan(false, unit(rpm.AdvisoryType, "KATELLO-RHEA-2010:0111"))
	want := []string{"advisory KATELLO-RHEA-2010:0111", "package elephant-0:0.3-0.8.noarch", "package lion-0:0.3-0.8.noarch"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("advisory (-want +got):\n%s", diff)
	}
	got, _ = plan(false, unit(rpm.AdvisoryType, "KATELLO-RHEA-2012:0059"))
	if !slices.Contains(got, "modulemd kangaroo:0:20180730223407:deadbeef:noarch") || !slices.Contains(got, "modulemd duck:0:20180730233102:deadbeef:noarch") {
		t.Errorf("modular advisory: %v", got)
	}
	got, _ = plan(false, unit(rpm.CategoryType, "all"))
	want = []string{"package duck-0:0.7-1.noarch", "package elephant-0:0.3-0.8.noarch", "package giraffe-0:0.3-0.8.noarch",
		"package kangaroo-0:0.3-1.noarch", "package lion-0:0.3-0.8.noarch", "package penguin-0:0.3-0.8.noarch", "package squirrel-0:0.3-0.8.noarch",
		"package cheetah-0:0.3-0.8.noarch", "package walrus-0:5.21-1.noarch", "packagecategory all", "packagegroup bird", "packagegroup mammal"}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("category (-want +got):\n%s", diff)
	}
	got, _ = plan(true, unit(rpm.ModulemdType, "kangaroo:0:20180704111719:deadbeef:noarch"))
	want = []string{"modulemd kangaroo:0:20180704111719:deadbeef:noarch", "package kangaroo-0:0.2-1.noarch"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("module (-want +got):\n%s", diff)
	}
	got, problems := plan(true, unit(rpm.PackageType, "duck-0:0.6-1.noarch"))
	want = []string{"modulemd duck:0:20180704244205:deadbeef:noarch", "package duck-0:0.6-1.noarch", "package lion-0:0.3-0.8.noarch"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("duck with dependencies (-want +got):\n%s", diff)
	}
	wantProblems := []string{"nothing provides /bin/sh needed by lion-0:0.3-0.8.noarch", "nothing provides cockateel needed by duck-0:0.6-1.noarch"}
	if diff := cmp.Diff(wantProblems, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
