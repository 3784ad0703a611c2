package file

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"pith/content"
	"pith/content/download"
	"pith/meta"
	"pith/secret"
)

// Git LFS, as pulp_file resolves it: a file of the tree under 1 KiB that is exactly an
// LFS pointer (its version, its object's sha256 and size) becomes a unit holding the
// object the repository's LFS server gives for it. The objects are asked for in batch
// requests (POST <url>[.git]/info/lfs/objects/batch, operation download, transfer
// basic), 100 a request as git-lfs asks, with the remote's settings and credentials;
// each is then downloaded from the href the answer gives, with the headers it gives
// (sent to that href's host, as git-lfs sends them), and verified against the
// pointer's sha256 and size. One already stored is not downloaded again. Unlike
// pulp_file, two paths pointing at the same object both get it, an object the answer
// leaves out fails the sync naming its path, and the objects together are bounded as
// the tree's files are (GitLimits.Checkout, 4 GiB by default).

// lfsPointer is a pointer file as git-lfs writes it (pulp_file accepts only this form).
var lfsPointer = regexp.MustCompile(`^version https://git-lfs\.github\.com/spec/v1\noid sha256:([0-9a-f]{64})\nsize ([0-9]+)\n$`)

// Bounds of the LFS exchange.
const (
	maxLFSPointer = 1024     // bytes of a file read as a possible pointer
	lfsBatch      = 100      // objects asked for in one batch request
	maxLFSAnswer  = 16 << 20 // bytes of one batch answer
	lfsMediaType  = "application/vnd.git-lfs+json"
)

// lfsObject is an object pointers of the tree name.
type lfsObject struct {
	oid   string
	size  int64
	paths []string
}

// lfsPointers collects the tree's pointers by object.
type lfsPointers struct {
	objects []*lfsObject
	byOID   map[string]*lfsObject
}

// add records path when data is a pointer, and reports whether it was.
func (l *lfsPointers) add(path string, data []byte) bool {
	m := lfsPointer.FindSubmatch(data)
	if m == nil {
		return false
	}
	size, err := strconv.ParseInt(string(m[2]), 10, 64)
	if err != nil {
		return false // not a size git-lfs could have written: an ordinary file
	}
	oid := string(m[1])
	if l.byOID == nil {
		l.byOID = map[string]*lfsObject{}
	}
	o := l.byOID[oid]
	if o == nil {
		o = &lfsObject{oid: oid, size: size}
		l.byOID[oid] = o
		l.objects = append(l.objects, o)
	}
	if o.size != size {
		return false // two pointers disagree on the object's size: keep this one as it is
	}
	o.paths = append(o.paths, path)
	return true
}

// lfsBatchURL is the LFS API's batch endpoint of a git URL (git-lfs's default).
func lfsBatchURL(gitURL string) string {
	u := strings.TrimRight(gitURL, "/")
	if !strings.HasSuffix(u, ".git") {
		u += ".git"
	}
	return u + "/info/lfs/objects/batch"
}

type lfsAnswer struct {
	Objects []struct {
		OID     string `json:"oid"`
		Size    int64  `json:"size"`
		Actions *struct {
			Download *struct {
				Href   string            `json:"href"`
				Header map[string]string `json:"header"`
			} `json:"download"`
		} `json:"actions"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"objects"`
}

// resolveLFS stores the objects of the tree's pointers, budget bytes at most, and
// returns an entry for each path that pointed at one.
func (p *Plugin) resolveLFS(ctx context.Context, remote meta.Remote, ptrs *lfsPointers, budget int64, stored func()) ([]*entryResult, error) {
	if len(ptrs.objects) == 0 {
		return nil, nil
	}
	for _, o := range ptrs.objects {
		if budget -= o.size; budget < 0 {
			return nil, fmt.Errorf("Git LFS: the objects the tree points at are more than its bound of bytes (at %s)", o.paths[0])
		}
	}
	d, err := content.Downloader(remote)
	if err != nil {
		return nil, err
	}
	defer d.CloseIdleConnections()
	batch := lfsBatchURL(remote.URL)
	var out []*entryResult
	for part := range slices.Chunk(ptrs.objects, lfsBatch) {
		hrefs, err := p.lfsHrefs(ctx, d, batch, part)
		if err != nil {
			return nil, err
		}
		for _, o := range part {
			art, err := p.lfsObject(ctx, d, o, hrefs[o.oid])
			if err != nil {
				return nil, fmt.Errorf("Git LFS object of %s: %w", o.paths[0], err)
			}
			for _, path := range o.paths {
				out = append(out, &entryResult{Entry: Entry{RelativePath: path, Digest: o.oid, Size: o.size}, artifact: art})
				stored()
			}
		}
	}
	return out, nil
}

// lfsDownload is where an object is downloaded from.
type lfsDownload struct {
	href   string
	header map[string]string
}

// lfsHrefs asks the batch API for the objects and returns where each is downloaded
// from, by sha256.
func (p *Plugin) lfsHrefs(ctx context.Context, d *download.Downloader, batch string, objs []*lfsObject) (map[string]lfsDownload, error) {
	type ref struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	}
	req := struct {
		Operation string   `json:"operation"`
		Transfers []string `json:"transfers"`
		Objects   []ref    `json:"objects"`
	}{Operation: "download", Transfers: []string{"basic"}}
	for _, o := range objs {
		req.Objects = append(req.Objects, ref{o.oid, o.size})
	}
	asked := map[string]*lfsObject{}
	for _, o := range objs {
		asked[o.oid] = o
	}
	body, _ := json.Marshal(req)
	resp, err := d.Do(ctx, batch, download.Request{Method: "POST", Body: body, Header: map[string]string{"Content-Type": lfsMediaType, "Accept": lfsMediaType}})
	if err != nil {
		return nil, fmt.Errorf("Git LFS batch request to %s: %w", secret.Redact(batch), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxLFSAnswer+1))
	if err == nil && len(raw) > maxLFSAnswer {
		err = fmt.Errorf("answer larger than %d MiB", maxLFSAnswer>>20)
	}
	var a lfsAnswer
	if err == nil {
		err = json.NewDecoder(bytes.NewReader(raw)).Decode(&a)
	}
	if err != nil {
		return nil, fmt.Errorf("Git LFS batch answer of %s: %w", secret.Redact(batch), err)
	}
	got := map[string]lfsDownload{}
	for _, x := range a.Objects {
		o := asked[x.OID]
		switch {
		case o == nil:
			continue // not asked for
		case x.Error != nil:
			return nil, fmt.Errorf("Failed to resolve LFS blob '%s': %d %s", o.paths[0], x.Error.Code, x.Error.Message)
		case x.Actions == nil || x.Actions.Download == nil:
			return nil, fmt.Errorf("Failed to resolve LFS blob '%s': the LFS server gave no download for it", o.paths[0])
		}
		h, err := url.Parse(x.Actions.Download.Href)
		if err != nil || (h.Scheme != "https" && h.Scheme != "http") || h.Host == "" {
			return nil, fmt.Errorf("Failed to resolve LFS blob '%s': the LFS server's href %q is not an http or https URL", o.paths[0], secret.Redact(x.Actions.Download.Href))
		}
		got[x.OID] = lfsDownload{href: x.Actions.Download.Href, header: x.Actions.Download.Header}
	}
	for _, o := range objs {
		if _, ok := got[o.oid]; !ok {
			return nil, fmt.Errorf("Failed to resolve LFS blob '%s': the LFS server's answer leaves out its object %s", o.paths[0], o.oid)
		}
	}
	return got, nil
}

// lfsObject stores an object (or finds it stored), verified against its pointer.
func (p *Plugin) lfsObject(ctx context.Context, d *download.Downloader, o *lfsObject, dl lfsDownload) (*meta.Artifact, error) {
	if art, err := p.stored(ctx, o.oid); art != nil || err != nil {
		return art, err
	}
	body, _, err := d.OpenRequest(ctx, dl.href, download.Request{Header: dl.header}, download.Expect{Size: o.size, SHA256: o.oid})
	if err != nil {
		return nil, err
	}
	defer body.Close()
	art, err := content.StoreFrom(ctx, p.core.Store, body, o.oid)
	return &art, err
}
