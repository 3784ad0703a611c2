-- Where a chunk's bytes are stored: the key of its part in the blob storage, chosen at
-- random by each PUT, so that a PUT that loses a race for a range never replaces the part
-- a recorded chunk names. NULL: the part is stored under the chunk's offset (chunks
-- received before this migration).
ALTER TABLE upload_chunks ADD COLUMN part BIGINT;
