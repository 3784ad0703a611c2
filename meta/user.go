package meta

import (
	"context"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

const pbkdf2Iter = 100_000

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

func checkPassword(hash, pw string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 4 || parts[0] != "pbkdf2_sha256" {
		return false
	}
	iter, err := strconv.Atoi(parts[1])
	if err != nil || iter <= 0 {
		return false
	}
	want, err := base64.StdEncoding.DecodeString(parts[3])
	if err != nil {
		return false
	}
	key, err := pbkdf2.Key(sha256.New, pw, []byte(parts[2]), iter, len(want))
	return err == nil && subtle.ConstantTimeCompare(key, want) == 1
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

// UserExists reports whether a user exists.
func UserExists(ctx context.Context, q Querier, username string) (bool, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT count(*) FROM users WHERE username = ?`, username).Scan(&n)
	return n > 0, err
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

// CheckPassword verifies a password against a stored hash.
func CheckPassword(hash, pw string) bool { return checkPassword(hash, pw) }
