-- A new version replaces the units that share a repo key with the ones it adds: look
-- them up by key, not by scanning every unit of the type.
CREATE INDEX contents_repo_key ON contents (type, repo_key);
