-- One row per elected role: the process holding it until the lease runs out.
CREATE TABLE leaders (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until INTEGER NOT NULL
);

-- Recurring tasks the leader dispatches (Pulp's TaskSchedule).
CREATE TABLE task_schedules (
    id INTEGER PRIMARY KEY,
    pulp_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL UNIQUE,
    task_name TEXT NOT NULL,
    args TEXT NOT NULL,
    dispatch_interval INTEGER NOT NULL,
    next_dispatch INTEGER NOT NULL,
    last_task_id INTEGER REFERENCES tasks (id) ON DELETE SET NULL,
    created INTEGER NOT NULL,
    updated INTEGER NOT NULL
);
