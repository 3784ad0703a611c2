package gitsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"pith/content/download"
	"pith/secret"
)

// Options say what to fetch and how.
type Options struct {
	URL string
	// Ref is a branch, a tag or a commit (full, or abbreviated to at least 7 hex digits:
	// found after a fetch of every branch and tag); "" is the remote's HEAD.
	Ref string
	// Remote holds the remote's TLS, proxy, credential, header and timeout settings
	// (content.DownloadConfig of the remote; its URL is not used). git gets them as
	// configuration: TLS validation, CA and client certificate, proxy with its
	// credentials (http and https URLs), basic credentials (given only to the URL's own
	// host, when it asks), headers (then redirects are not followed, so that they go to
	// that host only), total_timeout (the whole fetch) and sock_read_timeout (a transfer
	// below 1 byte per second for that long fails). Concurrency, rate limit, retries and
	// connect timeouts have no git counterpart.
	Remote download.Config
	Limits Limits
	// TempDir is where the checkout's temporary directory is made; "" is os.TempDir().
	TempDir string
	// AllowLocal lets URL be a file:// URL or a local path (tests); remotes never do.
	AllowLocal bool
	// Raw checks the blobs out as stored, with no attribute of the repository's
	// .gitattributes applied (no line-ending conversion, no ident expansion, no
	// working-tree-encoding), as pulp_file reads them.
	Raw bool
}

// Limits bound one fetch; a zero field takes DefaultLimits' value.
type Limits struct {
	Fetched  int64         // bytes of git objects received (the git directory)
	Files    int           // entries of the tree (files, links, submodules)
	Checkout int64         // bytes of the tree's files as stored
	PathLen  int           // bytes of one path
	Depth    int           // components of one path
	Timeout  time.Duration // the whole fetch and checkout
}

// DefaultLimits bound a fetch no caller bounds more closely: 1 GiB received, 100,000
// entries, 4 GiB of files, paths of 1,024 bytes and 32 levels, thirty minutes.
func DefaultLimits() Limits {
	return Limits{Fetched: 1 << 30, Files: 100000, Checkout: 4 << 30, PathLen: 1024, Depth: 32, Timeout: 30 * time.Minute}
}

// Or returns l with each zero field taken from d.
func (l Limits) Or(d Limits) Limits {
	orDefault(&l.Fetched, d.Fetched)
	orDefault(&l.Files, d.Files)
	orDefault(&l.Checkout, d.Checkout)
	orDefault(&l.PathLen, d.PathLen)
	orDefault(&l.Depth, d.Depth)
	orDefault(&l.Timeout, d.Timeout)
	return l
}

func orDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Kinds of failure; every *Error unwraps to one (test with errors.Is).
var (
	ErrInvalid     = errors.New("invalid git remote")       // the URL, ref or a setting
	ErrRefNotFound = errors.New("git ref not found")        // the remote has no such ref
	ErrLimit       = errors.New("git repository too large") // past one of the Limits
	ErrUnsafe      = errors.New("unsafe git tree")          // a path git should never have
	ErrTimeout     = errors.New("git fetch timed out")
	ErrFetch       = errors.New("git fetch failed") // the server, the network, git itself
)

// Error is a failed fetch.
type Error struct {
	URL  string // as given; Error redacts its credentials
	Ref  string
	Kind error
	Msg  string
	Err  error
}

// Error reads "git https://host/repo (ref v1.0): <problem>".
func (e *Error) Error() string {
	ref := e.Ref
	if ref == "" {
		ref = "HEAD"
	}
	return secret.Redact(fmt.Sprintf("git %s (ref %s): %s", e.URL, ref, e.Msg))
}

// Unwrap returns the kind and the underlying error.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Checkout is one ref's tree in a temporary directory; Close removes it.
type Checkout struct {
	Dir    string // the work tree: the repository's files, nothing else
	Commit string // the commit checked out, hex
	tmp    string
}

// Close removes the checkout.
func (c *Checkout) Close() error { return os.RemoveAll(c.tmp) }

// Fetch fetches one ref of a repository, shallowly, and checks its tree out into a new
// temporary directory. The caller closes the Checkout.
func Fetch(ctx context.Context, opt Options) (*Checkout, error) {
	lim := opt.Limits.Or(DefaultLimits())
	fail := func(kind error, err error, format string, args ...any) *Error {
		return &Error{URL: opt.URL, Ref: opt.Ref, Kind: kind, Msg: fmt.Sprintf(format, args...), Err: err}
	}
	u, err := checkURL(opt.URL, opt.AllowLocal)
	if err != nil {
		return nil, fail(ErrInvalid, err, "%v", err)
	}
	if err := checkRef(opt.Ref); err != nil {
		return nil, fail(ErrInvalid, err, "%v", err)
	}
	tmp, err := os.MkdirTemp(opt.TempDir, "pith-git-*")
	if err != nil {
		return nil, fail(ErrFetch, err, "making a temporary directory: %v", err)
	}
	co := &Checkout{Dir: filepath.Join(tmp, "tree"), tmp: tmp}
	ok := false
	defer func() {
		if !ok {
			co.Close()
		}
	}()
	for _, d := range []string{"home", "tree"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o700); err != nil {
			return nil, fail(ErrFetch, err, "making a temporary directory: %v", err)
		}
	}
	config, extraEnv, err := remoteConfig(opt.Remote, u, tmp)
	if err != nil {
		return nil, fail(ErrInvalid, err, "%v", err)
	}
	protocols := "https:http:git"
	if opt.AllowLocal {
		protocols += ":file"
	}
	timeout := lim.Timeout
	if t := opt.Remote.TotalTimeout; t > 0 && time.Duration(t*float64(time.Second)) < timeout {
		timeout = time.Duration(t * float64(time.Second))
	}
	errTimeout := fail(ErrTimeout, nil, "not done within %v", timeout)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	g := &git{ctx: ctx, dir: filepath.Join(tmp, "git"),
		env: append(baseEnv(filepath.Join(tmp, "home"), protocols, append(append([][2]string{}, hardening...), config...)), extraEnv...)}
	// Everything a step reports is this fetch's error; a cancelled context says why.
	wrap := func(err error, what string) error {
		var e *Error
		switch {
		case errors.As(err, &e):
			return e
		case ctx.Err() != nil:
			return fail(ErrFetch, context.Cause(ctx), "%s: %v", what, context.Cause(ctx))
		}
		return fail(ErrFetch, err, "%s: %v", what, err)
	}
	if err := g.run(nil, nil, "init", "-q", "--bare", "--template="); err != nil {
		return nil, wrap(err, "git init")
	}
	commit, err := g.fetch(opt, lim, fail)
	if err != nil {
		return nil, wrap(err, "fetching")
	}
	if err := g.checkTree(commit, lim, fail); err != nil {
		return nil, wrap(err, "listing the tree")
	}
	if opt.Raw {
		// info/attributes overrides every .gitattributes of the tree.
		info := filepath.Join(g.dir, "info")
		if err := errors.Join(os.MkdirAll(info, 0o700), os.WriteFile(filepath.Join(info, "attributes"), []byte(rawAttributes), 0o600)); err != nil {
			return nil, fail(ErrFetch, err, "writing the attributes: %v", err)
		}
	}
	if err := g.run(nil, nil, "--work-tree="+co.Dir, "read-tree", "--reset", "-u", commit); err != nil {
		return nil, wrap(err, "checking out "+commit)
	}
	co.Commit, ok = commit, true
	return co, nil
}

// rawAttributes unsets every attribute that changes a file on checkout (filter drivers
// are never configured).
const rawAttributes = "* -text -eol -ident -filter -working-tree-encoding\n"

var hexRef = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// fetch fetches the ref shallowly and returns its commit. A commit the remote will not
// send by itself (an abbreviated one; a full one from a server without protocol v2) is
// looked for among every branch and tag, fetched whole, as pulp_ansible's clone and
// checkout would find it.
func (g *git) fetch(opt Options, lim Limits, fail func(error, error, string, ...any) *Error) (string, error) {
	ref := opt.Ref
	if ref == "" {
		ref = "HEAD"
	}
	watch := func() error { return g.sizeAfter(lim, fail) }
	err := g.run(nil, watch, "fetch", "-q", "--depth=1", "--no-tags", "--no-recurse-submodules", "--", opt.URL, ref)
	var ge *gitError
	if errors.As(err, &ge) && refMissing(ge.stderr) {
		if !hexRef.MatchString(ref) {
			return "", fail(ErrRefNotFound, nil, "the remote has no branch, tag or commit named %q", ref)
		}
		err = g.run(nil, watch, "fetch", "-q", "--no-recurse-submodules", "--", opt.URL,
			"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*")
		if err == nil {
			commit, err := g.output("rev-parse", "--verify", "-q", "--end-of-options", ref+"^{commit}")
			if err != nil || commit == "" {
				return "", fail(ErrRefNotFound, nil, "the remote has no branch, tag or commit named %q", ref)
			}
			return commit, g.sizeAfter(lim, fail)
		}
	}
	if err != nil {
		return "", err
	}
	if err := g.sizeAfter(lim, fail); err != nil {
		return "", err
	}
	return g.output("rev-parse", "--verify", "-q", "FETCH_HEAD^{commit}")
}

// sizeAfter checks the objects received, while they arrive and once the fetch is done
// (it may end between two looks).
func (g *git) sizeAfter(lim Limits, fail func(error, error, string, ...any) *Error) error {
	if n := dirSize(g.dir); n > lim.Fetched {
		return fail(ErrLimit, nil, "the repository sends more than %d bytes", lim.Fetched)
	}
	return nil
}

// refMissing recognizes git's words for a ref the remote does not have.
func refMissing(stderr string) bool {
	for _, s := range []string{"couldn't find remote ref", "not our ref", "unadvertised object", "no such remote ref"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// checkTree bounds the tree before it is checked out: entries, bytes, path length and
// depth, and paths git itself would refuse.
func (g *git) checkTree(commit string, lim Limits, fail func(error, error, string, ...any) *Error) error {
	tc := &treeCheck{lim: lim, fail: fail}
	// A failed check ends the copy of git's output, which closes its pipe: git stops.
	err := g.run(tc, nil, "ls-tree", "-r", "-l", "-z", "--full-tree", commit)
	if tc.err != nil {
		return tc.err
	}
	if err != nil {
		return err
	}
	if len(tc.rest) > 0 {
		return fail(ErrFetch, nil, "git ls-tree: unterminated output")
	}
	return nil
}

// treeCheck reads `git ls-tree -r -l -z` as it streams: "<mode> <type> <oid> <size>\t<path>\0".
type treeCheck struct {
	lim   Limits
	fail  func(error, error, string, ...any) *Error
	rest  []byte
	files int
	bytes int64
	err   *Error
}

func (tc *treeCheck) Write(p []byte) (int, error) {
	tc.rest = append(tc.rest, p...)
	for tc.err == nil {
		i := bytes.IndexByte(tc.rest, 0)
		if i < 0 {
			if len(tc.rest) > tc.lim.PathLen+256 {
				tc.err = tc.fail(ErrLimit, nil, "a path is longer than %d bytes", tc.lim.PathLen)
			}
			break
		}
		tc.err = tc.entry(string(tc.rest[:i]))
		tc.rest = tc.rest[i+1:]
	}
	if tc.err != nil {
		return 0, tc.err
	}
	return len(p), nil
}

func (tc *treeCheck) entry(line string) *Error {
	meta, p, ok := strings.Cut(line, "\t")
	f := strings.Fields(meta)
	if !ok || len(f) != 4 {
		return tc.fail(ErrFetch, nil, "git ls-tree: unexpected line %q", line)
	}
	if tc.files++; tc.files > tc.lim.Files {
		return tc.fail(ErrLimit, nil, "the tree has more than %d entries", tc.lim.Files)
	}
	switch {
	case len(p) > tc.lim.PathLen:
		return tc.fail(ErrLimit, nil, "%s…: path longer than %d bytes", p[:64], tc.lim.PathLen)
	case strings.Count(p, "/")+1 > tc.lim.Depth:
		return tc.fail(ErrLimit, nil, "%s: nested deeper than %d directories", p, tc.lim.Depth)
	}
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
			return tc.fail(ErrUnsafe, nil, "the tree has the path %q", p)
		}
	}
	if f[1] != "blob" {
		return nil // a submodule: not fetched, left an empty directory
	}
	n, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return tc.fail(ErrFetch, err, "git ls-tree: unexpected size in %q", line)
	}
	if tc.bytes += n; tc.bytes > tc.lim.Checkout {
		return tc.fail(ErrLimit, nil, "the tree's files are larger than %d bytes", tc.lim.Checkout)
	}
	return nil
}

// checkURL accepts https, http and git URLs with a host, and file URLs and absolute
// local paths when allowed.
func checkURL(raw string, allowLocal bool) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("a url is required")
	}
	if strings.HasPrefix(raw, "-") || strings.ContainsFunc(raw, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return nil, fmt.Errorf("%q is not a URL git can fetch", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL", raw)
	}
	switch u.Scheme {
	case "https", "http", "git":
		if u.Host == "" {
			return nil, fmt.Errorf("%q has no host", raw)
		}
		return u, nil
	case "file":
		if allowLocal {
			return u, nil
		}
	case "":
		if allowLocal && filepath.IsAbs(raw) {
			return u, nil
		}
	}
	return nil, fmt.Errorf("%q: the scheme is not https, http or git", raw)
}

// checkRef accepts what git check-ref-format would (one level allowed) and commits,
// and nothing fetch could read as an option or a refspec.
func checkRef(ref string) error {
	if ref == "" {
		return nil
	}
	bad := func() error { return fmt.Errorf("%q is not a branch, tag or commit name", ref) }
	switch {
	case len(ref) > 1024, strings.HasPrefix(ref, "-"), strings.HasPrefix(ref, "+"), strings.HasPrefix(ref, "/"),
		strings.HasSuffix(ref, "/"), strings.HasSuffix(ref, "."), strings.HasSuffix(ref, ".lock"),
		strings.Contains(ref, ".."), strings.Contains(ref, "@{"), strings.Contains(ref, "//"), ref == "@":
		return bad()
	case strings.ContainsFunc(ref, func(r rune) bool { return r <= ' ' || r == 0x7f || strings.ContainsRune("~^:?*[\\", r) }):
		return bad()
	}
	for _, c := range strings.Split(ref, "/") {
		if strings.HasPrefix(c, ".") {
			return bad()
		}
	}
	return nil
}

// credentialHelper gives the remote's credentials to git when the remote's own host
// asks for them (a redirect to another host gets none). git runs it with sh.
const credentialHelper = `!f() { test "$1" = get || exit 0; h=; while IFS= read -r l && test -n "$l"; do case "$l" in host=*) h="${l#host=}";; esac; done; test "$h" = "$PITH_GIT_HOST" || exit 0; printf 'username=%s\npassword=%s\n' "$PITH_GIT_USERNAME" "$PITH_GIT_PASSWORD"; }; f`

// remoteConfig turns the remote's settings into git configuration (and environment
// for the credential helper), writing certificates into dir.
func remoteConfig(c download.Config, u *url.URL, dir string) ([][2]string, []string, error) {
	check := c
	check.URL = "" // git URLs are not http ones; the rest is checked as for any remote
	if _, err := download.New(check); err != nil {
		return nil, nil, err
	}
	var config [][2]string
	var env []string
	if !c.TLSValidation {
		config = append(config, [2]string{"http.sslVerify", "false"})
	}
	for _, f := range []struct{ key, name, pem string }{
		{"http.sslCAInfo", "ca.pem", c.CACert}, {"http.sslCert", "cert.pem", c.ClientCert}, {"http.sslKey", "key.pem", c.ClientKey},
	} {
		if f.pem == "" {
			continue
		}
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.pem), 0o600); err != nil {
			return nil, nil, err
		}
		config = append(config, [2]string{f.key, p})
	}
	if c.ProxyURL != "" {
		pu, err := url.Parse(c.ProxyURL)
		if err != nil {
			return nil, nil, fmt.Errorf("proxy_url: %q is not a URL", c.ProxyURL)
		}
		if c.ProxyUsername != "" || c.ProxyPassword != "" {
			pu.User = url.UserPassword(c.ProxyUsername, c.ProxyPassword)
		}
		config = append(config, [2]string{"http.proxy", pu.String()})
	}
	if c.Username != "" || c.Password != "" {
		if strings.ContainsAny(c.Username+c.Password, "\n\x00") {
			return nil, nil, errors.New("username/password: a line break is not allowed")
		}
		config = append(config, [2]string{"credential.helper", credentialHelper})
		env = append(env, "PITH_GIT_HOST="+u.Host, "PITH_GIT_USERNAME="+c.Username, "PITH_GIT_PASSWORD="+c.Password)
	}
	for k, v := range c.Headers {
		if strings.ContainsAny(k+v, "\r\n\x00") || strings.ContainsAny(k, ": ") {
			return nil, nil, fmt.Errorf("headers: %q is not a header git can send", k)
		}
		config = append(config, [2]string{"http.extraHeader", k + ": " + v})
	}
	if len(c.Headers) > 0 {
		config = append(config, [2]string{"http.followRedirects", "false"})
	}
	read := c.SockReadTimeout
	if read <= 0 {
		read = 60
	}
	config = append(config, [2]string{"http.lowSpeedLimit", "1"}, [2]string{"http.lowSpeedTime", strconv.Itoa(int(math.Ceil(read)))})
	return config, env, nil
}
