package meta

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// Notify tells the other processes sharing a PostgreSQL database that something
// happened on channel (tasks to claim, content that changed). With SQLite there are no
// other processes and it does nothing.
func (db *DB) Notify(ctx context.Context, channel, payload string) error {
	if db.dialect != Postgres {
		return nil
	}
	_, err := db.sql.ExecContext(ctx, `SELECT pg_notify($1, $2)`, channel, payload)
	return err
}

// Listen calls fn for every notification on the channels until ctx ends. It holds one
// dedicated connection and reconnects after failures; after each (re)connect it calls
// fn with an empty payload, because notifications sent while disconnected are lost.
// With SQLite it returns at once.
func (db *DB) Listen(ctx context.Context, log *slog.Logger, fn func(channel, payload string), channels ...string) {
	if db.dialect != Postgres {
		return
	}
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := db.listenOnce(ctx, fn, channels)
		if ctx.Err() != nil {
			return
		}
		log.Warn("database notifications lost; reconnecting", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (db *DB) listenOnce(ctx context.Context, fn func(channel, payload string), channels []string) error {
	conn, err := pgx.Connect(ctx, db.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	for _, ch := range channels {
		fn(ch, "")
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Channel, n.Payload)
	}
}
