package sign

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// NewTestKey makes a fresh armored private key, as tests need one.
func newKey(t *testing.T) []byte {
	t.Helper()
	e, err := openpgp.NewEntity("Pith Test", "", "test@example.invalid", nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w, _ := armor.Encode(&b, openpgp.PrivateKeyType, nil)
	if err := e.SerializePrivate(w, nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return b.Bytes()
}

func TestDetachVerifies(t *testing.T) {
	s, err := Read(bytes.NewReader(newKey(t)), "test")
	if err != nil {
		t.Fatal(err)
	}
	msg := "<repomd/>\n"
	sig, err := s.Detach(strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	ring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(s.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openpgp.CheckArmoredDetachedSignature(ring, strings.NewReader(msg), bytes.NewReader(sig), nil); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
	if _, err := openpgp.CheckArmoredDetachedSignature(ring, strings.NewReader(msg+"x"), bytes.NewReader(sig), nil); err == nil {
		t.Fatal("signature verifies changed data")
	}
	if len(s.Fingerprint()) != 40 {
		t.Errorf("fingerprint %q", s.Fingerprint())
	}
}

func TestBadKeys(t *testing.T) {
	pub, _ := Read(bytes.NewReader(newKey(t)), "k")
	for name, in := range map[string]string{"garbage": "not a key", "public only": pub.PublicKey()} {
		if _, err := Read(strings.NewReader(in), name); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Verify names the key that made a signature, and refuses changed data, another key's
// signature, a keyring without keys and a signature that is not one.
func TestVerify(t *testing.T) {
	a, _ := Read(bytes.NewReader(newKey(t)), "a")
	b, _ := Read(bytes.NewReader(newKey(t)), "b")
	msg := `{"collection_info": {}}`
	sig, err := a.Detach(strings.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := Verify(a.PublicKey()+b.PublicKey(), strings.NewReader(msg), bytes.NewReader(sig))
	if err != nil || fp != a.Fingerprint() {
		t.Fatalf("Verify: %q %v, want %s", fp, err, a.Fingerprint())
	}
	for name, c := range map[string]struct{ ring, msg, sig string }{
		"changed data": {a.PublicKey(), msg + " ", string(sig)},
		"another key":  {b.PublicKey(), msg, string(sig)},
		"no key":       {"", msg, string(sig)},
		"not a sig":    {a.PublicKey(), msg, "-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----\n"},
	} {
		if _, err := Verify(c.ring, strings.NewReader(c.msg), strings.NewReader(c.sig)); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}

// A signature carries no notation, as gpg's own do not. go-crypto adds a random salt
// notation by default; gpg reports its binary value in the status lines that
// `ansible-galaxy collection verify` reads as UTF-8, and the client crashes on them.
func TestDetachHasNoNotation(t *testing.T) {
	s, err := Read(bytes.NewReader(newKey(t)), "test")
	if err != nil {
		t.Fatal(err)
	}
	sig, err := s.Detach(strings.NewReader("{}\n"))
	if err != nil {
		t.Fatal(err)
	}
	block, err := armor.Decode(bytes.NewReader(sig))
	if err != nil {
		t.Fatal(err)
	}
	p, err := packet.Read(block.Body)
	if err != nil {
		t.Fatal(err)
	}
	sp, ok := p.(*packet.Signature)
	if !ok {
		t.Fatalf("packet is %T, not a signature", p)
	}
	for _, n := range sp.Notations {
		t.Errorf("notation %s (%d bytes)", n.Name, len(n.Value))
	}
}
