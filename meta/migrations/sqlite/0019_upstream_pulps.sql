-- Upstream Pulps a replica copies distributions from (Pulp's UpstreamPulp). What the
-- list filters on is in columns; the rest of the settings (api_root, domain, TLS,
-- credentials sealed like a remote's, q_select, policy) are in attrs.
CREATE TABLE upstream_pulps (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL UNIQUE,
    base_url TEXT NOT NULL,
    attrs TEXT NOT NULL DEFAULT '{}',
    last_replication BIGINT,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);
