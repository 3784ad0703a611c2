// Package sign makes detached OpenPGP signatures, as yum metadata signing needs
// (repomd.xml.asc), with a key pith holds itself instead of Pulp's external scripts.
package sign

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// Signer signs with one private key.
type Signer struct {
	entity *openpgp.Entity
	public string
}

// Load reads an armored OpenPGP private key without a passphrase from path.
func Load(path string) (*Signer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads an armored private key; name is used in errors.
func Read(r io.Reader, name string) (*Signer, error) {
	list, err := openpgp.ReadArmoredKeyRing(r)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", name, err)
	}
	if len(list) != 1 {
		return nil, fmt.Errorf("signing key %s: holds %d keys, want one", name, len(list))
	}
	e := list[0]
	if e.PrivateKey == nil {
		return nil, fmt.Errorf("signing key %s: no private key (export it with gpg --export-secret-keys --armor)", name)
	}
	if e.PrivateKey.Encrypted {
		return nil, fmt.Errorf("signing key %s: the private key is protected by a passphrase; pith needs it without one", name)
	}
	var pub bytes.Buffer
	w, err := armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err != nil {
		return nil, err
	}
	if err := e.Serialize(w); err != nil {
		return nil, fmt.Errorf("signing key %s: %w", name, err)
	}
	w.Close()
	pub.WriteByte('\n')
	return &Signer{entity: e, public: pub.String()}, nil
}

// noSalt leaves out the random salt notation go-crypto adds to signatures by default:
// gpg reports its binary value in its status lines, which ansible-galaxy's collection
// verify reads as UTF-8 and crashes on. gpg's own signatures (Pulp's) carry none.
var noSalt = &packet.Config{NonDeterministicSignaturesViaNotation: new(bool)}

// Detach returns the armored detached signature of what r yields.
func (s *Signer) Detach(r io.Reader) ([]byte, error) {
	var out bytes.Buffer
	if err := openpgp.ArmoredDetachSign(&out, s.entity, r, noSalt); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// PublicKey is the armored public key, as dnf's gpgkey= reads it.
func (s *Signer) PublicKey() string { return s.public }

// Fingerprint is the key's fingerprint, upper-case hex.
func (s *Signer) Fingerprint() string {
	return strings.ToUpper(fmt.Sprintf("%x", s.entity.PrimaryKey.Fingerprint))
}

// Verify checks an armored detached signature of what signed yields against the armored
// public keys of keyring, and returns the fingerprint (upper-case hex) of the key that
// made it. An error says which: a keyring that holds no key, a signature that is not
// one, or one no key of the keyring made or that does not match.
func Verify(keyring string, signed, signature io.Reader) (string, error) {
	keys, err := openpgp.ReadArmoredKeyRing(strings.NewReader(keyring))
	if err != nil {
		return "", fmt.Errorf("the keyring: %w", err)
	}
	if len(keys) == 0 {
		return "", errors.New("the keyring holds no key")
	}
	signer, err := openpgp.CheckArmoredDetachedSignature(keys, signed, signature, nil)
	if err != nil {
		return "", fmt.Errorf("the signature does not verify: %w", err)
	}
	return strings.ToUpper(fmt.Sprintf("%x", signer.PrimaryKey.Fingerprint)), nil
}
