-- The profilers a task's dispatching request asked for (X-Task-Diagnostics), a JSON
-- list; NULL when it asked for none.
ALTER TABLE tasks ADD COLUMN profile_options TEXT;

-- The files the profilers made of a task's run (Pulp's ProfileArtifact). A linked
-- artifact is not an orphan; the links go with their task.
CREATE TABLE task_profile_artifacts (
    task_id BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    artifact_id BIGINT NOT NULL REFERENCES artifacts (id),
    PRIMARY KEY (task_id, name)
);
CREATE INDEX task_profile_artifacts_artifact ON task_profile_artifacts (artifact_id);
