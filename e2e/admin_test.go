package e2e

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

// `pith admin password` resets the admin password of a running installation.
func TestAdminPassword(t *testing.T) {
	s := startPith(t, "")
	status := func(pw string) int {
		req, _ := http.NewRequest("GET", s.url+"/pulp/api/v3/tasks/", nil)
		req.SetBasicAuth("admin", pw)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := status(adminPassword); code != 200 {
		t.Fatalf("initial password: %d", code)
	}
	out, err := exec.Command(pithBin, "admin", "password", "--data", s.data, "n3w-pass").CombinedOutput()
	if err != nil {
		t.Fatalf("pith admin password: %v\n%s", err, out)
	}
	if code := status("n3w-pass"); code != 200 {
		t.Errorf("new password: %d", code)
	}
	if code := status(adminPassword); code != 401 {
		t.Errorf("old password still works: %d", code)
	}
	// A generated password is printed once.
	out, err = exec.Command(pithBin, "admin", "password", "--data", s.data).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "new password for admin: ") {
		t.Fatalf("generated password: %v\n%s", err, out)
	}
	pw := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "new password for admin:"))
	if code := status(pw); code != 200 {
		t.Errorf("generated password %q: %d", pw, code)
	}
	// Bad settings are refused with a message naming them.
	out, err = exec.Command(pithBin, "serve", "--listen", "nowhere").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "listen") {
		t.Errorf("bad --listen: %v\n%s", err, out)
	}
}
