-- Pith metadata schema, SQLite dialect. Times are microseconds since the Unix epoch (UTC);
-- JSON values are TEXT. Integer keys inside; pulp_id (UUID text) only for hrefs.
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    is_superuser BOOLEAN NOT NULL DEFAULT 0,
    created BIGINT NOT NULL
);

CREATE TABLE artifacts (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    size BIGINT NOT NULL,
    md5 TEXT, sha1 TEXT, sha224 TEXT,
    sha256 TEXT NOT NULL UNIQUE,
    sha384 TEXT, sha512 TEXT,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    timestamp_of_interest BIGINT NOT NULL
);

CREATE TABLE contents (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    natural_key TEXT NOT NULL,
    repo_key TEXT NOT NULL,
    relative_path TEXT NOT NULL DEFAULT '',
    digest TEXT NOT NULL DEFAULT '',
    attrs TEXT NOT NULL DEFAULT '{}',
    labels TEXT NOT NULL DEFAULT '{}',
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    timestamp_of_interest BIGINT NOT NULL,
    UNIQUE (type, natural_key)
);
CREATE INDEX contents_digest ON contents (digest);
CREATE INDEX contents_relative_path ON contents (relative_path);

CREATE TABLE content_artifacts (
    id INTEGER PRIMARY KEY,
    content_id BIGINT NOT NULL REFERENCES contents (id) ON DELETE CASCADE,
    relative_path TEXT NOT NULL,
    artifact_id BIGINT REFERENCES artifacts (id),
    UNIQUE (content_id, relative_path)
);
CREATE INDEX content_artifacts_artifact ON content_artifacts (artifact_id);

CREATE TABLE remotes (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    name TEXT NOT NULL UNIQUE,
    url TEXT NOT NULL,
    policy TEXT NOT NULL,
    attrs TEXT NOT NULL DEFAULT '{}',
    labels TEXT NOT NULL DEFAULT '{}',
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);

CREATE TABLE remote_artifacts (
    id INTEGER PRIMARY KEY,
    content_artifact_id BIGINT NOT NULL REFERENCES content_artifacts (id) ON DELETE CASCADE,
    remote_id BIGINT NOT NULL REFERENCES remotes (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    size BIGINT,
    sha256 TEXT,
    UNIQUE (content_artifact_id, remote_id)
);
CREATE INDEX remote_artifacts_remote ON remote_artifacts (remote_id);

CREATE TABLE repositories (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    name TEXT NOT NULL UNIQUE,
    description TEXT,
    retain_repo_versions BIGINT,
    remote_id BIGINT REFERENCES remotes (id) ON DELETE SET NULL,
    next_version BIGINT NOT NULL DEFAULT 1,
    attrs TEXT NOT NULL DEFAULT '{}',
    labels TEXT NOT NULL DEFAULT '{}',
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);

CREATE TABLE repository_versions (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    number BIGINT NOT NULL,
    base_version BIGINT,
    summary TEXT NOT NULL DEFAULT '{}',
    info TEXT NOT NULL DEFAULT '{}',
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    UNIQUE (repository_id, number)
);

-- Membership as change ranges: unit present in versions [version_added, version_removed).
CREATE TABLE repository_content (
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    content_id BIGINT NOT NULL REFERENCES contents (id),
    version_added BIGINT NOT NULL,
    version_removed BIGINT,
    PRIMARY KEY (repository_id, content_id, version_added)
);
CREATE INDEX repository_content_added ON repository_content (repository_id, version_added);
CREATE INDEX repository_content_removed ON repository_content (repository_id, version_removed);
CREATE INDEX repository_content_content ON repository_content (content_id);

CREATE TABLE publications (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    version_number BIGINT NOT NULL,
    attrs TEXT NOT NULL DEFAULT '{}',
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);
CREATE INDEX publications_repository ON publications (repository_id, version_number);

-- What a publication serves: either a unit's file (content_artifact_id) or a generated
-- metadata file (artifact_id).
CREATE TABLE published_files (
    publication_id BIGINT NOT NULL REFERENCES publications (id) ON DELETE CASCADE,
    relative_path TEXT NOT NULL,
    content_artifact_id BIGINT REFERENCES content_artifacts (id) ON DELETE CASCADE,
    artifact_id BIGINT REFERENCES artifacts (id),
    PRIMARY KEY (publication_id, relative_path)
);
CREATE INDEX published_files_artifact ON published_files (artifact_id);

CREATE TABLE distributions (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    name TEXT NOT NULL UNIQUE,
    base_path TEXT NOT NULL UNIQUE,
    repository_id BIGINT REFERENCES repositories (id) ON DELETE SET NULL,
    publication_id BIGINT REFERENCES publications (id) ON DELETE SET NULL,
    content_guard TEXT,
    hidden BOOLEAN NOT NULL DEFAULT 0,
    attrs TEXT NOT NULL DEFAULT '{}',
    labels TEXT NOT NULL DEFAULT '{}',
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);

-- Superseded publications stay servable until expires.
CREATE TABLE distribution_history (
    distribution_id BIGINT NOT NULL REFERENCES distributions (id) ON DELETE CASCADE,
    publication_id BIGINT NOT NULL REFERENCES publications (id) ON DELETE CASCADE,
    expires BIGINT NOT NULL,
    PRIMARY KEY (distribution_id, publication_id)
);

CREATE TABLE uploads (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    size BIGINT NOT NULL,
    completed BIGINT,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);

CREATE TABLE upload_chunks (
    upload_id BIGINT NOT NULL REFERENCES uploads (id) ON DELETE CASCADE,
    offset_bytes BIGINT NOT NULL,
    size BIGINT NOT NULL,
    PRIMARY KEY (upload_id, offset_bytes)
);

CREATE TABLE workers (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL UNIQUE,
    app_type TEXT NOT NULL,
    created BIGINT NOT NULL,
    last_heartbeat BIGINT NOT NULL
);

CREATE TABLE task_groups (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    all_dispatched BOOLEAN NOT NULL DEFAULT 1,
    created BIGINT NOT NULL
);

CREATE TABLE tasks (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    state TEXT NOT NULL,
    logging_cid TEXT NOT NULL DEFAULT '',
    args TEXT NOT NULL DEFAULT '{}',
    reserved TEXT NOT NULL DEFAULT '[]',
    worker_id BIGINT,
    task_group_id BIGINT REFERENCES task_groups (id) ON DELETE SET NULL,
    parent_task_id BIGINT,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    unblocked BIGINT,
    started BIGINT,
    finished BIGINT,
    lease_until BIGINT,
    error TEXT,
    result TEXT,
    progress TEXT NOT NULL DEFAULT '[]',
    created_resources TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX tasks_state ON tasks (state, id);
CREATE INDEX tasks_group ON tasks (task_group_id);

-- Resources a task locks while unfinished; rows are deleted when the task finishes.
CREATE TABLE task_locks (
    task_id BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    resource TEXT NOT NULL,
    exclusive BOOLEAN NOT NULL,
    PRIMARY KEY (task_id, resource)
);
CREATE INDEX task_locks_resource ON task_locks (resource, task_id);
