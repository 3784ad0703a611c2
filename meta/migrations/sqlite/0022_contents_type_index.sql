-- A content list is read in id order within its type: a page walks the type's units in
-- that order and stops at its limit, instead of reading every unit of the type through
-- contents_repo_key and sorting them (an administrator's page of 320,000 packages; a
-- viewer's page checked unit by unit, meta.Page).
CREATE INDEX contents_type ON contents (type, id);
