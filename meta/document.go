package meta

import (
	"context"
	"database/sql"
	"fmt"
)

// PutDocuments stores documents of a unit by name (a type's large metadata, read one
// unit at a time), replacing any it had under the same names.
func PutDocuments(ctx context.Context, q Querier, contentID int64, docs map[string][]byte) error {
	for name, body := range docs {
		if _, err := q.Exec(ctx, `INSERT INTO content_documents (content_id, name, body) VALUES (?, ?, ?)
			ON CONFLICT (content_id, name) DO UPDATE SET body = excluded.body`, contentID, name, string(body)); err != nil {
			return fmt.Errorf("document %s of unit %d: %w", name, contentID, err)
		}
	}
	return nil
}

// Document reads a unit's document by name; ErrNotFound when it has none.
func Document(ctx context.Context, q Querier, contentID int64, name string) ([]byte, error) {
	var body string
	err := q.QueryRow(ctx, `SELECT body FROM content_documents WHERE content_id = ? AND name = ?`, contentID, name).Scan(&body)
	if err == sql.ErrNoRows {
		return nil, notFound("document "+name+" of unit", fmt.Sprint(contentID))
	}
	return []byte(body), err
}
