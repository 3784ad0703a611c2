-- A distribution may serve one fixed repository version (Pulp's repository_version),
-- instead of a repository's latest version or a publication.
ALTER TABLE distributions ADD COLUMN repository_version_id BIGINT REFERENCES repository_versions (id) ON DELETE SET NULL;
