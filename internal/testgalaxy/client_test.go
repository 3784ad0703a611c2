package testgalaxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pith/internal/testfiles"
)

// logRequests writes what the server was asked since the last call, for -v runs and for
// README.md's lists.
func logRequests(t *testing.T, s *Server, what string) {
	t.Helper()
	var b strings.Builder
	for _, r := range s.Requests() {
		b.WriteString("  " + strings.ReplaceAll(r.String(), s.URL, "") + "\n")
	}
	t.Logf("%s:\n%s", what, b.String())
	s.ResetRequests()
}

// ansible-galaxy role install finds the role through the v1 API, pages its versions,
// takes the highest and installs the archive from the version's download_url.
func TestRoleInstall(t *testing.T) {
	s := New(t, Config{Roles: []Role{
		{Namespace: "other", Name: "hello", Versions: []string{"9.9.9"}},
		{Namespace: "pith", Name: "hello", Versions: []string{"1.0.0", "1.10.0", "1.2.0"}, Description: "says hello"},
	}})
	c := NewClient(t, ServerConfig{Name: "fixture", URL: s.API})
	out := c.InstallRole("pith.hello")
	logRequests(t, s, "role install pith.hello")
	if !strings.Contains(out, "pith.hello (1.10.0) was installed successfully") {
		t.Fatalf("role install output:\n%s", out)
	}
	tasks, err := os.ReadFile(filepath.Join(c.Roles, "pith.hello", "tasks", "main.yml"))
	if err != nil || !strings.Contains(string(tasks), `msg: "pith.hello 1.10.0"`) {
		t.Fatalf("tasks/main.yml: %v\n%s", err, tasks)
	}
	// A version asked for by name; one that does not exist is the client's clear error.
	out = c.Must("role", "install", "--force", "-p", c.Roles, "pith.hello,1.2.0")
	logRequests(t, s, "role install pith.hello,1.2.0")
	if !strings.Contains(out, "pith.hello (1.2.0) was installed successfully") {
		t.Fatalf("role install 1.2.0:\n%s", out)
	}
	if out, err := c.Run("role", "install", "--force", "-p", c.Roles, "pith.hello,3.0.0"); err == nil || !strings.Contains(out, "the specified version (3.0.0) of pith.hello was not found") {
		t.Fatalf("a missing version: %v\n%s", err, out)
	}
	if out, err := c.Run("role", "install", "-p", c.Roles, "pith.absent"); err == nil || !strings.Contains(out, "pith.absent was not found") {
		t.Fatalf("a missing role: %v\n%s", err, out)
	}
}

func readCollection(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testfiles.Path("ansible-collections", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The collection commands against the v3 API: publish (base64 file part), install with
// dependencies (versions one a page; artifacts redirected to a presigned URL, which the
// client fetches without its token), download, verify with a keyring.
func TestCollectionCommands(t *testing.T) {
	s := New(t, Config{Prefix: "/pulp_ansible/galaxy/fixture/", Token: "secret-token", MaxPage: 1, RedirectDownloads: true})
	for _, f := range []string{"ansible-netcommon-4.1.0.tar.gz", "ansible-utils-2.7.0.tar.gz", "pulp-testing_asset-1.0.0.tar.gz", "pulp-testing_asset-1.0.1.tar.gz"} {
		if _, err := s.AddCollection(readCollection(t, f)); err != nil {
			t.Fatal(err)
		}
	}
	c := NewClient(t, ServerConfig{Name: "fixture", URL: s.API, Token: "secret-token"})
	s.ResetRequests()

	out := c.Publish(testfiles.Path("ansible-collections", "cisco-iosxr-4.0.2.tar.gz"))
	logRequests(t, s, "collection publish cisco-iosxr-4.0.2.tar.gz")
	if !strings.Contains(out, "Collection has been successfully published and imported to the Galaxy server") {
		t.Fatalf("publish:\n%s", out)
	}

	out = c.Install("cisco.iosxr")
	logRequests(t, s, "collection install cisco.iosxr")
	for _, want := range [][3]string{{"cisco", "iosxr", "4.0.2"}, {"ansible", "netcommon", "4.1.0"}, {"ansible", "utils", "2.7.0"}} {
		if v, ok := c.Installed(want[0], want[1]); !ok || v != want[2] {
			t.Fatalf("%s.%s installed: %q %v\n%s", want[0], want[1], v, ok, out)
		}
	}

	c.Install("pulp.testing_asset")
	logRequests(t, s, "collection install pulp.testing_asset (two versions, one a page; warm response cache)")
	if v, _ := c.Installed("pulp", "testing_asset"); v != "1.0.1" {
		t.Fatalf("pulp.testing_asset: %q", v)
	}

	dir := t.TempDir()
	c.Download(dir, "ansible.netcommon")
	logRequests(t, s, "collection download ansible.netcommon")
	for _, f := range []string{"ansible-netcommon-4.1.0.tar.gz", "ansible-utils-2.7.0.tar.gz", "requirements.yml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("download: %v", err)
		}
	}

	k := NewKeyring(t)
	if err := s.Sign("ansible", "utils", "2.7.0", k.Signer); err != nil {
		t.Fatal(err)
	}
	out = c.Verify(k.Path, "ansible.utils")
	logRequests(t, s, "collection verify --keyring ansible.utils")
	if !strings.Contains(out, "Successfully verified that checksums for 'ansible.utils:2.7.0' match the remote collection.") {
		t.Fatalf("verify:\n%s", out)
	}
}

// Over HTTPS ansible-galaxy checks the certificate: it refuses the server until told to
// trust its CA.
func TestRoleInstallTLS(t *testing.T) {
	s := New(t, Config{TLS: true, Roles: []Role{{Namespace: "pith", Name: "hello", Versions: []string{"1.0.0"}}}})
	c := NewClient(t, ServerConfig{Name: "fixture", URL: s.API})
	if out, err := c.Run("role", "install", "-p", c.Roles, "pith.hello"); err == nil || !strings.Contains(out, "CERTIFICATE_VERIFY_FAILED") {
		t.Fatalf("an untrusted certificate: %v\n%s", err, out)
	}
	c.TrustCA(s.CAFile)
	if out := c.InstallRole("pith.hello"); !strings.Contains(out, "pith.hello (1.0.0) was installed successfully") {
		t.Fatalf("role install over HTTPS:\n%s", out)
	}
}
