package rpm_test

import (
	"context"
	"testing"

	"pith/content/rpm"
	"pith/task"
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
