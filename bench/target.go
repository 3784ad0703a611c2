package bench

import (
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"pith/bench/load"
)

// Target is a server a scenario measures: pith, or upstream Pulp on loopback
// (../shared/tools/pulp-peer) for the side-by-side figures. Both speak the same API.
type Target struct {
	Name                string // shown in tables: "pith", "Pulp"
	URL, User, Password string // API origin and credentials
	Content             string // content origin, when not the API's
	// DB is the target's database (postgres://…), for scenarios that write their data
	// set straight into it (promote).
	DB string
	// Procs selects the server's processes, for their peak memory and CPU.
	Procs load.Selector
	// Roots are the CAs the target's HTTPS certificate is trusted through (nil: the
	// system's).
	Roots *x509.CertPool
}

// ParseTarget reads "name=URL" with optional ",user=…,password=…,content=URL,procs=a|b,db=URL"
// parts; procs lists command-line substrings of the target's processes (their children
// count too), content the content app's origin when it is not the API's, db its
// database.
// An empty password is taken from the environment variable PASSWORD_<NAME>.
func ParseTarget(s string) (Target, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return Target{}, fmt.Errorf("target %q: want name=URL[,user=U][,password=P][,procs=a|b]", s)
	}
	parts := strings.Split(rest, ",")
	t := Target{Name: name, URL: strings.TrimSuffix(parts[0], "/"), User: "admin", Procs: load.Selector{Children: true}}
	if !strings.HasPrefix(t.URL, "http://") && !strings.HasPrefix(t.URL, "https://") {
		return t, fmt.Errorf("target %q: %q is not an http(s) URL", s, parts[0])
	}
	for _, p := range parts[1:] {
		k, v, _ := strings.Cut(p, "=")
		switch k {
		case "user":
			t.User = v
		case "password":
			t.Password = v
		case "procs":
			t.Procs.CmdlineContains = strings.Split(v, "|")
		case "content":
			t.Content = strings.TrimSuffix(v, "/")
		case "db":
			t.DB = v
		default:
			return t, fmt.Errorf("target %q: unknown part %q (user, password, content, procs, db)", s, k)
		}
	}
	if t.Password == "" {
		t.Password = os.Getenv("PASSWORD_" + strings.ToUpper(name))
	}
	return t, nil
}

// ContentOrigin is where the target serves content.
func (t Target) ContentOrigin() string {
	if t.Content != "" {
		return t.Content
	}
	return t.URL
}
