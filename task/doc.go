// Package task is the durable task queue, kept in the metadata store.
//
// Invariants:
//   - A task is a row. It declares the resources it locks, exclusively or shared; it runs
//     only when no earlier unfinished task holds a conflicting lock (first come, first
//     served per resource). Lock rows live exactly as long as the task is unfinished.
//   - A worker claims a task in one statement (UPDATE … WHERE id = (SELECT … LIMIT 1)
//     RETURNING; FOR UPDATE SKIP LOCKED on PostgreSQL).
//   - A running task carries a lease that its process renews by heartbeat while it holds
//     the task. A task whose lease ran out (its worker died) is failed and its locks are
//     freed, and so are the tasks a restarted worker left (Restarted): nothing stays
//     "running" forever.
//   - A task's end is one write, retried until it lands while the process lives; until
//     then the process claims no other task.
//   - Cancel works on waiting tasks (at once) and running ones (the function's context is
//     cancelled; the task ends "canceled").
//   - A task's error and progress messages never show a URL's credentials (secret.Redact),
//     and the secrets in its arguments are stored sealed (meta.SealSecrets).
package task
