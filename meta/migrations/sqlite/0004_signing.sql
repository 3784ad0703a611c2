-- Signing services (Pulp's SigningService): keys pith holds to sign metadata.
CREATE TABLE signing_services (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL UNIQUE,
    public_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    script TEXT NOT NULL,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);
