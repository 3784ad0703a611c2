-- A unit's holdings by unit, with their repository in the index: a content list
-- narrowed to what its caller may see checks each unit's repositories, and read from
-- the index alone SQLite does not look up each holding's row first.
CREATE INDEX repository_content_holder ON repository_content (content_id, repository_id);
DROP INDEX repository_content_content;
