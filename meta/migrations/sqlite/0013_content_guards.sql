-- Content guards (Pulp's: rbac, content_redirect, header, composite; certguard's x509
-- and rhsm). A distribution names its guard by pulp_id in distributions.content_guard.
CREATE TABLE content_guards (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    name TEXT NOT NULL UNIQUE,
    description TEXT,
    attrs TEXT NOT NULL DEFAULT '{}',
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);

-- The guards of a composite guard, asked in order.
CREATE TABLE composite_guard_members (
    composite_id BIGINT NOT NULL REFERENCES content_guards (id) ON DELETE CASCADE,
    guard_id BIGINT NOT NULL REFERENCES content_guards (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    PRIMARY KEY (composite_id, position)
);
CREATE INDEX composite_guard_members_guard ON composite_guard_members (guard_id);
CREATE INDEX distributions_content_guard ON distributions (content_guard);
