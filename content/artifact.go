package content

import (
	"pith/blob"
	"pith/meta"
)

// Artifact is the metadata row of a stored blob: its size and the digests the store
// recorded (the others stay NULL, as Pulp leaves forbidden checksums empty).
func Artifact(d blob.Digests) meta.Artifact {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return meta.Artifact{Size: d.Size, MD5: opt(d.MD5), SHA1: opt(d.SHA1), SHA224: opt(d.SHA224), SHA256: d.SHA256, SHA384: opt(d.SHA384), SHA512: opt(d.SHA512)}
}
