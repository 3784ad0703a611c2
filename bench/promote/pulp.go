package promote

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"pith/bench"
	"pith/content"
)

// Upstream Pulp is measured the same way: the same data set is written straight into
// its PostgreSQL schema (pulpcore's tables for file repositories: core_repository,
// core_repositoryversion with its content_ids, core_repositorycontent as change ranges,
// the version counts), then each step adds one new unit to the same repositories. Pulp
// has no call that modifies many repositories, so a step sends one POST …/modify/ per
// repository, as the study's users scripted it, and is timed from the first POST to
// the last of those tasks finished. Pulp's ids are UUIDv7, as pulpcore makes them.

// pulpTx is how many repositories one loading transaction writes.
const pulpTx = 200

// loadPulp writes the data set into Pulp's database at dsn and returns its
// repositories' ids by position.
func loadPulp(ctx context.Context, dsn string, cfg Config, run string) ([]string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	domain, err := pulpDomain(ctx, conn)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	units := make([][16]byte, cfg.Units)
	paths := make([]string, cfg.Units)
	for i := range units {
		units[i], paths[i] = uuid.Must(uuid.NewV7()), unitPath(run, i)
	}
	if err := pulpUnits(ctx, conn, domain, units, paths, now); err != nil {
		return nil, fmt.Errorf("load units: %w", err)
	}
	per := perRepo(cfg.Units)
	var repos []string
	for start := 0; start < cfg.Repos; start += pulpTx {
		end := min(start+pulpTx, cfg.Repos)
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			ids := make([][16]byte, end-start)
			names := make([]string, end-start)
			next := make([]int32, end-start)
			for i := start; i < end; i++ {
				k, _ := cfg.shape(i)
				ids[i-start], names[i-start], next[i-start] = uuid.Must(uuid.NewV7()), fmt.Sprintf("promote-%s-%06d", run, i), int32(k+1)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO core_repository (pulp_id, pulp_created, pulp_last_updated, name, next_version, pulp_type,
					user_hidden, pulp_labels, pulp_domain_id)
				SELECT id, $4, $4, name, next, 'file.file', false, ''::hstore, $5 FROM unnest($1::uuid[], $2::text[], $3::int[]) AS t(id, name, next)`,
				ids, names, next, now, domain); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO file_filerepository (repository_ptr_id, autopublish, manifest, last_sync_details)
				SELECT id, false, 'PULP_MANIFEST', '{}' FROM unnest($1::uuid[]) AS id`, ids); err != nil {
				return err
			}
			// Versions 0..k of each repository, each with the ids of all it holds.
			var versions, details, members [][]any
			for i := start; i < end; i++ {
				k, first := cfg.shape(i)
				repo := ids[i-start]
				held := make([][16]byte, 0, per)
				vid := uuid.Must(uuid.NewV7())
				versions = append(versions, []any{[16]byte(vid), now, now, int32(0), true, repo, "{}", [][16]byte{}})
				for j, m := 1, 0; j <= k; j++ {
					vid := [16]byte(uuid.Must(uuid.NewV7()))
					added := 0
					for ; m < per && 1+m*k/per == j; m++ {
						u := units[(first+m)%cfg.Units]
						held = append(held, u)
						members = append(members, []any{[16]byte(uuid.Must(uuid.NewV7())), now, now, u, repo, vid})
						added++
					}
					versions = append(versions, []any{vid, now, now, int32(j), true, repo, "{}", slices.Clone(held)})
					details = append(details, []any{"A", "file.file", int32(added), vid}, []any{"P", "file.file", int32(len(held)), vid})
				}
			}
			for _, c := range []struct {
				table string
				cols  []string
				rows  [][]any
			}{
				{"core_repositoryversion", []string{"pulp_id", "pulp_created", "pulp_last_updated", "number", "complete", "repository_id", "info", "content_ids"}, versions},
				{"core_repositorycontent", []string{"pulp_id", "pulp_created", "pulp_last_updated", "content_id", "repository_id", "version_added_id"}, members},
				{"core_repositoryversioncontentdetails", []string{"count_type", "content_type", "count", "repository_version_id"}, details},
			} {
				if _, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
					return fmt.Errorf("%s: %w", c.table, err)
				}
			}
			for _, id := range ids {
				repos = append(repos, uuid.UUID(id).String())
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("load repositories %d to %d: %w", start, end-1, err)
		}
	}
	if _, err := conn.Exec(ctx, `ANALYZE`); err != nil {
		return nil, err
	}
	return repos, nil
}

// pulpDomain is the id of Pulp's default domain, which every row names.
func pulpDomain(ctx context.Context, conn *pgx.Conn) (string, error) {
	var id string
	if err := conn.QueryRow(ctx, `SELECT pulp_id::text FROM core_domain WHERE name = 'default'`).Scan(&id); err != nil {
		return "", fmt.Errorf("Pulp's default domain: %w", err)
	}
	return id, nil
}

// pulpUnits stores file units in Pulp's tables, each with a content artifact that has
// no artifact (on demand), as pith's generated units are.
func pulpUnits(ctx context.Context, conn *pgx.Conn, domain string, ids [][16]byte, paths []string, now time.Time) error {
	digests := make([]string, len(paths))
	cas := make([][16]byte, len(paths))
	for i, p := range paths {
		digests[i], cas[i] = digestOf(p), uuid.Must(uuid.NewV7())
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO core_content (pulp_id, pulp_created, pulp_last_updated, pulp_type, timestamp_of_interest, pulp_domain_id, pulp_labels)
				SELECT id, $2, $2, 'file.file', $2, $3, ''::hstore FROM unnest($1::uuid[]) AS id`, []any{ids, now, domain}},
			{`INSERT INTO file_filecontent (content_ptr_id, relative_path, digest, _pulp_domain_id)
				SELECT id, p, d, $4 FROM unnest($1::uuid[], $2::text[], $3::text[]) AS t(id, p, d)`, []any{ids, paths, digests, domain}},
			{`INSERT INTO core_contentartifact (pulp_id, pulp_created, pulp_last_updated, relative_path, content_id)
				SELECT ca, $4, $4, p, id FROM unnest($1::uuid[], $2::text[], $3::uuid[]) AS t(id, p, ca)`, []any{ids, paths, cas, now}},
		} {
			if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// newPulpUnit stores the unit a step promotes in Pulp's database and returns its href.
func newPulpUnit(ctx context.Context, dsn, run string, step int) (string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	domain, err := pulpDomain(ctx, conn)
	if err != nil {
		return "", err
	}
	id := uuid.Must(uuid.NewV7())
	if err := pulpUnits(ctx, conn, domain, [][16]byte{id}, []string{fmt.Sprintf("promote-%s/promoted-%02d.txt", run, step)}, time.Now()); err != nil {
		return "", err
	}
	return "/pulp/api/v3/content/file/files/" + id.String() + "/", nil
}

// pulpDBStats is the size of Pulp's database and its membership rows.
func pulpDBStats(ctx context.Context, dsn string) (size, memberships int64, err error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close(ctx)
	err = conn.QueryRow(ctx, `SELECT pg_database_size(current_database()), (SELECT count(*) FROM core_repositorycontent)`).Scan(&size, &memberships)
	return size, memberships, err
}

// modifyEach adds unit to each target with its own POST …/modify/, four requests at a
// time (the first failure stops the rest), then waits for every task, reading their states 100 at a time.
func modifyEach(ctx context.Context, c *bench.Client, unit string, targets []string) (Step, error) {
	st := Step{Repos: len(targets), Tasks: len(targets), Unit: unit, Targets: targets}
	start := time.Now()
	tasks := make([]string, len(targets))
	indices := func(yield func(int) bool) {
		for i := range targets {
			if !yield(i) {
				return
			}
		}
	}
	err := content.Parallel(ctx, 4, indices, func(i int) string { return targets[i] }, func(ctx context.Context, i int) error {
		var out struct {
			Task string `json:"task"`
		}
		if err := c.JSON(ctx, "POST", targets[i]+"modify/", map[string]any{"add_content_units": []string{unit}}, &out); err != nil {
			return err
		}
		if out.Task == "" {
			return fmt.Errorf("POST %smodify/: no task in the answer", targets[i])
		}
		tasks[i] = path.Base(strings.TrimSuffix(out.Task, "/"))
		return nil
	})
	if err != nil {
		return st, err
	}
	var ds []time.Duration
	pending := tasks
	for len(pending) > 0 {
		chunk := pending[:min(100, len(pending))]
		var page struct {
			Results []struct {
				ID         string    `json:"pulp_href"`
				State      string    `json:"state"`
				StartedAt  time.Time `json:"started_at"`
				FinishedAt time.Time `json:"finished_at"`
				Error      any       `json:"error"`
			} `json:"results"`
		}
		if err := c.JSON(ctx, "GET", "/pulp/api/v3/tasks/?limit=100&fields=pulp_href,state,started_at,finished_at,error&pulp_id__in="+strings.Join(chunk, ","), nil, &page); err != nil {
			return st, err
		}
		done := map[string]bool{}
		for _, t := range page.Results {
			switch t.State {
			case "completed":
				done[path.Base(strings.TrimSuffix(t.ID, "/"))] = true
				ds = append(ds, t.FinishedAt.Sub(t.StartedAt))
			case "failed", "canceled", "canceling":
				return st, fmt.Errorf("task %s %s: %v", t.ID, t.State, t.Error)
			}
		}
		pending = slices.DeleteFunc(pending, func(id string) bool { return done[id] })
		if len(done) == 0 {
			select {
			case <-ctx.Done():
				return st, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	st.Wall = time.Since(start)
	st.VersionsPerSec = float64(len(targets)) / st.Wall.Seconds()
	st.TaskP50, st.TaskMax = spread(ds)
	return st, nil
}
