package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"

	"pith/config"
	"pith/meta"
)

// adminUserUsage is the help of `pith admin user`.
const adminUserUsage = `usage: pith admin user COMMAND [flags]
  list                      list the users
  create NAME [PASSWORD]    create a user (PASSWORD, or $PITH_USER_PASSWORD, or none:
                            it then cannot log in with a password)
  superuser NAME on|off     make a user a superuser, or an ordinary user
  password NAME [PASSWORD]  set a user's password (generated and printed when omitted)
  role NAME ROLE            give a user a role on every object (file.filerepository_viewer…)
  delete NAME               delete a user, its roles and sessions`

// adminUser runs `pith admin user …` against the database the flags name.
func adminUser(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(adminUserUsage)
	}
	// An unknown command, or one missing its arguments, is refused before the store is
	// opened (which would make it).
	need, ok := adminUserArgs[args[0]]
	if !ok {
		return fmt.Errorf("pith admin user: unknown command %q\n%s", args[0], adminUserUsage)
	}
	cfg, pos, err := config.Load("admin user "+args[0], args[1:], os.Getenv)
	if err != nil {
		return err
	}
	if len(pos) < need {
		return fmt.Errorf("pith admin user %s: missing arguments\n%s", args[0], adminUserUsage)
	}
	db, err := openDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	switch args[0] {
	case "list":
		users, _, err := meta.ListUsers(ctx, db, meta.List{})
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tUSERNAME\tSUPERUSER\tACTIVE\tPASSWORD")
		for _, u := range users {
			fmt.Fprintf(w, "%d\t%s\t%v\t%v\t%v\n", u.ID, u.Username, u.Superuser, u.Active, u.PasswordHash != "")
		}
		return w.Flush()
	case "create":
		u := meta.User{Username: pos[0], Active: true}
		pw := os.Getenv("PITH_USER_PASSWORD")
		if len(pos) > 1 {
			pw = pos[1]
		}
		if pw != "" {
			if u.PasswordHash, err = meta.HashPassword(pw); err != nil {
				return err
			}
		}
		if _, err := meta.CreateUser(ctx, db, u); err != nil {
			return err
		}
		fmt.Printf("created user %s\n", u.Username)
		return nil
	case "superuser":
		if pos[1] != "on" && pos[1] != "off" {
			return fmt.Errorf("pith admin user superuser %s: say on or off, not %q", pos[0], pos[1])
		}
		u, err := meta.UserByName(ctx, db, pos[0])
		if err != nil {
			return err
		}
		u.Superuser = pos[1] == "on"
		if err := meta.UpdateUser(ctx, db, u); err != nil {
			return err
		}
		fmt.Printf("user %s is %s\n", u.Username, map[bool]string{true: "a superuser", false: "an ordinary user"}[u.Superuser])
		return nil
	case "password":
		u, err := meta.UserByName(ctx, db, pos[0])
		if err != nil {
			return err
		}
		pw, generated := "", false
		if len(pos) > 1 {
			pw = pos[1]
		} else {
			pw, generated = randomPassword(), true
		}
		if u.PasswordHash, err = meta.HashPassword(pw); err != nil {
			return err
		}
		if err := meta.UpdateUser(ctx, db, u); err != nil {
			return err
		}
		if generated {
			fmt.Printf("new password for %s: %s\n", u.Username, pw)
		} else {
			fmt.Printf("password for %s updated\n", u.Username)
		}
		return nil
	case "role":
		u, err := meta.UserByName(ctx, db, pos[0])
		if err != nil {
			return err
		}
		role, err := meta.RoleByName(ctx, db, pos[1])
		if err != nil {
			return fmt.Errorf("role %s: %w (the built-in roles exist once an API process has started)", pos[1], err)
		}
		if _, err := meta.AddGrant(ctx, db, meta.Holder{ID: u.ID}, role.ID, meta.Object{}); err != nil && !errors.Is(err, meta.ErrConflict) {
			return err
		}
		fmt.Printf("user %s holds %s on every object\n", u.Username, role.Name)
		return nil
	case "delete":
		u, err := meta.UserByName(ctx, db, pos[0])
		if err != nil {
			return err
		}
		if err := meta.DeleteUser(ctx, db, u.ID); err != nil {
			return err
		}
		fmt.Printf("deleted user %s\n", u.Username)
		return nil
	}
	return fmt.Errorf("pith admin user: %s has no case", args[0]) // adminUserArgs names one more
}

// adminUserArgs are the commands of pith admin user and the arguments each needs at least.
var adminUserArgs = map[string]int{"list": 0, "create": 1, "superuser": 2, "password": 1, "role": 2, "delete": 1}
