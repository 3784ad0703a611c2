-- Exporters (Pulp's PulpExporter and FilesystemExporter: kind 'pulp' or 'filesystem')
-- and their exports, importers (PulpImporter) and their imports. An exporter's name is
-- unique across kinds, as in Pulp's master table. What is not filtered on is in attrs:
-- a filesystem exporter's method; an export's params, exported_resources,
-- output_file_info and toc_info; an import's params. task is the pulp_id of the task
-- that made an export or import (kept when the task is purged, as Pulp's SET_NULL
-- would not: the href then answers 404).
CREATE TABLE exporters (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL,
    attrs TEXT NOT NULL DEFAULT '{}',
    last_export BIGINT,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);

-- A pulp exporter's repositories; deleting a repository takes it out of its exporters.
CREATE TABLE exporter_repositories (
    exporter_id BIGINT NOT NULL REFERENCES exporters (id) ON DELETE CASCADE,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    PRIMARY KEY (exporter_id, repository_id)
);
CREATE INDEX exporter_repositories_repository ON exporter_repositories (repository_id);

CREATE TABLE exports (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    exporter_id BIGINT NOT NULL REFERENCES exporters (id) ON DELETE CASCADE,
    task TEXT,
    attrs TEXT NOT NULL DEFAULT '{}',
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);
CREATE INDEX exports_exporter ON exports (exporter_id, created);

CREATE TABLE importers (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL UNIQUE,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);

-- An importer's repo_mapping: the source repository's name to a local repository.
CREATE TABLE importer_repositories (
    importer_id BIGINT NOT NULL REFERENCES importers (id) ON DELETE CASCADE,
    source_name TEXT NOT NULL,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    PRIMARY KEY (importer_id, source_name)
);
CREATE INDEX importer_repositories_repository ON importer_repositories (repository_id);

CREATE TABLE imports (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    importer_id BIGINT NOT NULL REFERENCES importers (id) ON DELETE CASCADE,
    task TEXT,
    attrs TEXT NOT NULL DEFAULT '{}',
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);
CREATE INDEX imports_importer ON imports (importer_id, created);
