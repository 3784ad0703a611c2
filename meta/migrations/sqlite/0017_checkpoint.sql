-- Checkpoint publications: a checkpoint distribution of their repository serves each
-- at <base_path>/<its creation time>/, so the content app looks them up by repository
-- in creation order.
ALTER TABLE publications ADD COLUMN checkpoint BOOLEAN NOT NULL DEFAULT 0;
CREATE INDEX publications_checkpoint ON publications (repository_id, created) WHERE checkpoint;
-- A checkpoint distribution serves its repository's checkpoint publications only.
ALTER TABLE distributions ADD COLUMN checkpoint BOOLEAN NOT NULL DEFAULT 0;
