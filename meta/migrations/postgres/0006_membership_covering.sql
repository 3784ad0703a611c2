-- A new version looks up the rows it added or removed, and the present row of each unit
-- it adds, replaces or removes. With content_id in these indexes every such lookup is a
-- seek on (repository, version, unit); without it SQLite's planner walked all the present
-- rows of the repository (O(repository size)) or its whole history per new version.
DROP INDEX repository_content_added;
CREATE INDEX repository_content_added ON repository_content (repository_id, version_added, content_id);
DROP INDEX repository_content_removed;
CREATE INDEX repository_content_removed ON repository_content (repository_id, version_removed, content_id);
