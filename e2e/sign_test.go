package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
)

// A repository whose metadata pith signs: dnf with repo_gpgcheck=1 imports the key pith
// publishes beside repomd.xml, checks repomd.xml.asc and installs.
func TestRpmSignedMetadata(t *testing.T) {
	fx := fixtures(t)
	e, err := openpgp.NewEntity("Pith E2E", "", "e2e@example.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	var key bytes.Buffer
	w, _ := armor.Encode(&key, openpgp.PrivateKeyType, nil)
	if err := e.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	keyFile := filepath.Join(t.TempDir(), "signing.asc")
	if err := os.WriteFile(keyFile, key.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startPith(t, "", "--metadata-signing-key", keyFile)
	c := newCLI(t, s)
	var svcs []entity
	c.json(&svcs, "signing-service", "list")
	if len(svcs) != 1 || svcs[0].str("name") != "pith-metadata" || !strings.Contains(svcs[0].str("public_key"), "PGP PUBLIC KEY") {
		t.Fatalf("signing services: %v", svcs)
	}
	c.run("rpm", "remote", "create", "--name", "zoo", "--url", fx+"/yum-katello/zoo/", "--policy", "on_demand")
	c.run("rpm", "repository", "create", "--name", "signed", "--remote", "zoo", "--metadata-signing-service", "pith-metadata")
	c.run("rpm", "repository", "sync", "--name", "signed")
	c.run("rpm", "publication", "create", "--repository", "signed")
	c.run("rpm", "distribution", "create", "--name", "signed", "--base-path", "signed", "--repository", "signed")
	base := s.content + "/pulp/content/signed/"
	for _, f := range []string{"repomd.xml.asc", "repomd.xml.key"} {
		if code, _ := get(t, base+"repodata/"+f); code != 200 {
			t.Fatalf("%s: %d", f, code)
		}
	}
	root := filepath.Join(t.TempDir(), "root")
	os.MkdirAll(root, 0o755)
	defer exec.Command("pkill", "-f", "gpg-agent --homedir "+root).Run()
	out, err := exec.Command("dnf", "-y", "--installroot="+root, "--releasever=1", "--repofrompath=pith,"+base, "--repo=pith",
		"--setopt=pith.gpgcheck=0", "--setopt=pith.repo_gpgcheck=1", "--setopt=pith.gpgkey="+base+"repodata/repomd.xml.key",
		"--setopt=install_weak_deps=0", "install", "kangaroo").CombinedOutput()
	if err != nil {
		t.Fatalf("dnf with repo_gpgcheck=1: %v\n%s", err, out)
	}
	// With another key, the same metadata is refused: the check is real.
	other, _ := openpgp.NewEntity("Someone Else", "", "else@example.invalid", nil)
	var pub bytes.Buffer
	pw, _ := armor.Encode(&pub, openpgp.PublicKeyType, nil)
	other.Serialize(pw)
	pw.Close()
	otherKey := filepath.Join(t.TempDir(), "other.asc")
	os.WriteFile(otherKey, pub.Bytes(), 0o644)
	root2 := filepath.Join(t.TempDir(), "root2")
	os.MkdirAll(root2, 0o755)
	defer exec.Command("pkill", "-f", "gpg-agent --homedir "+root2).Run()
	out, err = exec.Command("dnf", "-y", "--installroot="+root2, "--releasever=1", "--repofrompath=pith,"+base, "--repo=pith",
		"--setopt=pith.gpgcheck=0", "--setopt=pith.repo_gpgcheck=1", "--setopt=pith.gpgkey=file://"+otherKey,
		"--setopt=install_weak_deps=0", "install", "kangaroo").CombinedOutput()
	if err == nil {
		t.Fatalf("dnf accepted metadata signed by another key:\n%s", out)
	}
}
