package secret

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// prefix starts every sealed value: the format's version, then the sealing key's id.
const prefix = "pith:v1:"

// Keys are the keys of an encryption key file: the first seals, every one opens.
type Keys struct {
	path string
	keys []key
}

type key struct {
	id   string // names the key in the values it sealed: its sha256's first 4 bytes, hex
	aead cipher.AEAD
}

// ErrNoKeyFile is Load's error when the key file does not exist.
var ErrNoKeyFile = errors.New("encryption key file does not exist")

// Load reads a key file: one base64-encoded 32-byte key a line (what `openssl rand
// -base64 32` prints; a Pulp key file is one too), blank lines and lines starting with
// # ignored. Errors name the file.
func Load(path string) (*Keys, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoKeyFile)
	}
	if err != nil {
		return nil, fmt.Errorf("encryption key file: %w", err)
	}
	k := &Keys{path: path}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		raw, err := decodeKey(line)
		if err != nil {
			return nil, fmt.Errorf("encryption key file %s: line %d: %w", path, n, err)
		}
		kk, err := newKey(raw)
		if err != nil {
			return nil, fmt.Errorf("encryption key file %s: line %d: %w", path, n, err)
		}
		k.keys = append(k.keys, kk)
	}
	if len(k.keys) == 0 {
		return nil, fmt.Errorf("encryption key file %s: holds no key (one base64-encoded 32-byte key a line: openssl rand -base64 32)", path)
	}
	return k, nil
}

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			if len(b) != 32 {
				return nil, fmt.Errorf("a key of %d bytes, not 32", len(b))
			}
			return b, nil
		}
	}
	return nil, errors.New("not a base64-encoded key")
}

func newKey(raw []byte) (key, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return key{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return key{}, err
	}
	sum := sha256.Sum256(raw)
	return key{id: hex.EncodeToString(sum[:4]), aead: aead}, nil
}

// Create writes a key file holding one fresh key, readable by its owner only. It fails
// when the file exists: a key that sealed something must never be overwritten.
func Create(path string) (*Keys, error) {
	line, err := freshKeyLines()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create encryption key file: %w", err)
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return nil, fmt.Errorf("write encryption key file %s: %w", path, err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return nil, fmt.Errorf("write encryption key file %s: %w", path, err)
	}
	return Load(path)
}

// AddKey writes a fresh key at the top of an existing key file, so that it seals from
// now on while the keys after it still open what they sealed. The file is replaced
// whole, readable by its owner only.
func AddKey(path string) (*Keys, error) {
	old, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("encryption key file: %w", err)
	}
	line, err := freshKeyLines()
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".encryption-key-*") // created 0600
	if err != nil {
		return nil, fmt.Errorf("rewrite encryption key file %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(line + string(old))
	if err = errors.Join(err, tmp.Sync(), tmp.Close()); err != nil {
		return nil, fmt.Errorf("rewrite encryption key file %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("rewrite encryption key file %s: %w", path, err)
	}
	return Load(path)
}

// freshKeyLines is a new random key with a comment naming it.
func freshKeyLines() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("new encryption key: %w", err)
	}
	k, err := newKey(raw)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("# key %s, made %s; the first key seals, every key opens\n%s\n",
		k.id, time.Now().UTC().Format(time.DateOnly), base64.StdEncoding.EncodeToString(raw)), nil
}

// Path is the key file's path.
func (k *Keys) Path() string { return k.path }

// IDs are the ids of the file's keys, the sealing key first.
func (k *Keys) IDs() []string {
	ids := make([]string, len(k.keys))
	for i, kk := range k.keys {
		ids[i] = kk.id
	}
	return ids
}

// Seal encrypts plain with the first key, under a random nonce.
func (k *Keys) Seal(plain string) string {
	first := k.keys[0]
	nonce := make([]byte, first.aead.NonceSize(), first.aead.NonceSize()+len(plain)+first.aead.Overhead())
	rand.Read(nonce)
	return prefix + first.id + ":" + base64.RawURLEncoding.EncodeToString(first.aead.Seal(nonce, nonce, []byte(plain), nil))
}

// IsSealed reports whether s is a sealed value.
func IsSealed(s string) bool { return strings.HasPrefix(s, prefix) }

// SealedWith is the id of the key that sealed s ("" when s is not sealed).
func SealedWith(s string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(s, prefix), ":")
	if !IsSealed(s) {
		return ""
	}
	return id
}

// Current reports whether s is sealed with the key that seals now.
func (k *Keys) Current(s string) bool { return SealedWith(s) == k.keys[0].id }

// Open decrypts a sealed value. A value sealed with a key the file does not hold, or
// one that does not authenticate, is an error naming the key file.
func (k *Keys) Open(s string) (string, error) {
	id := SealedWith(s)
	if id == "" {
		return "", errors.New("not a sealed value")
	}
	_, body, _ := strings.Cut(strings.TrimPrefix(s, prefix), ":")
	ct, err := base64.RawURLEncoding.DecodeString(body)
	found := false
	for _, kk := range k.keys {
		if kk.id != id {
			continue
		}
		found = true
		if err != nil || len(ct) < kk.aead.NonceSize() {
			break
		}
		if plain, err := kk.aead.Open(nil, ct[:kk.aead.NonceSize()], ct[kk.aead.NonceSize():], nil); err == nil {
			return string(plain), nil
		}
	}
	if !found {
		return "", fmt.Errorf("a secret is sealed with key %s, which the encryption key file %s does not hold (keys %s): restore the key file the database was used with", id, k.path, strings.Join(k.IDs(), ", "))
	}
	return "", fmt.Errorf("a secret sealed with key %s of %s does not open: the stored value is damaged", id, k.path)
}
