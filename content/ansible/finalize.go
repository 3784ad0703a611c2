package ansible

import (
	"context"
	"encoding/json"
	"strings"

	"pith/meta"
)

// Finalize keeps pulp_ansible's rule over what a repository version holds: when a
// collection version leaves a repository, its signatures and marks leave with it; when
// the last version of a collection leaves, the collection's deprecation does; when the
// last collection of a namespace leaves, the namespace's metadata does. (pulp_ansible
// drops the namespace's metadata with the last version of any one of its collections;
// pith keeps it while the namespace has collections in the repository.)
func (p *Plugin) Finalize(ctx context.Context, tx *meta.Tx, next map[int64]int64, removed map[int64]map[string]int64) (bool, error) {
	more := false
	for repo, counts := range removed {
		if counts[CollectionVersionType] == 0 {
			continue
		}
		n := next[repo]
		gone := map[string]bool{}
		err := scanUnits(ctx, tx, `rc.version_removed = ? AND c.type = ?`, []any{repo, n, CollectionVersionType}, func(c meta.Content) {
			gone[c.PulpID] = true
		})
		if err != nil {
			return false, err
		}
		collections, namespaces := map[string]bool{}, map[string]bool{}
		var present []meta.Content
		err = scanUnits(ctx, tx, `rc.version_removed IS NULL`, []any{repo}, func(c meta.Content) {
			switch c.Type {
			case CollectionVersionType:
				coll, _, _ := strings.Cut(c.RepoKey, ":")
				ns, _, _ := strings.Cut(coll, ".")
				collections[coll], namespaces[ns] = true, true
			case SignatureType, MarkType, DeprecationType, NamespaceType:
				present = append(present, c)
			}
		})
		if err != nil {
			return false, err
		}
		var drop []int64
		for _, c := range present {
			var a struct {
				SignedCollection string `json:"signed_collection"`
				MarkedCollection string `json:"marked_collection"`
			}
			json.Unmarshal(c.Attrs, &a)
			switch c.Type {
			case SignatureType:
				if gone[a.SignedCollection] {
					drop = append(drop, c.ID)
				}
			case MarkType:
				if gone[a.MarkedCollection] {
					drop = append(drop, c.ID)
				}
			case DeprecationType:
				if !collections[c.RepoKey] {
					drop = append(drop, c.ID)
				}
			case NamespaceType:
				if !namespaces[c.RepoKey] {
					drop = append(drop, c.ID)
				}
			}
		}
		if len(drop) > 0 {
			if err := meta.RemoveUnits(ctx, tx, repo, n, drop); err != nil {
				return false, err
			}
			more = true
		}
	}
	return more, nil
}

// scanUnits calls fn with each unit of a repository whose membership meets cond (alias
// rc, the repository's id the first argument, then cond's own): its id, pulp_id, type,
// repo key, and attrs for signatures and marks.
func scanUnits(ctx context.Context, tx *meta.Tx, cond string, args []any, fn func(meta.Content)) error {
	// Only signatures and marks are read for their attrs: a repository may hold thousands
	// of collection versions, whose attrs are of no use here.
	rows, err := tx.Query(ctx, `SELECT c.id, c.pulp_id, c.type, c.repo_key,
			CASE WHEN c.type IN ('`+SignatureType+`', '`+MarkType+`') THEN c.attrs ELSE '{}' END
		FROM repository_content rc JOIN contents c ON c.id = rc.content_id
		WHERE rc.repository_id = ? AND `+cond, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var c meta.Content
		var attrs string
		if err := rows.Scan(&c.ID, &c.PulpID, &c.Type, &c.RepoKey, &attrs); err != nil {
			return err
		}
		c.Attrs = json.RawMessage(attrs)
		fn(c)
	}
	return rows.Err()
}
