package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"pith/bench"
)

// benchCmd runs a `pith bench` scenario against a running pith.
func benchCmd(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "rpm" {
		return benchRpm(ctx, args[1:])
	}
	if len(args) == 0 || args[0] != "upload" {
		return fmt.Errorf("usage: pith bench upload|rpm [flags]  (the other scenarios are not built yet)")
	}
	fs := flag.NewFlagSet("bench upload", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:24817", "pith origin")
	user := fs.String("user", "admin", "user")
	password := fs.String("password", os.Getenv("PITH_ADMIN_PASSWORD"), "password (env PITH_ADMIN_PASSWORD)")
	sizes := fs.String("sizes", "100000,3600000,5000000,10000000", "file sizes in bytes, comma-separated")
	n := fs.Int("n", 100, "uploads (and downloads) per size and user count")
	users := fs.String("users", "1,3", "concurrent users, comma-separated")
	pid := fs.Int("pid", 0, "server process id, to report its peak RSS")
	title := fs.String("title", "Upload and download", "table title")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg := bench.UploadConfig{URL: strings.TrimSuffix(*url, "/"), User: *user, Password: *password, N: *n, PID: *pid}
	for _, s := range strings.Split(*sizes, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || v <= 0 {
			return fmt.Errorf("--sizes: %q is not a positive byte count", s)
		}
		cfg.Sizes = append(cfg.Sizes, v)
	}
	for _, s := range strings.Split(*users, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v <= 0 {
			return fmt.Errorf("--users: %q is not a positive count", s)
		}
		cfg.Users = append(cfg.Users, v)
	}
	if *n <= 0 {
		return fmt.Errorf("--n: %d must be positive", *n)
	}
	rows, err := bench.Upload(ctx, cfg)
	bench.Markdown(os.Stdout, *title, rows)
	return err
}

// benchRpm runs the rpm scenario: sync on demand and publish a generated repository,
// on pith and on any peers, and createrepo_c over the same packages.
func benchRpm(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench rpm", flag.ContinueOnError)
	url := fs.String("url", "http://127.0.0.1:24817", "pith origin")
	user := fs.String("user", "admin", "user")
	password := fs.String("password", os.Getenv("PITH_ADMIN_PASSWORD"), "password (env PITH_ADMIN_PASSWORD)")
	packages := fs.Int("packages", 20000, "packages in the generated repository")
	dir := fs.String("dir", "", "where to generate the repository (default: a temporary directory)")
	pid := fs.Int("pid", 0, "pith's process id, to report its peak RSS")
	createrepo := fs.Bool("createrepo", false, "also write the packages as .rpm files and time createrepo_c over them")
	var peers []bench.Target
	fs.Func("peer", "another server to measure the same way, name=URL[,user=U][,password=P][,procs=a|b] (repeatable; "+
		"e.g. Pulp=http://127.0.0.1:24817,procs=pulpcore-worker, password from PASSWORD_PULP)", func(v string) error {
		t, err := bench.ParseTarget(v)
		peers = append(peers, t)
		return err
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *packages <= 0 {
		return fmt.Errorf("--packages: %d must be positive", *packages)
	}
	d := *dir
	if d == "" {
		tmp, err := os.MkdirTemp("", "pith-bench-rpm-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		d = tmp
	}
	pith := bench.Target{Name: "pith", URL: strings.TrimSuffix(*url, "/"), User: *user, Password: *password}
	if *pid != 0 {
		pith.Procs.PIDs = []int{*pid}
	}
	res, err := bench.Rpm(ctx, bench.RpmConfig{Targets: append([]bench.Target{pith}, peers...), Packages: *packages, Dir: d, Createrepo: *createrepo})
	bench.RpmMarkdown(os.Stdout, res)
	return err
}
