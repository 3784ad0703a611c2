package promote

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/google/uuid"

	"pith/meta"
)

// The study's shape: 27,237 repositories holding 51.8 million memberships over 10,000
// units, so each repository holds 51.8M / 27,237 ≈ 1,902 units, 19.02% of them.
const (
	studyRepos       = 27237
	studyUnits       = 10000
	studyMemberships = 51_800_000
)

// perRepo is how many units each generated repository holds:
// Units × 51,800,000 / (27,237 × 10,000) ≈ 0.1902 × Units, so that Repos × perRepo is
// the study's 51.8M at full size (27,237 × 1,902 = 51,804,774) and scales with the shape.
func perRepo(units int) int {
	n := int((int64(units)*studyMemberships + studyRepos*studyUnits/2) / (studyRepos * studyUnits))
	return max(1, min(n, units))
}

// dataset is what the generator made.
type dataset struct {
	repos    []repoRow // by position
	units    int
	firstID  int64 // contents.id of unit 0; units are contiguous
	perRepo  int
	runID    string
	versions int64
}

type repoRow struct {
	id     int64
	pulpID string
	latest int64
}

// unitPath is a generated unit's relative path.
func unitPath(run string, i int) string { return fmt.Sprintf("promote-%s/unit-%06d.txt", run, i) }

func digestOf(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

// load writes the data set straight into pith's database. Each repository i holds the
// perRepo units starting at (i × 7919) mod Units (wrapping), spread over its versions
// 1..k in equal slices, none removed: one membership row per unit, as pith stores
// membership as change ranges. Versions carry the summaries pith would have written.
func load(ctx context.Context, cfg Config) (dataset, error) {
	db, err := meta.Open(ctx, cfg.DB)
	if err != nil {
		return dataset{}, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return dataset{}, err
	}
	conn, err := db.SQL().Conn(ctx)
	if err != nil {
		return dataset{}, err
	}
	defer conn.Close()
	d := db.Dialect()
	if d == meta.SQLite {
		// A large page cache keeps the membership indexes' hot pages in memory.
		if _, err := conn.ExecContext(ctx, `PRAGMA cache_size = -1048576`); err != nil {
			return dataset{}, err
		}
	}
	k, err := kindOf(cfg.Type)
	if err != nil {
		return dataset{}, err
	}
	ds := dataset{units: cfg.Units, perRepo: perRepo(cfg.Units), runID: uuid.NewString()[:8]}
	now := meta.Now()

	// Units on demand: a content_artifacts row without an artifact.
	err = inTx(ctx, conn, func(tx *sql.Tx) error {
		ins, err := tx.PrepareContext(ctx, d.Rebind(`INSERT INTO contents (pulp_id, type, natural_key, repo_key, relative_path, digest, attrs, created, updated, timestamp_of_interest)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`))
		if err != nil {
			return err
		}
		ca, err := tx.PrepareContext(ctx, d.Rebind(`INSERT INTO content_artifacts (content_id, relative_path) VALUES (?, ?)`))
		if err != nil {
			return err
		}
		prev := int64(0)
		for i := 0; i < cfg.Units; i++ {
			u := k.unit(ds.runID, i)
			var id int64
			if err := ins.QueryRowContext(ctx, uuid.NewString(), u.c.Type, u.c.NaturalKey, u.c.RepoKey, u.c.RelativePath, u.c.Digest, string(u.c.Attrs), now, now, now).Scan(&id); err != nil {
				return fmt.Errorf("insert unit %d: %w", i, err)
			}
			if i == 0 {
				ds.firstID = id
			} else if id != prev+1 {
				return fmt.Errorf("unit keys are not contiguous (%d after %d): is another writer busy?", id, prev)
			}
			prev = id
			if _, err := ca.ExecContext(ctx, id, u.c.RelativePath); err != nil {
				return err
			}
			if err := meta.PutDocuments(ctx, txQuerier{tx, d}, id, u.docs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return ds, fmt.Errorf("load units: %w", err)
	}

	series := `WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i + 1 < ?) SELECT ?, ? + (? + i) % ?, 1 + (i * ?) / ? FROM s`
	if d == meta.Postgres {
		series = `SELECT CAST(? AS BIGINT), CAST(? AS BIGINT) + (CAST(? AS BIGINT) + i) % CAST(? AS BIGINT), 1 + (i * CAST(? AS BIGINT)) / CAST(? AS BIGINT)
			FROM generate_series(0, CAST(? AS BIGINT) - 1) AS s(i)`
	}
	const perTx = 200
	for start := 0; start < cfg.Repos; start += perTx {
		err := inTx(ctx, conn, func(tx *sql.Tx) error {
			repo, err := tx.PrepareContext(ctx, d.Rebind(`INSERT INTO repositories (pulp_id, type, name, next_version, attrs, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`))
			if err != nil {
				return err
			}
			ver, err := tx.PrepareContext(ctx, d.Rebind(`INSERT INTO repository_versions (pulp_id, repository_id, number, summary, created, updated) VALUES (?, ?, ?, ?, ?, ?)`))
			if err != nil {
				return err
			}
			mem, err := tx.PrepareContext(ctx, d.Rebind(`INSERT INTO repository_content (repository_id, content_id, version_added) `+series))
			if err != nil {
				return err
			}
			for i := start; i < min(start+perTx, cfg.Repos); i++ {
				n, first := cfg.shape(i)
				pid := uuid.NewString()
				var id int64
				if err := repo.QueryRowContext(ctx, pid, k.repoType, fmt.Sprintf("promote-%s-%06d", ds.runID, i), n+1, k.repoAttrs, now, now).Scan(&id); err != nil {
					return fmt.Errorf("insert repository %d: %w", i, err)
				}
				for j, s := range summaries(k.unitType, ds.perRepo, n) {
					if _, err := ver.ExecContext(ctx, uuid.NewString(), id, j, s, now, now); err != nil {
						return fmt.Errorf("insert version %d of repository %d: %w", j, i, err)
					}
				}
				ds.versions += int64(n + 1)
				if n > 0 {
					args := []any{ds.perRepo, id, ds.firstID, first, cfg.Units, n, ds.perRepo}
					if d == meta.Postgres {
						args = []any{id, ds.firstID, first, cfg.Units, n, ds.perRepo, ds.perRepo}
					}
					if _, err := mem.ExecContext(ctx, args...); err != nil {
						return fmt.Errorf("insert memberships of repository %d: %w", i, err)
					}
				}
				ds.repos = append(ds.repos, repoRow{id: id, pulpID: pid, latest: int64(n)})
			}
			return nil
		})
		if err != nil {
			return ds, fmt.Errorf("load repositories: %w", err)
		}
	}
	if d == meta.SQLite {
		conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	} else {
		conn.ExecContext(ctx, `ANALYZE`)
	}
	return ds, nil
}

// reuse reads back the data set an earlier load left in cfg.DB: its repositories of
// the type, by position (their names end in it), and their version count. Step units get
// a run ID of their own, so that each step adds a unit no repository holds yet.
func reuse(ctx context.Context, cfg Config) (dataset, error) {
	db, err := meta.Open(ctx, cfg.DB)
	if err != nil {
		return dataset{}, err
	}
	defer db.Close()
	k, err := kindOf(cfg.Type)
	if err != nil {
		return dataset{}, err
	}
	ds := dataset{units: cfg.Units, perRepo: perRepo(cfg.Units), runID: uuid.NewString()[:8]}
	rows, err := db.Query(ctx, `SELECT id, pulp_id, next_version - 1 FROM repositories WHERE type = ? AND name LIKE 'promote-%' ORDER BY name`, k.repoType)
	if err != nil {
		return ds, err
	}
	defer rows.Close()
	for rows.Next() {
		var r repoRow
		if err := rows.Scan(&r.id, &r.pulpID, &r.latest); err != nil {
			return ds, err
		}
		ds.repos = append(ds.repos, r)
		ds.versions += r.latest + 1
	}
	if err := rows.Err(); err != nil {
		return ds, err
	}
	if len(ds.repos) != cfg.Repos {
		return ds, fmt.Errorf("reuse: the database holds %d generated %s repositories, the run asks for %d", len(ds.repos), k.repoType, cfg.Repos)
	}
	return ds, nil
}

// shape is repository i's place in the data set: k versions after version 0 (the
// study's versions spread evenly, none empty) and its perRepo units, starting at unit
// first and wrapping; the m-th of them is added in version 1 + m·k/perRepo.
func (cfg Config) shape(i int) (k, first int) {
	extra := max(cfg.Versions-cfg.Repos, 0)
	k = extra / cfg.Repos
	if i < extra%cfg.Repos {
		k++
	}
	return min(k, perRepo(cfg.Units)), (i * 7919) % cfg.Units
}

// summaries are the content_summary JSON of versions 0..k of a repository whose per
// units are added in k equal slices: version j adds ⌈j·per/k⌉ − ⌈(j−1)·per/k⌉ (the rows
// with 1 + i·k/per = j), as meta.NewVersion would have summarized them.
func summaries(typ string, per, k int) []string {
	out := []string{"{}"} // version 0, as meta.CreateRepository writes it
	present := int64(0)
	ceil := func(a, b int) int64 { return int64((a + b - 1) / b) }
	for j := 1; j <= k; j++ {
		added := ceil(j*per, k) - ceil((j-1)*per, k)
		present += added
		b, _ := json.Marshal(meta.Summary{Added: map[string]int64{typ: added}, Removed: map[string]int64{}, Present: map[string]int64{typ: present}})
		out = append(out, string(b))
	}
	return out
}

// txQuerier lets the loader's transaction, on its own connection, run meta's
// functions.
type txQuerier struct {
	tx *sql.Tx
	d  meta.Dialect
}

func (q txQuerier) Exec(ctx context.Context, s string, args ...any) (sql.Result, error) {
	return q.tx.ExecContext(ctx, q.d.Rebind(s), args...)
}

func (q txQuerier) Query(ctx context.Context, s string, args ...any) (*sql.Rows, error) {
	return q.tx.QueryContext(ctx, q.d.Rebind(s), args...)
}

func (q txQuerier) QueryRow(ctx context.Context, s string, args ...any) *sql.Row {
	return q.tx.QueryRowContext(ctx, q.d.Rebind(s), args...)
}

func (q txQuerier) Dialect() meta.Dialect { return q.d }

func inTx(ctx context.Context, conn *sql.Conn, fn func(tx *sql.Tx) error) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// dbSize is the database's size on disk: the SQLite file with its WAL, or
// pg_database_size.
func dbSize(ctx context.Context, dsn string) (int64, error) {
	db, err := meta.Open(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if db.Dialect() == meta.Postgres {
		var n int64
		err := db.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&n)
		return n, err
	}
	var total int64
	for _, f := range []string{dsn, dsn + "-wal"} {
		if st, err := os.Stat(f); err == nil {
			total += st.Size()
		}
	}
	return total, nil
}

// memberships counts repository_content rows.
func memberships(ctx context.Context, dsn string) (int64, error) {
	db, err := meta.Open(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.QueryRow(ctx, `SELECT count(*) FROM repository_content`).Scan(&n)
	return n, err
}
