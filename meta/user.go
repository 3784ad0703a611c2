package meta

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// pbkdf2Iter is the cost of new password hashes: OWASP's 2023 recommendation for
// PBKDF2-HMAC-SHA256 (600,000), which is also Django 5's default, so hashes stay in the
// format Pulp's own database holds.
const pbkdf2Iter = 600_000

// HashPassword derives a storable PBKDF2-SHA256 hash in Django's format
// ("pbkdf2_sha256$iter$salt$hash").
func HashPassword(pw string) (string, error) {
	salt := make([]byte, 12)
	rand.Read(salt)
	s := base64.RawStdEncoding.EncodeToString(salt)
	key, err := pbkdf2.Key(sha256.New, pw, []byte(s), pbkdf2Iter, 32)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("pbkdf2_sha256$%d$%s$%s", pbkdf2Iter, s, base64.StdEncoding.EncodeToString(key)), nil
}

// dummyHash is checked against when a user has no usable password (or does not exist),
// so that a failed login costs the same key derivation whatever the cause.
var dummyHash, _ = HashPassword("pith: no password matches this")

// CheckPassword verifies a password against a stored hash, always running the key
// derivation: an empty or malformed hash is checked against a dummy one and fails.
func CheckPassword(hash, pw string) bool {
	ok := true
	parts := strings.Split(hash, "$")
	if len(parts) != 4 || parts[0] != "pbkdf2_sha256" {
		parts, ok = strings.Split(dummyHash, "$"), false
	}
	iter, err := strconv.Atoi(parts[1])
	if err != nil || iter <= 0 || iter > 10_000_000 {
		parts, ok = strings.Split(dummyHash, "$"), false
		iter = pbkdf2Iter
	}
	want, err := base64.StdEncoding.DecodeString(parts[3])
	if err != nil {
		want, ok = make([]byte, 32), false
	}
	key, err := pbkdf2.Key(sha256.New, pw, []byte(parts[2]), iter, len(want))
	return err == nil && subtle.ConstantTimeCompare(key, want) == 1 && ok
}

// NeedsRehash reports whether a stored hash is weaker than new ones (fewer iterations).
func NeedsRehash(hash string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 4 {
		return false
	}
	iter, err := strconv.Atoi(parts[1])
	return err == nil && iter < pbkdf2Iter
}

// User is an account.
type User struct {
	ID        int64
	Username  string
	FirstName string
	LastName  string
	Email     string
	Staff     bool
	Active    bool
	Superuser bool
	Created   int64
	// PasswordHash is "" for a user who cannot log in with a password.
	PasswordHash string
}

const userCols = "u.id, u.username, u.first_name, u.last_name, u.email, u.is_staff, u.is_active, u.is_superuser, u.created, u.password_hash"

func scanUser(r interface{ Scan(...any) error }) (User, error) {
	var u User
	err := r.Scan(&u.ID, &u.Username, &u.FirstName, &u.LastName, &u.Email, &u.Staff, &u.Active, &u.Superuser, &u.Created, &u.PasswordHash)
	return u, err
}

// SetPassword creates the user or replaces its password.
func SetPassword(ctx context.Context, q Querier, username, pw string, superuser bool) error {
	h, err := HashPassword(pw)
	if err != nil {
		return err
	}
	_, err = q.Exec(ctx, `INSERT INTO users (username, password_hash, is_superuser, created) VALUES (?, ?, ?, ?)
		ON CONFLICT (username) DO UPDATE SET password_hash = excluded.password_hash`, username, h, superuser, Now())
	return err
}

// SetPasswordHash replaces a user's stored hash (a rehash at a higher cost).
func SetPasswordHash(ctx context.Context, q Querier, id int64, hash string) error {
	_, err := q.Exec(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, id)
	return err
}

// UserExists reports whether a user exists.
func UserExists(ctx context.Context, q Querier, username string) (bool, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM users WHERE username = ?`, username).Scan(&n)
	return n > 0, err
}

// UserByName finds a user by username.
func UserByName(ctx context.Context, q Querier, username string) (User, error) {
	u, err := scanUser(q.QueryRow(ctx, "SELECT "+userCols+" FROM users u WHERE u.username = ?", username))
	return u, noRows(err, "user", username)
}

// UserByID finds a user by id.
func UserByID(ctx context.Context, q Querier, id int64) (User, error) {
	u, err := scanUser(q.QueryRow(ctx, "SELECT "+userCols+" FROM users u WHERE u.id = ?", id))
	return u, noRows(err, "user", strconv.FormatInt(id, 10))
}

// ListUsers selects a page of users (alias u).
func ListUsers(ctx context.Context, q Querier, l List) ([]User, int64, error) {
	return Page(ctx, q, userCols, "users u", "u.id", l, func(r *sql.Rows) (User, error) { return scanUser(r) })
}

// CreateUser inserts a user; a taken username is ErrConflict.
func CreateUser(ctx context.Context, q Querier, u User) (User, error) {
	var id int64
	err := q.QueryRow(ctx, `INSERT INTO users (username, password_hash, first_name, last_name, email, is_staff, is_active, is_superuser, created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		u.Username, u.PasswordHash, u.FirstName, u.LastName, u.Email, u.Staff, u.Active, u.Superuser, Now()).Scan(&id)
	if IsUniqueViolation(err) {
		return User{}, fmt.Errorf("user %q: %w", u.Username, ErrConflict)
	}
	if err != nil {
		return User{}, fmt.Errorf("insert user %q: %w", u.Username, err)
	}
	return UserByID(ctx, q, id)
}

// UpdateUser writes a user's fields, its password hash included.
func UpdateUser(ctx context.Context, q Querier, u User) error {
	_, err := q.Exec(ctx, `UPDATE users SET username = ?, password_hash = ?, first_name = ?, last_name = ?, email = ?, is_staff = ?, is_active = ?, is_superuser = ? WHERE id = ?`,
		u.Username, u.PasswordHash, u.FirstName, u.LastName, u.Email, u.Staff, u.Active, u.Superuser, u.ID)
	if IsUniqueViolation(err) {
		return fmt.Errorf("user %q: %w", u.Username, ErrConflict)
	}
	return err
}

// DeleteUser deletes a user with its roles, memberships and sessions; the tasks it
// dispatched no longer name it.
func DeleteUser(ctx context.Context, q Querier, id int64) error {
	if _, err := q.Exec(ctx, `UPDATE tasks SET created_by = NULL WHERE created_by = ?`, id); err != nil {
		return err
	}
	if _, err := q.Exec(ctx, `DELETE FROM user_roles WHERE object_type = 'auth.user' AND object_id = ?`, strconv.FormatInt(id, 10)); err != nil {
		return err
	}
	res, err := q.Exec(ctx, `DELETE FROM users WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound("user", strconv.FormatInt(id, 10))
	}
	return nil
}

// PasswordHash returns the stored hash of a user ("" if absent), so callers can cache
// verified credentials against it.
func PasswordHash(ctx context.Context, q Querier, username string) (string, error) {
	var h string
	err := q.QueryRow(ctx, `SELECT password_hash FROM users WHERE username = ?`, username).Scan(&h)
	if err != nil {
		return "", noRows(err, "user", username)
	}
	return h, nil
}
