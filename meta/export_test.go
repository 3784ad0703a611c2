package meta

// NoGrantSets makes Granted narrow by its SQL forms on SQLite too, as on PostgreSQL.
func NoGrantSets(db *DB) { db.grants = newGrantSets(false) }
