package testgalaxy

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"

	"pith/sign"
)

// Keyring is a throwaway OpenPGP key for collection signatures.
type Keyring struct {
	Signer     *sign.Signer // signs with the private key (Server.Sign takes it)
	Path       string       // the public key alone, as a gpg keyring file (for --keyring)
	PrivateKey string       // the armored private key without passphrase, for a signing service
}

// NewKeyring makes a key in a directory removed when the test ends.
func NewKeyring(t testing.TB) *Keyring {
	t.Helper()
	e, err := openpgp.NewEntity("Pith Test Galaxy", "", "testgalaxy@example.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	var priv, pub bytes.Buffer
	w, err := armor.Encode(&priv, openpgp.PrivateKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// gpg --keyring reads binary packets (a legacy pubring), not armor.
	if err := e.Serialize(&pub); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	k := &Keyring{Path: filepath.Join(dir, "pubring.gpg"), PrivateKey: filepath.Join(dir, "signing.asc")}
	if err := os.WriteFile(k.Path, pub.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.PrivateKey, priv.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if k.Signer, err = sign.Load(k.PrivateKey); err != nil {
		t.Fatal(err)
	}
	return k
}
