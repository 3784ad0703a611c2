package rpmfile

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
)

const (
	pgpTagSignature      = 2
	subIssuerKeyID       = 16
	subIssuerFingerprint = 33
)

var errShort = errors.New("packet too short")

// readKeyIDs collects the issuer key IDs of every OpenPGP signature in the signature
// header's DSA/RSA/PGP/GPG/OpenPGP tags and the main header's DSA/RSA/OpenPGP tags.
func readKeyIDs(sig, h *header) ([]string, error) {
	var ids []string
	add := func(hd *header, tag uint32, raw string) error {
		got, err := signatureKeyIDs([]byte(raw))
		if err != nil {
			e := hd.find(tag)
			return corrupt(hd.sect, hd.dataOffset(e.off), tag, "bad OpenPGP signature: %v", err)
		}
		ids = append(ids, got...)
		return nil
	}
	for _, src := range []struct {
		h    *header
		tags []uint32
	}{{sig, []uint32{sigDSA, sigRSA, sigPGP, sigGPG}}, {h, []uint32{tagDSAHeader, tagRSAHeader}}} {
		for _, tag := range src.tags {
			b, ok, err := src.h.bin(tag)
			if err != nil {
				return nil, err
			}
			if ok {
				if err := add(src.h, tag, b); err != nil {
					return nil, err
				}
			}
		}
	}
	// rpm 6 keeps any number of signatures, each base64 text, in the OpenPGP tag.
	for _, hd := range []*header{sig, h} {
		list, err := hd.strs(sigOpenPGP)
		if err != nil {
			return nil, err
		}
		for _, s := range list {
			raw, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				e := hd.find(sigOpenPGP)
				return nil, corrupt(hd.sect, hd.dataOffset(e.off), sigOpenPGP, "bad base64 signature: %v", err)
			}
			if err := add(hd, sigOpenPGP, string(raw)); err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// signatureKeyIDs returns the issuer key ID of each signature packet in b.
func signatureKeyIDs(b []byte) ([]string, error) {
	var ids []string
	for len(b) > 0 {
		tag, body, rest, err := nextPacket(b)
		if err != nil {
			return nil, err
		}
		b = rest
		if tag != pgpTagSignature {
			continue
		}
		id, err := issuer(body)
		if err != nil {
			return nil, err
		}
		if id != nil {
			ids = append(ids, hex.EncodeToString(id))
		}
	}
	return ids, nil
}

// nextPacket splits off the first OpenPGP packet (RFC 9580 section 4.2).
func nextPacket(b []byte) (tag byte, body, rest []byte, err error) {
	if b[0]&0x80 == 0 {
		return 0, nil, nil, fmt.Errorf("bad packet header byte %#x", b[0])
	}
	var n, hl int
	if b[0]&0x40 != 0 { // new format
		tag = b[0] & 0x3f
		if len(b) < 2 {
			return 0, nil, nil, errShort
		}
		switch l := int(b[1]); {
		case l < 192:
			n, hl = l, 2
		case l < 224:
			if len(b) < 3 {
				return 0, nil, nil, errShort
			}
			n, hl = (l-192)<<8+int(b[2])+192, 3
		case l == 255:
			if len(b) < 6 {
				return 0, nil, nil, errShort
			}
			n, hl = int(binary.BigEndian.Uint32(b[2:6])), 6
		default:
			return 0, nil, nil, errors.New("partial body length in a signature")
		}
	} else { // old format
		tag = (b[0] >> 2) & 0xf
		switch b[0] & 3 {
		case 0:
			if len(b) < 2 {
				return 0, nil, nil, errShort
			}
			n, hl = int(b[1]), 2
		case 1:
			if len(b) < 3 {
				return 0, nil, nil, errShort
			}
			n, hl = int(binary.BigEndian.Uint16(b[1:3])), 3
		case 2:
			if len(b) < 5 {
				return 0, nil, nil, errShort
			}
			n, hl = int(binary.BigEndian.Uint32(b[1:5])), 5
		default:
			n, hl = len(b)-1, 1 // indeterminate: the rest
		}
	}
	if n < 0 || n > len(b)-hl {
		return 0, nil, nil, fmt.Errorf("packet length %d past the end of %d bytes", n, len(b)-hl)
	}
	return tag, b[hl : hl+n], b[hl+n:], nil
}

// issuer returns the key ID of a signature packet body: for v3 the key ID field, for v4
// and v6 the issuer key ID subpacket or, failing that, the issuer fingerprint subpacket
// (the low 8 bytes of a v4 fingerprint, the high 8 bytes of a v5 or v6 one). nil when the
// signature names no issuer.
func issuer(b []byte) ([]byte, error) {
	if len(b) < 1 {
		return nil, errShort
	}
	switch v := b[0]; v {
	case 3:
		// version, hashed length (5), type, time (4), key ID (8), ...
		if len(b) < 15 || b[1] != 5 {
			return nil, errors.New("bad v3 signature")
		}
		return b[7:15], nil
	case 4, 6:
		// version, type, public-key algorithm, hash algorithm, then the hashed and the
		// unhashed subpacket areas, each after a 2-byte (v4) or 4-byte (v6) length.
		if len(b) < 4 {
			return nil, errShort
		}
		lenSize := 2
		if v == 6 {
			lenSize = 4
		}
		p := b[4:]
		var fromKeyID, fromFpr []byte
		for range 2 {
			if len(p) < lenSize {
				return nil, errShort
			}
			var n int
			if lenSize == 2 {
				n = int(binary.BigEndian.Uint16(p))
			} else {
				n = int(binary.BigEndian.Uint32(p))
			}
			p = p[lenSize:]
			if n < 0 || n > len(p) {
				return nil, fmt.Errorf("subpacket area of %d bytes past the end of %d", n, len(p))
			}
			kid, fpr, err := subpackets(p[:n])
			if err != nil {
				return nil, err
			}
			if fromKeyID == nil {
				fromKeyID = kid
			}
			if fromFpr == nil {
				fromFpr = fpr
			}
			p = p[n:]
		}
		if fromKeyID != nil {
			return fromKeyID, nil
		}
		return fromFpr, nil
	default:
		if len(b) < 4 {
			return nil, errShort
		}
		return nil, fmt.Errorf("unsupported signature version %d", v)
	}
}

// subpackets finds the issuer key ID and the key ID of the issuer fingerprint in a
// subpacket area (RFC 9580 section 5.2.3.7).
func subpackets(p []byte) (keyID, fprID []byte, err error) {
	for len(p) > 0 {
		var n, hl int
		switch l := int(p[0]); {
		case l < 192:
			n, hl = l, 1
		case l < 255:
			if len(p) < 2 {
				return nil, nil, errShort
			}
			n, hl = (l-192)<<8+int(p[1])+192, 2
		default:
			if len(p) < 5 {
				return nil, nil, errShort
			}
			n, hl = int(binary.BigEndian.Uint32(p[1:5])), 5
		}
		if n < 1 || n > len(p)-hl {
			return nil, nil, fmt.Errorf("subpacket length %d out of range", n)
		}
		sp := p[hl : hl+n]
		p = p[hl+n:]
		data := sp[1:]
		switch sp[0] & 0x7f {
		case subIssuerKeyID:
			if len(data) != 8 {
				return nil, nil, fmt.Errorf("issuer key ID of %d bytes", len(data))
			}
			keyID = data
		case subIssuerFingerprint:
			switch {
			case len(data) == 21 && data[0] == 4:
				fprID = data[13:21]
			case len(data) == 33 && (data[0] == 5 || data[0] == 6):
				fprID = data[1:9]
			case len(data) == 0:
				return nil, nil, errors.New("empty issuer fingerprint")
			default:
				return nil, nil, fmt.Errorf("issuer fingerprint of %d bytes, version %d", len(data), data[0])
			}
		}
	}
	return keyID, fprID, nil
}
