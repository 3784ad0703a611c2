-- A version's base version is a row, not a number of the same repository: Pulp's
-- base_version may be a version of another repository, and it becomes null when that
-- version is deleted (retention, a delete) rather than naming a version that is gone.
ALTER TABLE repository_versions ADD COLUMN base_version_id BIGINT REFERENCES repository_versions (id) ON DELETE SET NULL;
UPDATE repository_versions SET base_version_id = (SELECT b.id FROM repository_versions b
    WHERE b.repository_id = repository_versions.repository_id AND b.number = repository_versions.base_version)
    WHERE base_version IS NOT NULL;
ALTER TABLE repository_versions DROP COLUMN base_version;
