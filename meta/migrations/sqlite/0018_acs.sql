-- Alternate content sources (Pulp's AlternateContentSource and its paths): a remote
-- (policy on_demand) and sub-paths of its URL that a sync may take artifacts from
-- before its own remote. paths is a JSON list of strings; [] is the remote's URL itself.
CREATE TABLE acs (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    name TEXT NOT NULL UNIQUE,
    remote_id BIGINT NOT NULL REFERENCES remotes (id),
    paths TEXT NOT NULL DEFAULT '[]',
    last_refreshed BIGINT,
    created BIGINT NOT NULL,
    updated BIGINT NOT NULL
);
CREATE INDEX acs_remote ON acs (remote_id);

-- What a refresh of one path of an ACS learned: the files it can give, by sha256, and
-- where. Pulp keeps them as remote artifacts of a hidden repository's content; here
-- they are rows of their own, so they never appear in a repository or a content list.
CREATE TABLE acs_artifacts (
    acs_id BIGINT NOT NULL REFERENCES acs (id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size BIGINT NOT NULL,
    url TEXT NOT NULL,
    PRIMARY KEY (acs_id, path, sha256)
);
CREATE INDEX acs_artifacts_sha256 ON acs_artifacts (sha256);
