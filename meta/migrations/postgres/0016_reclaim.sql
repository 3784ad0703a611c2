-- When reclaim_space last dropped stored files of a repository's units (µs; 0: never).
-- A unit's file changes from stored to on demand then, so the content app's cached
-- resolutions of what the repository serves are keyed by it too.
ALTER TABLE repositories ADD COLUMN reclaimed BIGINT NOT NULL DEFAULT 0;
