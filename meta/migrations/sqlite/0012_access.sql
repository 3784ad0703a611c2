-- Role-based access control (Pulp's users, groups, roles, object roles and access
-- policies), login sessions, and who dispatched each task.
ALTER TABLE users ADD COLUMN first_name TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN last_name TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN email TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN is_staff BOOLEAN NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN is_active BOOLEAN NOT NULL DEFAULT 1;

CREATE TABLE groups (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created BIGINT NOT NULL
);

CREATE TABLE group_users (
    group_id BIGINT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_users_user ON group_users (user_id, group_id);

-- Roles name permissions ("file.view_filerepository"); locked roles are the built-in
-- ones, written at start from the defaults of the content types a process serves.
CREATE TABLE roles (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL UNIQUE,
    description TEXT,
    locked BOOLEAN NOT NULL DEFAULT 0,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);

CREATE TABLE role_permissions (
    role_id BIGINT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    permission TEXT NOT NULL,
    PRIMARY KEY (role_id, permission)
);
CREATE INDEX role_permissions_permission ON role_permissions (permission, role_id);

-- A role held by a user or a group: on every object (object_type '') or on one object,
-- named by its PRN model ("file.filerepository") and its pulp_id (or a user's or
-- group's integer id).
CREATE TABLE user_roles (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id BIGINT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    object_type TEXT NOT NULL DEFAULT '',
    object_id TEXT NOT NULL DEFAULT '',
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    UNIQUE (user_id, role_id, object_type, object_id)
);
CREATE INDEX user_roles_object ON user_roles (object_id, object_type);

CREATE TABLE group_roles (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    group_id BIGINT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    role_id BIGINT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    object_type TEXT NOT NULL DEFAULT '',
    object_id TEXT NOT NULL DEFAULT '',
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL,
    UNIQUE (group_id, role_id, object_type, object_id)
);
CREATE INDEX group_roles_object ON group_roles (object_id, object_type);

-- Access policies by Pulp's viewset name; written at start from the defaults unless an
-- administrator customized them.
CREATE TABLE access_policies (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    viewset_name TEXT NOT NULL UNIQUE,
    statements TEXT NOT NULL,
    creation_hooks TEXT NOT NULL DEFAULT '[]',
    queryset_scoping TEXT NOT NULL DEFAULT '{}',
    customized BOOLEAN NOT NULL DEFAULT 0,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);

-- Login sessions: the SHA-256 of the session cookie, never the cookie itself.
CREATE TABLE sessions (
    key_hash TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf TEXT NOT NULL,
    created BIGINT NOT NULL,
    expires BIGINT NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires);

ALTER TABLE tasks ADD COLUMN created_by BIGINT;
