package meta_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pith/meta"
	"pith/secret"
)

// secretAttrs are a remote's attrs with every secret field set, each value unique.
const secretAttrs = `{"username": "u-s3cr3t", "password": "pw-s3cr3t", "proxy_url": "http://proxy:3128",
	"proxy_username": "pu-s3cr3t", "proxy_password": "pp-s3cr3t", "sles_auth_token": "tok-s3cr3t",
	"client_key": "-----BEGIN PRIVATE KEY-----\nck-s3cr3t\n-----END PRIVATE KEY-----\n", "headers": [{"X-A": "b"}], "rate_limit": 12345678901}`

var plaintexts = []string{"u-s3cr3t", "pw-s3cr3t", "pu-s3cr3t", "pp-s3cr3t", "tok-s3cr3t", "ck-s3cr3t"}

func newKeys(t *testing.T) *secret.Keys {
	t.Helper()
	k, err := secret.Create(filepath.Join(t.TempDir(), "encryption.key"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// rawAttrs is a remote's attrs as stored.
func rawAttrs(t *testing.T, db *meta.DB, id int64) string {
	t.Helper()
	var s string
	if err := db.QueryRow(context.Background(), `SELECT attrs FROM remotes WHERE id = ?`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func assertSealed(t *testing.T, stored string) {
	t.Helper()
	for _, p := range plaintexts {
		if strings.Contains(stored, p) {
			t.Errorf("%q stored in plain text: %s", p, stored)
		}
	}
	if !strings.Contains(stored, "pith:v1:") {
		t.Errorf("nothing sealed: %s", stored)
	}
}

func assertPlain(t *testing.T, attrs json.RawMessage) {
	t.Helper()
	var got, want map[string]any
	json.Unmarshal(attrs, &got)
	json.Unmarshal([]byte(secretAttrs), &want)
	if b, _ := json.Marshal(got); string(b) != mustJSON(want) {
		t.Errorf("attrs read back %s, want %s", b, mustJSON(want))
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

// A remote's secrets are sealed in the database and plaintext to its readers; the
// arguments of a task that carries them (a remote update) too.
func TestSecretsSealed(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		if _, err := meta.CreateRemote(ctx, db, meta.Remote{Type: "file.file", Name: "nokey", URL: "http://x/", Attrs: json.RawMessage(secretAttrs)}); !errors.Is(err, meta.ErrNoKey) {
			t.Errorf("a secret stored without keys: %v, want ErrNoKey", err)
		}
		db.SetKeys(newKeys(t))
		r, err := meta.CreateRemote(ctx, db, meta.Remote{Type: "file.file", Name: "r", URL: "http://x/", Attrs: json.RawMessage(secretAttrs)})
		if err != nil {
			t.Fatal(err)
		}
		assertSealed(t, rawAttrs(t, db, r.ID))
		assertPlain(t, r.Attrs)
		if !strings.Contains(rawAttrs(t, db, r.ID), "12345678901") {
			t.Errorf("a number changed on the way: %s", rawAttrs(t, db, r.ID))
		}
		r.Attrs = json.RawMessage(strings.Replace(secretAttrs, "12345678901", "7", 1))
		if err := meta.UpdateRemote(ctx, db, r); err != nil {
			t.Fatal(err)
		}
		assertSealed(t, rawAttrs(t, db, r.ID))
		list, _, err := meta.ListRemotes(ctx, db, meta.List{})
		if err != nil || len(list) != 1 || !strings.Contains(string(list[0].Attrs), "pw-s3cr3t") {
			t.Errorf("list: %v %+v", err, list)
		}
		// A task's arguments, a remote update's body say.
		args, err := meta.SealSecrets(db, json.RawMessage(`{"kind": "remote", "body": {"password": "pw-s3cr3t", "name": "r"}}`))
		if err != nil || strings.Contains(string(args), "pw-s3cr3t") {
			t.Fatalf("sealed arguments %s, %v", args, err)
		}
		if plain, err := meta.OpenSecrets(db, args); err != nil || !strings.Contains(string(plain), `"password":"pw-s3cr3t"`) {
			t.Errorf("opened arguments %s, %v", plain, err)
		}
	})
}

// A database from before secrets were sealed has them sealed by its migration.
func TestPlaintextSecretsMigrated(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		// As an older pith left it: the migration not applied, secrets in plain text.
		if _, err := db.Exec(ctx, `DELETE FROM schema_migrations WHERE name = '0010_sealed_secrets.sql'`); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, `INSERT INTO remotes (pulp_id, type, name, url, policy, attrs, labels, created, updated)
			VALUES ('00000000-0000-0000-0000-000000000001', 'file.file', 'old', 'http://x/', 'immediate', ?, '{}', 0, 0)`, secretAttrs); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(ctx, `INSERT INTO tasks (pulp_id, name, state, logging_cid, args, reserved, created, updated)
			VALUES ('00000000-0000-0000-0000-000000000002', 'pulpcore.app.tasks.base.general_update', 'completed', '', ?, '[]', 0, 0)`,
			`{"kind":"remote","body":{"password":"pw-s3cr3t"}}`); err != nil {
			t.Fatal(err)
		}
		if sealed, err := db.Sealed(ctx); err != nil || sealed {
			t.Errorf("Sealed before the migration: %v %v", sealed, err)
		}
		// Without keys the migration cannot seal them, and says so.
		if err := db.Migrate(ctx); !errors.Is(err, meta.ErrNoKey) {
			t.Fatalf("migrate without keys: %v, want ErrNoKey", err)
		}
		db.SetKeys(newKeys(t))
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		r, err := meta.RemoteByPulpID(ctx, db, "00000000-0000-0000-0000-000000000001")
		if err != nil {
			t.Fatal(err)
		}
		assertSealed(t, rawAttrs(t, db, r.ID))
		assertPlain(t, r.Attrs)
		var args string
		db.QueryRow(ctx, `SELECT args FROM tasks`).Scan(&args)
		if strings.Contains(args, "pw-s3cr3t") {
			t.Errorf("task arguments in plain text: %s", args)
		}
		if sealed, err := db.Sealed(ctx); err != nil || !sealed {
			t.Errorf("Sealed after the migration: %v %v", sealed, err)
		}
	})
}

// After a new key is put first and the secrets are sealed again, the old key can go; a
// file without the key that sealed them is an error naming it, never garbage.
func TestResealAndWrongKey(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		old := newKeys(t)
		db.SetKeys(old)
		r, err := meta.CreateRemote(ctx, db, meta.Remote{Type: "file.file", Name: "r", URL: "http://x/", Attrs: json.RawMessage(secretAttrs)})
		if err != nil {
			t.Fatal(err)
		}
		before := rawAttrs(t, db, r.ID)
		keys, err := secret.AddKey(old.Path())
		if err != nil {
			t.Fatal(err)
		}
		db.SetKeys(keys)
		if n, err := db.Reseal(ctx); err != nil || n != 1 {
			t.Fatalf("reseal: %d records, %v; want 1", n, err)
		}
		after := rawAttrs(t, db, r.ID)
		assertSealed(t, after)
		if strings.Contains(after, "pith:v1:"+old.IDs()[0]) || after == before {
			t.Errorf("still sealed with the old key %s: %s", old.IDs()[0], after)
		}
		if n, err := db.Reseal(ctx); err != nil || n != 0 {
			t.Errorf("a second reseal rewrote %d records (%v)", n, err)
		}
		// The old key removed from the file: everything still opens.
		b, _ := os.ReadFile(keys.Path())
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		newOnly := filepath.Join(t.TempDir(), "new-only.key")
		os.WriteFile(newOnly, []byte(strings.Join(lines[:2], "\n")+"\n"), 0o600)
		k, err := secret.Load(newOnly)
		if err != nil || len(k.IDs()) != 1 {
			t.Fatalf("key file without the old key: %v", err)
		}
		db.SetKeys(k)
		if err := db.CheckSecrets(ctx); err != nil {
			t.Errorf("check with the new key alone: %v", err)
		}
		if got, err := meta.RemoteByID(ctx, db, r.ID); err != nil || !strings.Contains(string(got.Attrs), "pw-s3cr3t") {
			t.Errorf("read with the new key alone: %v", err)
		}
		// The old key alone opens nothing.
		db.SetKeys(old)
		if err := db.CheckSecrets(ctx); err == nil || !strings.Contains(err.Error(), old.Path()) || !strings.Contains(err.Error(), `remote "r"`) {
			t.Errorf("check with a wrong key: %v, want an error naming the remote and %s", err, old.Path())
		}
		got, err := meta.RemoteByID(ctx, db, r.ID)
		if err == nil || !strings.Contains(err.Error(), old.Path()) || strings.Contains(string(got.Attrs), "s3cr3t") {
			t.Errorf("read with a wrong key: %v, attrs %s", err, got.Attrs)
		}
		db.SetKeys(nil)
		if _, err := meta.RemoteByID(ctx, db, r.ID); err == nil || !strings.Contains(err.Error(), "db-encryption-key") {
			t.Errorf("read without keys: %v", err)
		}
	})
}
