-- The yum metadata of each rpm package, as the XML fragments createrepo_c writes into
-- primary, filelists and other, kept at import so publishing never re-reads packages.
CREATE TABLE rpm_fragments (
    content_id BIGINT PRIMARY KEY REFERENCES contents (id) ON DELETE CASCADE,
    primary_xml TEXT NOT NULL,
    filelists_xml TEXT NOT NULL,
    other_xml TEXT NOT NULL
);
