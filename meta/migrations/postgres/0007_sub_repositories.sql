-- A distribution tree's variants and addons that live in other directories are
-- repositories of their own (Pulp's hidden sub-repositories): each belongs to the tree
-- unit (sub_of) and is published under its path in the tree (sub_path) with every
-- publication of a version that holds the tree. Lists do not show them.
ALTER TABLE repositories ADD COLUMN sub_of BIGINT REFERENCES contents (id);
ALTER TABLE repositories ADD COLUMN sub_path TEXT;
CREATE UNIQUE INDEX repositories_sub ON repositories (sub_of, sub_path);
