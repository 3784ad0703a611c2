// Command pith is a content repository manager that speaks the Pulp 3 REST API.
//
//	pith serve                 API, content app and task workers in one process
//	pith api|content|worker    one role per process, over PostgreSQL
//	pith migrate               apply database migrations
//	pith admin password [PW]   reset the admin password (generated when omitted)
//	pith admin rotate-key      add a new encryption key and seal every secret with it
//	pith admin reencrypt       seal every secret with the first key of the key file
//	pith admin forget-secrets  empty the secrets no key opens (the key was lost)
//	pith admin user …          list, create, change and delete users
//	pith version               print the versions pith claims
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"pith/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "pith:", err)
		os.Exit(1)
	}
}

const usage = `usage: pith <command> [flags]

commands:
  serve              run the API, the content app and the task workers in one process
  api                run only the REST API (PostgreSQL required; any number of processes)
  content            run only the content app (PostgreSQL required; several may share --listen)
  worker             run only task workers (PostgreSQL required)
  migrate            apply database migrations and exit
  admin password     reset the admin password: pith admin password [NEW] (-- before a NEW that starts with -)
  admin rotate-key   write a new key at the top of --db-encryption-key and seal every stored secret with it
                     (stop every pith process first; docs/operations.md, Security)
  admin reencrypt    seal every stored secret with the first key of --db-encryption-key (after
                     putting a new key first by hand, for a rotation without downtime)
  admin forget-secrets
                     empty the stored secrets no key of --db-encryption-key opens (the key
                     that sealed them was lost), so that pith starts; set them again
  admin user         users: list, create, superuser, password, role, delete (pith admin user)
  version            print the Pulp component versions pith claims
  bench STUDY        a scale study, pith next to upstream Pulp: upload, rpm, serve, hosts,
                     promote, sync (pith bench STUDY -h; docs/benchmarks.md)

flags (each also PITH_<NAME> in the environment or a key in the --config JSON file):
`

func run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Print(usage + config.Usage())
		return nil
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve", "api", "content", "worker":
		cfg, err := loadNoArgs(cmd, rest)
		if err != nil {
			return err
		}
		r := map[string]roles{"serve": {true, true, true}, "api": {api: true}, "content": {content: true}, "worker": {worker: true}}[cmd]
		return runRoles(ctx, cmd, cfg, r)
	case "migrate":
		cfg, err := loadNoArgs("migrate", rest)
		if err != nil {
			return err
		}
		db, err := openDB(ctx, cfg)
		if err != nil {
			return err
		}
		defer db.Close()
		fmt.Printf("migrated %s database\n", db.Dialect())
		return nil
	case "admin":
		return admin(ctx, rest)
	case "version":
		return printVersions(ctx)
	case "bench":
		return benchCmd(ctx, rest)
	}
	return fmt.Errorf("unknown command %q; run pith --help", cmd)
}

// admin runs the admin subcommands.
func admin(ctx context.Context, args []string) error {
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	switch sub {
	case "password":
		cfg, pos, err := config.Load("admin password", args[1:], os.Getenv)
		if err != nil {
			return err
		}
		if len(pos) > 1 {
			return fmt.Errorf("admin password: unexpected argument %q; usage: pith admin password [NEW] [flags]", pos[1])
		}
		return adminPassword(ctx, cfg, pos)
	case "user":
		return adminUser(ctx, args[1:])
	case "rotate-key", "reencrypt", "forget-secrets":
		cfg, err := loadNoArgs("admin "+sub, args[1:])
		if err != nil {
			return err
		}
		if sub != "forget-secrets" {
			return adminReseal(ctx, cfg, sub == "rotate-key")
		}
		db, err := openStore(ctx, cfg, true)
		if err == nil {
			db.Close()
		}
		return err
	}
	return fmt.Errorf("usage: pith admin password [NEW] [flags], pith admin rotate-key|reencrypt|forget-secrets [flags], pith admin user COMMAND")
}

// loadNoArgs loads the settings of a command that takes no positional arguments.
func loadNoArgs(cmd string, args []string) (config.Config, error) {
	cfg, pos, err := config.Load(cmd, args, os.Getenv)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("%s: unexpected argument %q (flags are --name value)", cmd, pos[0])
	}
	return cfg, err
}
