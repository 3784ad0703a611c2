package sqlblob

import "pith/meta"

// schema is the driver's DDL per dialect; every dialect difference of the driver is here.
// Times are microseconds since the Unix epoch, as in package meta.
func schema(d meta.Dialect) []string {
	bytes, id := "BLOB", "INTEGER PRIMARY KEY AUTOINCREMENT" // AUTOINCREMENT: ids are never reused
	var pre, post []string
	if d == meta.Postgres {
		bytes, id = "BYTEA", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
		// Concurrent CREATE TABLE IF NOT EXISTS can fail on PostgreSQL, so servers
		// starting together take turns.
		pre = []string{`SELECT pg_advisory_xact_lock(7061746862)`}
		// Blobs are mostly compressed already (packages, archives): store chunks out of
		// line without another round of compression. Altered only once, as ALTER TABLE
		// locks out readers.
		post = []string{`DO $$ BEGIN
			IF (SELECT attstorage FROM pg_attribute
				WHERE attrelid = 'blob_chunks'::regclass AND attname = 'data') <> 'e' THEN
				ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
			END IF;
		END $$`}
	}
	stmts := append(pre,
		`CREATE TABLE IF NOT EXISTS blob_uploads (
			id `+id+`,
			created BIGINT NOT NULL
		)`,
		`CREATE TABLE IF NOT EXISTS blob_objects (
			sha256 TEXT PRIMARY KEY,
			size BIGINT NOT NULL,
			chunk_size BIGINT NOT NULL,
			data_id BIGINT NOT NULL UNIQUE,
			created BIGINT NOT NULL
		)`,
		`CREATE TABLE IF NOT EXISTS blob_chunks (
			data_id BIGINT NOT NULL,
			idx BIGINT NOT NULL,
			data `+bytes+` NOT NULL,
			PRIMARY KEY (data_id, idx)
		)`,
		`CREATE INDEX IF NOT EXISTS blob_uploads_created ON blob_uploads (created)`,
		`CREATE TABLE IF NOT EXISTS blob_parts (
			upload TEXT NOT NULL,
			offset_bytes BIGINT NOT NULL,
			size BIGINT NOT NULL,
			data_id BIGINT NOT NULL UNIQUE,
			PRIMARY KEY (upload, offset_bytes)
		)`,
	)
	return append(stmts, post...)
}
