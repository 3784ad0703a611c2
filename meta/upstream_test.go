package meta_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"pith/meta"
	"pith/secret"
)

// An upstream Pulp's secrets are sealed at rest as a remote's are, opened for readers,
// checked at start, resealed with a new key; its name is unique.
func TestUpstreamPulps(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *meta.DB) {
		ctx := context.Background()
		old := newKeys(t)
		db.SetKeys(old)
		attrs := `{"api_root": "/pulp/", "username": "u-s3cr3t", "password": "pw-s3cr3t", "client_key": "-----BEGIN PRIVATE KEY-----\nck-s3cr3t\n-----END PRIVATE KEY-----\n"}`
		u, err := meta.CreateUpstream(ctx, db, meta.UpstreamPulp{Name: "up", BaseURL: "https://up.example", Attrs: json.RawMessage(attrs)})
		if err != nil {
			t.Fatal(err)
		}
		stored := func() string {
			var s string
			if err := db.QueryRow(ctx, `SELECT attrs FROM upstream_pulps WHERE id = ?`, u.ID).Scan(&s); err != nil {
				t.Fatal(err)
			}
			return s
		}
		before := stored()
		for _, p := range []string{"u-s3cr3t", "pw-s3cr3t", "ck-s3cr3t"} {
			if strings.Contains(before, p) {
				t.Errorf("%q stored in plain text: %s", p, before)
			}
			if !strings.Contains(string(u.Attrs), p) {
				t.Errorf("%q not read back: %s", p, u.Attrs)
			}
		}
		if sealed, err := db.Sealed(ctx); err != nil || !sealed {
			t.Errorf("Sealed: %v %v, want true", sealed, err)
		}
		if _, err := meta.CreateUpstream(ctx, db, meta.UpstreamPulp{Name: "up", BaseURL: "https://other.example", Attrs: json.RawMessage(`{}`)}); !errors.Is(err, meta.ErrConflict) {
			t.Errorf("a second upstream named up: %v, want ErrConflict", err)
		}
		u.BaseURL = "https://moved.example"
		if err := meta.UpdateUpstream(ctx, db, u); err != nil {
			t.Fatal(err)
		}
		if err := meta.SetLastReplication(ctx, db, u.ID, 1234); err != nil {
			t.Fatal(err)
		}
		got, err := meta.UpstreamByPulpID(ctx, db, u.PulpID)
		if err != nil || got.BaseURL != "https://moved.example" || got.LastReplication == nil || *got.LastReplication != 1234 {
			t.Errorf("read back %+v, %v", got, err)
		}
		keys, err := secret.AddKey(old.Path())
		if err != nil {
			t.Fatal(err)
		}
		db.SetKeys(keys)
		if n, err := db.Reseal(ctx); err != nil || n != 1 {
			t.Errorf("reseal: %d records, %v; want 1", n, err)
		}
		if after := stored(); after == before || strings.Contains(after, "pith:v1:"+old.IDs()[0]) {
			t.Errorf("not resealed with the new key: %s", after)
		}
		// A key that opens nothing stops the process at start, naming the upstream.
		db.SetKeys(newKeys(t))
		if err := db.CheckSecrets(ctx); err == nil || !strings.Contains(err.Error(), `upstream pulp "up"`) {
			t.Errorf("check with a wrong key: %v", err)
		}
		db.SetKeys(keys)
		if list, n, err := meta.ListUpstreams(ctx, db, meta.List{}); err != nil || n != 1 || len(list) != 1 {
			t.Errorf("list: %d %v", n, err)
		}
		if err := meta.DeleteUpstream(ctx, db, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := meta.UpstreamByPulpID(ctx, db, u.PulpID); !errors.Is(err, meta.ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
	})
}
