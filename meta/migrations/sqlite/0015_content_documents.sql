-- Large documents of a unit that its type reads by name, one unit at a time, kept apart
-- from attrs so that lists never load them (ansible's docs_blob, MANIFEST.json and
-- FILES.json).
CREATE TABLE content_documents (
    content_id BIGINT NOT NULL REFERENCES contents (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (content_id, name)
);
