package gitsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// git runs git commands for one fetch: an environment of its own and a deadline.
type git struct {
	ctx context.Context
	dir string   // the git directory
	env []string // the whole environment of every command
}

// maxStderr bounds what is kept of a command's error output.
const maxStderr = 8 << 10

// baseEnv is the environment git runs with: nothing inherited but PATH and the proxy
// variables (which pith's downloader honours too), no configuration files, no prompts.
func baseEnv(home string, protocols string, config [][2]string) []string {
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + home,
		"LANG=C", "LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=", "SSH_ASKPASS=",
		"GIT_ALLOW_PROTOCOL=" + protocols,
		"GIT_PROTOCOL_FROM_USER=0",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_OPTIONAL_LOCKS=0",
		fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(config)),
	}
	for i, kv := range config {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	for _, k := range []string{"PATH", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// hardening is the configuration every command runs with.
var hardening = [][2]string{
	{"core.hooksPath", "/dev/null"},
	{"core.fsmonitor", "false"},
	{"core.symlinks", "true"},
	{"core.protectHFS", "true"},
	{"core.protectNTFS", "true"},
	{"core.bigFileThreshold", "16m"},
	{"submodule.recurse", "false"},
	{"fetch.recurseSubmodules", "false"},
	{"fetch.unpackLimit", "1"},
	{"pack.threads", "1"},
	{"credential.helper", ""},
	{"protocol.version", "2"},
	{"http.sslVersion", "tlsv1.2"},
	{"advice.detachedHead", "false"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
}

// run runs one git command and returns its output; a failure's error holds the end of
// its stderr. watch, if set, is called every tick while the command runs and stops it
// by returning an error.
func (g *git) run(stdout io.Writer, watch func() error, args ...string) error {
	cmd := exec.Command("git", append([]string{"--git-dir=" + g.dir}, args...)...)
	cmd.Env = g.env
	cmd.Dir = filepath.Dir(g.dir)
	cmd.Stdout = stdout
	var stderr tailBuffer
	cmd.Stderr = &stderr
	// git starts helpers (remote-https, index-pack): its whole process group goes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return fmt.Errorf("git is needed for git remotes and is not installed: %w", err)
		}
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var stopped error
	ctxDone := g.ctx.Done()
	kill := func(why error) {
		if stopped == nil {
			stopped = why
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		ctxDone, watch = nil, nil
	}
	for {
		select {
		case err := <-done:
			if stopped != nil {
				return stopped
			}
			if err != nil {
				return &gitError{args: args, err: err, stderr: stderr.String()}
			}
			return nil
		case <-ctxDone:
			kill(context.Cause(g.ctx))
		case <-tick.C:
			if watch != nil {
				if err := watch(); err != nil {
					kill(err)
				}
			}
		}
	}
}

// output runs a command that writes a line or two and returns it, trimmed.
func (g *git) output(args ...string) (string, error) {
	var out bytes.Buffer
	if err := g.run(&limitWriter{w: &out, n: 1 << 16}, nil, args...); err != nil {
		return "", err
	}
	return strings.TrimSpace(out.String()), nil
}

// gitError is a git command that failed.
type gitError struct {
	args   []string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	sub := ""
	for _, a := range e.args {
		if !strings.HasPrefix(a, "-") {
			sub = a
			break
		}
	}
	return fmt.Sprintf("git %s: %s", sub, msg)
}

func (e *gitError) Unwrap() error { return e.err }

// tailBuffer keeps the last maxStderr bytes written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > maxStderr {
		t.b = append(t.b[:0], t.b[len(t.b)-maxStderr:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// limitWriter fails past n bytes (and git, its pipe closed, stops).
type limitWriter struct {
	w io.Writer
	n int64
}

var errTooMuchOutput = errors.New("more output than expected")

func (l *limitWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, errTooMuchOutput
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}

// dirSize is the bytes of the regular files under dir (a git directory while objects
// arrive into it); files that vanish while it walks are skipped.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
