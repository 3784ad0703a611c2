package meta

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// DeleteUnused takes back what a failed task created: of the units and artifacts given
// (those it created), it deletes the ones no repository version holds, nothing
// references and nobody has touched since they were created (a task that found one of
// them meanwhile made it of interest again, so it stays for orphan cleanup to judge). It
// returns the digests of the artifacts deleted, whose blobs the caller deletes after
// commit.
func DeleteUnused(ctx context.Context, q Querier, contentIDs, artifactIDs []int64) ([]string, error) {
	for part := range slices.Chunk(contentIDs, chunk) {
		list, args := inList(part)
		if _, err := q.Exec(ctx, `DELETE FROM contents WHERE id IN `+list+` AND timestamp_of_interest = created
			AND NOT EXISTS (SELECT 1 FROM repository_content rc WHERE rc.content_id = contents.id)`, args...); err != nil {
			return nil, fmt.Errorf("delete %d units created by a failed task: %w", len(part), err)
		}
	}
	var digests []string
	for part := range slices.Chunk(artifactIDs, chunk) {
		list, args := inList(part)
		err := scanRows(ctx, q, `DELETE FROM artifacts WHERE id IN `+list+` AND timestamp_of_interest = created
			AND `+Unreferenced("artifacts.id")+` RETURNING sha256`, args, func(r *sql.Rows) error {
			var d string
			err := r.Scan(&d)
			digests = append(digests, d)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("delete %d artifacts created by a failed task: %w", len(part), err)
		}
	}
	return digests, nil
}
