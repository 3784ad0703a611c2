package modulemd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDNFReadsWrittenFile hands what Writer writes to dnf (libmodulemd) through a
// repository built by createrepo_c. It is skipped where dnf, createrepo_c or
// modifyrepo_c is missing (scripts/test installs them: dnf and createrepo-c).
func TestDNFReadsWrittenFile(t *testing.T) {
	for _, tool := range []string{"dnf", "createrepo_c", "modifyrepo_c"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool, "is not installed")
		}
	}
	name := glob(t, "rpm-edge-cases/repo_with_additional_metadata/repodata/*-modules.yaml.gz")[0]
	f := parseBytes(t, name, readData(t, name))
	f.Obsoletes = append(f.Obsoletes, parseBytes(t, "sample", []byte(sample)).Obsoletes...)
	dir := t.TempDir()
	repo, root := filepath.Join(dir, "repo"), filepath.Join(dir, "root")
	for _, d := range []string{repo, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	modules := filepath.Join(dir, "modules.yaml")
	if err := os.WriteFile(modules, []byte(writeSnippets(t, snippets(f))), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("createrepo_c", "--quiet", repo)
	run("modifyrepo_c", "--mdtype=modules", modules, filepath.Join(repo, "repodata"))
	out := run("dnf", "--installroot="+root, "--releasever=1", "--disablerepo=*", "--repofrompath=pith,"+repo,
		"--setopt=pith.gpgcheck=0", "--setopt=pith.module_hotfixes=0", "-q", "module", "list")
	for _, m := range f.Modules {
		if !strings.Contains(out, m.Name) {
			t.Errorf("dnf does not list module %s:\n%s", m.Name, out)
		}
	}
	if !strings.Contains(out, "scala") || !strings.Contains(out, "2.10") {
		t.Errorf("dnf output lacks scala 2.10:\n%s", out)
	}
}
