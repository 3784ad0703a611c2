package rpmfile

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func hexBytes(s string) []byte {
	b := make([]byte, len(s)/2)
	for i := range b {
		b[i] = byte(strings.IndexByte("0123456789abcdef", s[2*i])<<4 | strings.IndexByte("0123456789abcdef", s[2*i+1]))
	}
	return b
}

// sigV3 is an old-format v3 signature packet by keyID.
func sigV3(keyID string) []byte {
	body := []byte{3, 5, 0, 1, 2, 3, 4}
	body = append(body, hexBytes(keyID)...)
	body = append(body, 1, 8, 0xab, 0xcd, 0, 8, 0xff)
	return append([]byte{0x80 | pgpTagSignature<<2, byte(len(body))}, body...)
}

func subpacket(typ byte, data []byte) []byte {
	return append([]byte{byte(len(data) + 1), typ}, data...)
}

// sigV4 is a new-format v4 signature packet with the given hashed and unhashed
// subpackets, its length in the two-byte form when long is set.
func sigV4(hashed, unhashed []byte, long bool) []byte {
	body := []byte{4, 0, 1, 8}
	body = binary.BigEndian.AppendUint16(body, uint16(len(hashed)))
	body = append(body, hashed...)
	body = binary.BigEndian.AppendUint16(body, uint16(len(unhashed)))
	body = append(body, unhashed...)
	body = append(body, 0xab, 0xcd, 0, 8, 0xff)
	if long {
		body = append(body, make([]byte, 200)...)
		n := len(body) - 192
		return append([]byte{0xc0 | pgpTagSignature, byte(n>>8) + 192, byte(n)}, body...)
	}
	return append([]byte{0xc0 | pgpTagSignature, byte(len(body))}, body...)
}

// sigV6 is an RFC 9580 v6 signature packet whose issuer is a v6 fingerprint.
func sigV6(fpr []byte) []byte {
	hashed := subpacket(subIssuerFingerprint, append([]byte{6}, fpr...))
	body := []byte{6, 0, 27, 10}
	body = binary.BigEndian.AppendUint32(body, uint32(len(hashed)))
	body = append(body, hashed...)
	body = binary.BigEndian.AppendUint32(body, 0)
	body = append(body, 0xab, 0xcd, 16)
	body = append(body, make([]byte, 16+64)...)
	return append([]byte{0xc0 | pgpTagSignature, 0xff, 0, 0, 0, byte(len(body))}, body...)
}

func TestKeyIDs(t *testing.T) {
	t.Parallel()
	fpr4 := hexBytes("d888bf9469701ec37d429716183f6899719ce7a5")
	fpr6 := hexBytes("cb186c4f0609a697e4d52dfa6c722b0c1f1e27c18a56708f6525ec27bad9acc9")
	b64 := base64.StdEncoding.EncodeToString
	sig := sigMinimal(
		tBin(sigRSA, sigV3("0123456789abcdef")),
		tBin(sigPGP, sigV3("0123456789abcdef")),
		tStrs(sigOpenPGP, b64(sigV4(subpacket(subIssuerFingerprint, append([]byte{4}, fpr4...)), nil, false)),
			b64(sigV6(fpr6))),
	)
	hdr := minimal(
		tBin(tagRSAHeader, sigV4(nil, subpacket(subIssuerKeyID, hexBytes("1111222233334444")), true)),
		tStrs(tagOpenPGP, b64(sigV4(subpacket(2, []byte{1, 2, 3, 4}), nil, false))), // no issuer
	)
	h := readBytes(t, rpmBytes(sig, hdr))
	want := []string{"0123456789abcdef", "1111222233334444", "183f6899719ce7a5", "cb186c4f0609a697"}
	if d := cmp.Diff(want, h.KeyIDs); d != "" {
		t.Error(d)
	}

	for name, c := range map[string]struct {
		sig []tent
		msg string
	}{
		"truncated packet":    {sigMinimal(tBin(sigRSA, sigV3("0123456789abcdef")[:10])), "packet length"},
		"not a packet":        {sigMinimal(tBin(sigGPG, []byte{0x00, 1, 2})), "bad packet header"},
		"unsupported version": {sigMinimal(tBin(sigDSA, []byte{0xc2, 5, 5, 0, 1, 8, 0})), "unsupported signature version 5"},
		"partial length":      {sigMinimal(tBin(sigRSA, []byte{0xc2, 0xe1, 4})), "partial body length"},
		"bad subpacket": {sigMinimal(tBin(sigRSA, sigV4(subpacket(subIssuerKeyID, []byte{1, 2}), nil, false))),
			"issuer key ID of 2 bytes"},
		"bad base64": {sigMinimal(tStrs(sigOpenPGP, "!!!")), "bad base64"},
		"wrong type": {sigMinimal(tI32(sigRSA, 1)), "type int32, want bin"},
	} {
		_, err := Read(bytes.NewReader(rpmBytes(c.sig, minimal())))
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrCorrupt) || e.Section != SectionSignature || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want a signature header error about %q", name, err, c.msg)
		}
	}
}

// TestTroutKeyID: the zoo's one signed package, RSA/SHA1.
func TestTroutKeyID(t *testing.T) {
	t.Parallel()
	h := readFile(t, zooDir+"/trout-0.12-1.noarch.rpm")
	if d := cmp.Diff([]string{"ef85cce3f78fb195"}, h.KeyIDs); d != "" {
		t.Error(d)
	}
}
