-- The tables of the database blob driver (--storage database): blobs stored as chunks
-- in the metadata database. IF NOT EXISTS: before this migration the driver created
-- them itself when it started.
CREATE TABLE IF NOT EXISTS blob_uploads (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    created BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS blob_objects (
    sha256 TEXT PRIMARY KEY,
    size BIGINT NOT NULL,
    chunk_size BIGINT NOT NULL,
    data_id BIGINT NOT NULL UNIQUE,
    created BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS blob_chunks (
    data_id BIGINT NOT NULL,
    idx BIGINT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (data_id, idx)
);
CREATE INDEX IF NOT EXISTS blob_uploads_created ON blob_uploads (created);
CREATE TABLE IF NOT EXISTS blob_parts (
    upload TEXT NOT NULL,
    offset_bytes BIGINT NOT NULL,
    size BIGINT NOT NULL,
    data_id BIGINT NOT NULL UNIQUE,
    PRIMARY KEY (upload, offset_bytes)
);
-- Blobs are mostly compressed already (packages, archives): chunks are stored out of
-- line without another round of compression.
ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
