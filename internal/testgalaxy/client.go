package testgalaxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ServerConfig is one Galaxy server in a client's ansible.cfg.
type ServerConfig struct {
	Name string // its section, [galaxy_server.<Name>]: letters, digits and '_'
	URL  string // the API root, ending in /api/ (Server.API; for pith, DistributionURL)
	// Token is sent as "Authorization: Token <Token>"; without it, Username and Password
	// are sent as HTTP Basic (what a Pulp without a token service takes).
	Token              string
	Username, Password string
}

// DistributionURL is the API root ansible-galaxy is given for a pulp_ansible (or pith)
// distribution: origin + "/pulp_ansible/galaxy/<basePath>/api/".
func DistributionURL(origin, basePath string) string {
	return strings.TrimSuffix(origin, "/") + "/pulp_ansible/galaxy/" + strings.Trim(basePath, "/") + "/api/"
}

// Client runs ansible-galaxy with a home of its own: its own HOME and ANSIBLE_HOME, an
// ansible.cfg listing the given servers (the first is the default), a private response
// cache (ansible-galaxy otherwise answers from ~/.ansible/galaxy_cache for a day), and
// empty collections and roles paths. No ANSIBLE_* variable of the caller leaks in.
type Client struct {
	t           testing.TB
	bin         string
	env         []string
	Home        string // HOME; ansible.cfg is in it
	Collections string // the collections path installs go to
	Roles       string // the roles path role installs go to
	Timeout     time.Duration
}

// NewClient makes a client of the servers, or skips the test where ansible-galaxy is
// not installed (see AnsibleGalaxy).
func NewClient(t testing.TB, servers ...ServerConfig) *Client {
	t.Helper()
	bin := AnsibleGalaxy(t)
	home := t.TempDir()
	c := &Client{t: t, bin: bin, Home: home, Collections: filepath.Join(home, "collections"),
		Roles: filepath.Join(home, "roles"), Timeout: 5 * time.Minute}
	for _, d := range []string{c.Collections, c.Roles, filepath.Join(home, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "[defaults]\nhome = %s\ncollections_path = %s\nroles_path = %s\nlocal_tmp = %s\n\n",
		filepath.Join(home, ".ansible"), c.Collections, c.Roles, filepath.Join(home, "tmp"))
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	fmt.Fprintf(&cfg, "[galaxy]\nserver_list = %s\ncache_dir = %s\ndisplay_progress = false\n",
		strings.Join(names, ", "), filepath.Join(home, "galaxy_cache"))
	for _, s := range servers {
		if s.Name == "" || strings.Trim(s.Name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
			t.Fatalf("testgalaxy: server name %q: want letters, digits and '_'", s.Name)
		}
		fmt.Fprintf(&cfg, "\n[galaxy_server.%s]\nurl = %s\ntimeout = 60\n", s.Name, iniValue(t, s.URL))
		if s.Token != "" {
			fmt.Fprintf(&cfg, "token = %s\n", iniValue(t, s.Token))
		} else if s.Username != "" {
			fmt.Fprintf(&cfg, "username = %s\npassword = %s\n", iniValue(t, s.Username), iniValue(t, s.Password))
		}
	}
	cfgFile := filepath.Join(home, "ansible.cfg")
	if err := os.WriteFile(cfgFile, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANSIBLE_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
			c.env = append(c.env, kv)
		}
	}
	c.env = append(c.env, "HOME="+home, "ANSIBLE_CONFIG="+cfgFile, "ANSIBLE_NOCOLOR=1", "ANSIBLE_FORCE_COLOR=0")
	return c
}

// iniValue is v as Python's ConfigParser (ansible's, with interpolation and ';'
// comments) reads it back.
func iniValue(t testing.TB, v string) string {
	t.Helper()
	if strings.ContainsAny(v, "\r\n;") {
		t.Fatalf("testgalaxy: %q cannot be written to ansible.cfg (a line break or ';')", v)
	}
	return strings.ReplaceAll(v, "%", "%%")
}

// TrustCA makes ansible-galaxy trust the certificates in a PEM file (Server.CAFile, a
// pith installation's CA) instead of the system's.
func (c *Client) TrustCA(pemFile string) {
	c.env = append(c.env, "SSL_CERT_FILE="+pemFile)
}

// Run runs ansible-galaxy with args and returns its output (stdout and stderr together);
// err says how it failed.
func (c *Client) Run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = c.env
	cmd.Dir = c.Home
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %v: %w", c.Timeout, err)
	}
	return out.String(), err
}

// Must runs ansible-galaxy with args and returns its output; a failure fails the test
// with the command and its output.
func (c *Client) Must(args ...string) string {
	c.t.Helper()
	out, err := c.Run(args...)
	if err != nil {
		c.t.Fatalf("ansible-galaxy %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Publish publishes a collection artifact to the default server and waits for its import.
func (c *Client) Publish(artifact string, extra ...string) string {
	c.t.Helper()
	return c.Must(append([]string{"collection", "publish", artifact}, extra...)...)
}

// Install installs collections (specs such as "cisco.iosxr" or "ns.name:==1.0.0") with
// their dependencies into the client's collections path.
func (c *Client) Install(specs ...string) string {
	c.t.Helper()
	return c.Must(append([]string{"collection", "install", "-p", c.Collections}, specs...)...)
}

// Download downloads collections and their dependencies into dir, with the
// requirements.yml ansible-galaxy writes beside them.
func (c *Client) Download(dir string, specs ...string) string {
	c.t.Helper()
	return c.Must(append([]string{"collection", "download", "-p", dir}, specs...)...)
}

// Verify checks installed collections against the server: their files against the
// server's manifest, and the server's signatures with the keyring (gpg's, as
// Keyring.Path). It needs the gpg executable.
func (c *Client) Verify(keyring string, specs ...string) string {
	c.t.Helper()
	return c.Must(append([]string{"collection", "verify", "-p", c.Collections, "--keyring", keyring}, specs...)...)
}

// InstallRole installs a role ("namespace.name" or "namespace.name,version") into the
// client's roles path.
func (c *Client) InstallRole(spec string) string {
	c.t.Helper()
	return c.Must("role", "install", "-p", c.Roles, spec)
}

// Installed reports whether namespace.name is in the collections path, and its version.
func (c *Client) Installed(namespace, name string) (version string, ok bool) {
	b, err := os.ReadFile(filepath.Join(c.Collections, "ansible_collections", namespace, name, "MANIFEST.json"))
	if err != nil {
		return "", false
	}
	var m struct {
		Info struct{ Version string } `json:"collection_info"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return "", false
	}
	return m.Info.Version, true
}
