package meta

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"pith/secret"
)

// secretNames are the JSON members stored sealed wherever pith keeps JSON it was given:
// a remote's and an upstream Pulp's attrs and task arguments (a remote update's body). They are the remote
// fields Pulp stores encrypted (EncryptedTextField), rpm's sles_auth_token and
// ansible's Galaxy token.
var secretNames = map[string]bool{
	"client_key": true, "username": true, "password": true,
	"proxy_username": true, "proxy_password": true, "sles_auth_token": true, "token": true,
}

// ErrNoKey is the error of storing a secret in a database opened without keys.
var ErrNoKey = errors.New("no encryption key to seal a secret with (set db-encryption-key)")

// SetKeys gives the store the keys that seal and open secrets; without them a secret
// can be neither stored nor read.
func (db *DB) SetKeys(k *secret.Keys) { db.keys = k }

// Keys are the store's keys; nil when none were set.
func (db *DB) Keys() *secret.Keys { return db.keys }

func keysOf(q Querier) *secret.Keys {
	switch q := q.(type) {
	case *DB:
		return q.keys
	case *Tx:
		return q.keys
	}
	return nil
}

// SealSecrets seals the secret members of a JSON document (any depth); members that are
// null or empty stay as they are. A document without secrets comes back unchanged.
func SealSecrets(q Querier, raw json.RawMessage) (json.RawMessage, error) {
	k := keysOf(q)
	out, _, err := walkSecrets(raw, func(name, v string) (string, error) {
		if k == nil {
			return "", fmt.Errorf("%s: %w", name, ErrNoKey)
		}
		return k.Seal(v), nil
	})
	return out, err
}

// OpenSecrets opens the sealed secret members of a JSON document; plaintext ones (a
// database from before secrets were sealed, not yet migrated) pass as they are.
func OpenSecrets(q Querier, raw json.RawMessage) (json.RawMessage, error) {
	k := keysOf(q)
	out, _, err := walkSecrets(raw, func(name, v string) (string, error) { return open(k, v) })
	return out, err
}

func open(k *secret.Keys, v string) (string, error) {
	if !secret.IsSealed(v) {
		return v, nil
	}
	if k == nil {
		return "", fmt.Errorf("a secret is sealed with key %s, but no encryption key was given (db-encryption-key)", secret.SealedWith(v))
	}
	return k.Open(v)
}

// A resealer is what resealRows does to each stored secret value.
type resealer func(k *secret.Keys, name, v string) (string, error)

// sealPlain seals a value stored in plain text; sealed ones stay.
func sealPlain(k *secret.Keys, name, v string) (string, error) {
	if secret.IsSealed(v) {
		return v, nil
	}
	if k == nil {
		return "", fmt.Errorf("%s is stored in plain text: %w", name, ErrNoKey)
	}
	return k.Seal(v), nil
}

// sealAgain seals every value with the first key: plaintext ones, and sealed ones
// opened with the key that sealed them.
func sealAgain(k *secret.Keys, name, v string) (string, error) {
	if k == nil {
		return "", fmt.Errorf("%s: %w", name, ErrNoKey)
	}
	if !secret.IsSealed(v) || k.Current(v) {
		return sealPlain(k, name, v)
	}
	plain, err := open(k, v)
	if err != nil {
		return "", err
	}
	return k.Seal(plain), nil
}

// forget empties a sealed value that no key opens.
func forget(k *secret.Keys, name, v string) (string, error) {
	if _, err := open(k, v); err != nil {
		return "", nil
	}
	return v, nil
}

// walkSecrets replaces every non-empty string member named in secretNames with fn's
// answer. It parses only documents that mention a secret's name.
func walkSecrets(raw json.RawMessage, fn func(name, v string) (string, error)) (json.RawMessage, bool, error) {
	if !mentionsSecret(raw) {
		return raw, false, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber() // numbers come back as written
	var doc any
	if err := d.Decode(&doc); err != nil {
		return nil, false, fmt.Errorf("meta: secrets of a stored document: %w", err)
	}
	changed := false
	var walk func(v any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case map[string]any:
			for name, m := range v {
				if s, ok := m.(string); ok && s != "" && secretNames[name] {
					out, err := fn(name, s)
					if err != nil {
						return err
					}
					changed = changed || out != s
					v[name] = out
				} else if err := walk(m); err != nil {
					return err
				}
			}
		case []any:
			for _, m := range v {
				if err := walk(m); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(doc); err != nil || !changed {
		return raw, false, err
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(doc); err != nil {
		return nil, false, err
	}
	return json.RawMessage(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), true, nil
}

func mentionsSecret(raw json.RawMessage) bool {
	for name := range secretNames {
		if bytes.Contains(raw, []byte(`"`+name+`"`)) {
			return true
		}
	}
	return false
}

// Sealed reports whether the database stores secrets sealed with a key: then the key
// file that sealed them must be given, never a new one made.
func (db *DB) Sealed(ctx context.Context) (bool, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, sealMigration).Scan(&n)
	if err != nil || n == 0 {
		return false, nil // a new database, or one from before secrets were sealed
	}
	err = db.QueryRow(ctx, `SELECT (SELECT count(*) FROM remotes WHERE attrs LIKE ?) + (SELECT count(*) FROM upstream_pulps WHERE attrs LIKE ?)`,
		"%"+sealedMark+"%", "%"+sealedMark+"%").Scan(&n)
	return n > 0, err
}

// sealedMark is in every stored document that holds a sealed value.
const sealedMark = `"pith:v1:`

// sealMigration is the migration whose step sealed the secrets older versions stored in
// plain text.
const sealMigration = "0010_sealed_secrets.sql"

// sealStored seals what older versions stored in plain text: the secrets of remotes and
// of task arguments (a remote update's body). It is the Go step of sealMigration.
func sealStored(ctx context.Context, tx *Tx) error {
	_, err := resealRows(ctx, tx, sealPlain, sealedDocs[:2]) // upstream_pulps came later
	return err
}

// CheckSecrets opens every remote's and upstream Pulp's secrets at start, so that a
// wrong or missing key is an error naming the key file before anything is sent
// upstream.
func (db *DB) CheckSecrets(ctx context.Context) error {
	for _, t := range []struct{ table, what string }{{"remotes", "remote"}, {"upstream_pulps", "upstream pulp"}} {
		err := scanRows(ctx, db, "SELECT name, attrs FROM "+t.table+" WHERE attrs LIKE ?", []any{"%" + sealedMark + "%"}, func(r *sql.Rows) error {
			var name, attrs string
			if err := r.Scan(&name, &attrs); err != nil {
				return err
			}
			if _, err := OpenSecrets(db, json.RawMessage(attrs)); err != nil {
				return fmt.Errorf("%s %q: %w", t.what, name, err)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("meta: check secrets: %w", err)
		}
	}
	return nil
}

// Reseal seals every stored secret again with the first key (after a key rotation), in
// one transaction; it returns how many documents it rewrote. Keys after the first are
// no longer needed once it returns.
func (db *DB) Reseal(ctx context.Context) (int, error) { return db.rewriteSecrets(ctx, sealAgain) }

// ForgetSecrets empties the stored secrets that no key opens (the key that sealed them
// was lost), so that the remotes can be used and given their credentials again; it
// returns how many documents it rewrote.
func (db *DB) ForgetSecrets(ctx context.Context) (int, error) { return db.rewriteSecrets(ctx, forget) }

// rewriteSecrets applies fn to every stored secret in one transaction.
func (db *DB) rewriteSecrets(ctx context.Context, fn resealer) (int, error) {
	n := 0
	err := db.Tx(ctx, func(tx *Tx) error {
		var err error
		n, err = resealRows(ctx, tx, fn, sealedDocs)
		return err
	})
	return n, err
}

// sealedDoc is a column of JSON documents that may hold secrets (where: which rows).
type sealedDoc struct{ table, col, where string }

// sealedDocs are every column that holds sealed secrets.
var sealedDocs = []sealedDoc{
	{"remotes", "attrs", ""},
	{"tasks", "args", " WHERE " + mentionsSecretSQL("args")},
	{"upstream_pulps", "attrs", ""},
}

// resealRows applies fn to the secrets of the documents in docs that hold them; it
// returns how many it rewrote.
func resealRows(ctx context.Context, tx *Tx, fn resealer, docs []sealedDoc) (int, error) {
	type row struct {
		id  int64
		doc string
	}
	n := 0
	for _, t := range docs {
		var todo []row
		err := scanRows(ctx, tx, "SELECT id, "+t.col+" FROM "+t.table+t.where, nil, func(r *sql.Rows) error {
			var x row
			if err := r.Scan(&x.id, &x.doc); err != nil {
				return err
			}
			todo = append(todo, x)
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("meta: reseal %s: %w", t.table, err)
		}
		for _, x := range todo {
			out, changed, err := walkSecrets(json.RawMessage(x.doc), func(name, v string) (string, error) { return fn(tx.keys, name, v) })
			if err != nil {
				return n, fmt.Errorf("meta: %s %d: %w", t.table, x.id, err)
			}
			if !changed {
				continue
			}
			if _, err := tx.Exec(ctx, "UPDATE "+t.table+" SET "+t.col+" = ? WHERE id = ?", string(out), x.id); err != nil {
				return n, fmt.Errorf("meta: reseal %s %d: %w", t.table, x.id, err)
			}
			n++
		}
	}
	return n, nil
}

// mentionsSecretSQL is a condition true of a column holding a document that names a
// secret member (mentionsSecret in SQL).
func mentionsSecretSQL(col string) string {
	var likes []string
	for _, name := range slices.Sorted(maps.Keys(secretNames)) {
		likes = append(likes, fmt.Sprintf(`%s LIKE '%%"%s"%%'`, col, name))
	}
	return "(" + strings.Join(likes, " OR ") + ")"
}
