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
// its PostgreSQL schema (pulpcore's tables and the type's own: core_repository,
// core_repositoryversion with its content_ids, core_repositorycontent as change ranges,
// the version counts), then each step adds one new unit to the same repositories. Pulp
// has no call that modifies many repositories, so a step sends one POST …/modify/ per
// repository, as the study's users scripted it, and is timed from the first POST to
// the last of those tasks finished. Pulp's ids are UUIDv7, as pulpcore makes them.

// pulpTx is how many repositories one loading transaction writes.
const pulpTx = 200

// loadPulp writes the data set into Pulp's database at dsn and returns its
// repositories' ids by position.
func loadPulp(ctx context.Context, dsn string, cfg Config, k kind, run string) ([]string, error) {
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
	gen := make([]genUnit, cfg.Units)
	for i := range units {
		units[i], gen[i] = uuid.Must(uuid.NewV7()), k.unit(run, i)
	}
	if err := pulpUnits(ctx, conn, domain, k, units, gen, now); err != nil {
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
				SELECT id, $4, $4, name, next, $6, false, ''::hstore, $5 FROM unnest($1::uuid[], $2::text[], $3::int[]) AS t(id, name, next)`,
				ids, names, next, now, domain, k.repoType); err != nil {
				return err
			}
			// The type's own row (the repository model's subclass table).
			detail := `INSERT INTO file_filerepository (repository_ptr_id, autopublish, manifest, last_sync_details)
				SELECT id, false, 'PULP_MANIFEST', '{}' FROM unnest($1::uuid[]) AS id`
			if k.repoType == "ansible.ansible" {
				detail = `INSERT INTO ansible_ansiblerepository (repository_ptr_id, private) SELECT id, false FROM unnest($1::uuid[]) AS id`
			}
			if _, err := tx.Exec(ctx, detail, ids); err != nil {
				return err
			}
			// Versions 0..k of each repository, each with the ids of all it holds.
			var versions, details, members [][]any
			for i := start; i < end; i++ {
				n, first := cfg.shape(i)
				repo := ids[i-start]
				held := make([][16]byte, 0, per)
				vid := uuid.Must(uuid.NewV7())
				versions = append(versions, []any{[16]byte(vid), now, now, int32(0), true, repo, "{}", [][16]byte{}})
				for j, m := 1, 0; j <= n; j++ {
					vid := [16]byte(uuid.Must(uuid.NewV7()))
					added := 0
					for ; m < per && 1+m*n/per == j; m++ {
						u := units[(first+m)%cfg.Units]
						held = append(held, u)
						members = append(members, []any{[16]byte(uuid.Must(uuid.NewV7())), now, now, u, repo, vid})
						added++
					}
					versions = append(versions, []any{vid, now, now, int32(j), true, repo, "{}", slices.Clone(held)})
					details = append(details, []any{"A", k.unitType, int32(added), vid}, []any{"P", k.unitType, int32(len(held)), vid})
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

// pulpUnits stores units in Pulp's tables, each with a content artifact that has no
// artifact (on demand), as pith's generated units are: file units in file_filecontent;
// collection versions in ansible_collectionversion under their ansible_collection
// (made when missing), with pulp_ansible's defaults for what an on-demand sync leaves
// empty.
func pulpUnits(ctx context.Context, conn *pgx.Conn, domain string, k kind, ids [][16]byte, units []genUnit, now time.Time) error {
	n := len(units)
	paths, digests, cas := make([]string, n), make([]string, n), make([][16]byte, n)
	for i, u := range units {
		paths[i], digests[i], cas[i] = u.c.RelativePath, u.c.Digest, uuid.Must(uuid.NewV7())
	}
	detail := struct {
		sql  string
		args []any
	}{`INSERT INTO file_filecontent (content_ptr_id, relative_path, digest, _pulp_domain_id)
		SELECT id, p, d, $4 FROM unnest($1::uuid[], $2::text[], $3::text[]) AS t(id, p, d)`, []any{ids, paths, digests, domain}}
	var collections [][]any
	if k.unitType == "ansible.collection_version" {
		nss, names, versions, repos := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		majors, minors, patches := make([]int32, n), make([]int32, n), make([]int32, n)
		seen := map[[2]string]bool{}
		for i, u := range units {
			f := u.cv
			nss[i], names[i], versions[i] = f.namespace, f.name, f.version
			majors[i], minors[i], patches[i] = int32(f.major), int32(f.minor), int32(f.patch)
			repos[i] = "https://example.com/" + f.namespace + "/" + f.name
			if key := [2]string{f.namespace, f.name}; !seen[key] {
				seen[key] = true
				collections = append(collections, []any{[16]byte(uuid.Must(uuid.NewV7())), now, now, f.namespace, f.name, domain})
			}
		}
		detail.sql = `INSERT INTO ansible_collectionversion (content_ptr_id, version, contents, collection_id, authors, dependencies, description,
				docs_blob, documentation, homepage, issues, license, name, namespace, repository, search_vector, files, manifest,
				requires_ansible, version_major, version_minor, version_patch, version_prerelease, sha256, tags, _pulp_domain_id)
			SELECT t.id, t.v, '[]', c.pulp_id, '{"Pith bench"}', '{}', 'A generated collection of the promotion study.',
				'{}', '', '', '', '{"GPL-3.0-or-later"}', t.n, t.ns, t.r, ''::tsvector, '{}', '{}',
				'>=2.15.0', t.ma, t.mi, t.pa, '', t.d, '{"bench"}', $10
			FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::int[], $9::int[])
				AS t(id, ns, n, v, r, d, ma, mi, pa)
			JOIN ansible_collection c ON c.pulp_domain_id = $10 AND c.namespace = t.ns AND c.name = t.n`
		detail.args = []any{ids, nss, names, versions, repos, digests, majors, minors, patches, domain}
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if len(collections) > 0 {
			// New collections only: a step's unit may belong to one that exists.
			if _, err := tx.Exec(ctx, `CREATE TEMP TABLE promote_collection (LIKE ansible_collection) ON COMMIT DROP`); err != nil {
				return err
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"promote_collection"}, []string{"pulp_id", "pulp_created", "pulp_last_updated", "namespace", "name", "pulp_domain_id"},
				pgx.CopyFromRows(collections)); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO ansible_collection SELECT * FROM promote_collection ON CONFLICT (pulp_domain_id, namespace, name) DO NOTHING`); err != nil {
				return err
			}
		}
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO core_content (pulp_id, pulp_created, pulp_last_updated, pulp_type, timestamp_of_interest, pulp_domain_id, pulp_labels)
				SELECT id, $2, $2, $4, $2, $3, ''::hstore FROM unnest($1::uuid[]) AS id`, []any{ids, now, domain, k.unitType}},
			detail,
			{`INSERT INTO core_contentartifact (pulp_id, pulp_created, pulp_last_updated, relative_path, content_id)
				SELECT ca, $4, $4, p, id FROM unnest($1::uuid[], $2::text[], $3::uuid[]) AS t(id, p, ca)`, []any{ids, paths, cas, now}},
		} {
			tag, err := tx.Exec(ctx, q.sql, q.args...)
			if err != nil {
				return err
			}
			if tag.RowsAffected() != int64(n) {
				return fmt.Errorf("stored %d of %d units", tag.RowsAffected(), n)
			}
		}
		return nil
	})
}

// newPulpUnit stores the unit a step promotes in Pulp's database and returns its href.
func newPulpUnit(ctx context.Context, dsn string, k kind, run string, step int) (string, error) {
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
	if err := pulpUnits(ctx, conn, domain, k, [][16]byte{id}, []genUnit{k.unit(run, -1-step)}, time.Now()); err != nil {
		return "", err
	}
	return "/pulp/api/v3/content/" + k.unitSegment + "/" + id.String() + "/", nil
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
