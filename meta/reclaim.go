package meta

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Reclaim is what reclaim_space frees: the stored files of units that repositories
// hold, so that they are fetched again on request.
type Reclaim struct {
	Repositories []int64 // the repositories whose units' files are dropped
	// Keep are versions whose units keep their files (repo_versions_keeplist).
	Keep []VersionKey
	// Types are the unit types whose files may be dropped (Pulp's PROTECTED_FROM_RECLAIM
	// false); others keep them.
	Types []string
	// Before protects artifacts recorded or reused since (µs): a sync or an upload in
	// another repository may be about to use them.
	Before int64
}

// VersionKey names a repository version by key.
type VersionKey struct {
	RepositoryID int64
	Number       int64
}

// ReclaimFiles drops the stored files of the units in rc.Repositories that have a remote
// source to fetch them from again and that no other repository and no kept version
// holds: their unit files lose their artifact, and the artifacts nothing references
// any longer are deleted. It marks the repositories reclaimed (Serving.Reclaimed) and
// returns how many artifacts the units lost and the digests of those deleted, whose
// blobs the caller deletes after commit.
func ReclaimFiles(ctx context.Context, tx *Tx, rc Reclaim) (lost int64, digests []string, err error) {
	if len(rc.Repositories) == 0 || len(rc.Types) == 0 {
		return 0, nil, nil
	}
	repos := intList(rc.Repositories)
	types := Placeholders(len(rc.Types))
	args := make([]any, 0, len(rc.Types)+2*len(rc.Keep))
	for _, t := range rc.Types {
		args = append(args, t)
	}
	keep := ""
	if len(rc.Keep) > 0 {
		conds := make([]string, len(rc.Keep))
		for i, k := range rc.Keep {
			conds[i] = "(rc.repository_id = ? AND " + InVersion("rc", "?") + ")"
			args = append(args, k.RepositoryID, k.Number, k.Number)
		}
		keep = ` AND NOT EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = ca.content_id AND (` + strings.Join(conds, " OR ") + `))`
	}
	var cas, arts []int64
	seen := map[int64]bool{}
	err = scanRows(ctx, tx, `SELECT ca.id, ca.artifact_id FROM content_artifacts ca JOIN contents c ON c.id = ca.content_id
		WHERE ca.artifact_id IS NOT NULL AND c.type IN `+types+`
		AND EXISTS (SELECT 1 FROM remote_artifacts ra WHERE ra.content_artifact_id = ca.id)
		AND EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = ca.content_id AND rc.repository_id IN `+repos+`)
		AND NOT EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = ca.content_id AND rc.repository_id NOT IN `+repos+`)`+keep,
		args, func(r *sql.Rows) error {
			var ca, a int64
			if err := r.Scan(&ca, &a); err != nil {
				return err
			}
			cas = append(cas, ca)
			if !seen[a] {
				seen[a] = true
				arts = append(arts, a)
			}
			return nil
		})
	if err != nil {
		return 0, nil, fmt.Errorf("find reclaimable files: %w", err)
	}
	const batch = 500
	for part := range slices.Chunk(cas, batch) {
		if _, err := tx.Exec(ctx, `UPDATE content_artifacts SET artifact_id = NULL WHERE id IN `+intList(part)); err != nil {
			return 0, nil, fmt.Errorf("drop reclaimed files: %w", err)
		}
	}
	for part := range slices.Chunk(arts, batch) {
		err := scanRows(ctx, tx, `DELETE FROM artifacts WHERE id IN `+intList(part)+` AND timestamp_of_interest < ?
			AND `+Unreferenced("artifacts.id")+` RETURNING sha256`,
			[]any{rc.Before}, func(r *sql.Rows) error {
				var d string
				err := r.Scan(&d)
				digests = append(digests, d)
				return err
			})
		if err != nil {
			return 0, nil, fmt.Errorf("delete reclaimed artifacts: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE repositories SET reclaimed = ? WHERE id IN `+repos, Now()); err != nil {
		return 0, nil, fmt.Errorf("mark repositories reclaimed: %w", err)
	}
	return int64(len(arts)), digests, nil
}

// intList is "(1, 2, 3)", written inline: keys, never text from a request, and as many
// as there are repositories (more than a statement's placeholders may be).
func intList(ids []int64) string {
	b := make([]byte, 0, 2+8*len(ids))
	b = append(b, '(')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ')'))
}
