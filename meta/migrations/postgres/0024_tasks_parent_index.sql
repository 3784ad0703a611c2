-- A task shows its child tasks (child_tasks): the tasks it dispatched, found by parent.
CREATE INDEX tasks_parent ON tasks (parent_task_id);
