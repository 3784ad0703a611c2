// Package href formats and parses the hrefs of the Pulp API: host-less paths under
// /pulp/api/v3/ ending in "/", with the resource's UUID as the last segment but one
// (or before a sub-path such as versions/3/). The API and every content type use it, so
// an href is spelled in one place.
package href

import (
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Root is the root of every href.
const Root = "/pulp/api/v3/"

// Segment is the href segment of a repository, remote, publication or distribution type:
// "file.file" → "file/file", "ansible.collection" → "ansible/collection".
func Segment(typ string) string { return strings.Replace(typ, ".", "/", 1) }

// Repository is the href of a repository of type typ.
func Repository(typ, id string) string { return Root + "repositories/" + Segment(typ) + "/" + id + "/" }

// Remote is the href of a remote of type typ.
func Remote(typ, id string) string { return Root + "remotes/" + Segment(typ) + "/" + id + "/" }

// Publication is the href of a publication of type typ.
func Publication(typ, id string) string {
	return Root + "publications/" + Segment(typ) + "/" + id + "/"
}

// Distribution is the href of a distribution of type typ.
func Distribution(typ, id string) string {
	return Root + "distributions/" + Segment(typ) + "/" + id + "/"
}

// ACS is the href of an alternate content source of type typ.
func ACS(typ, id string) string { return Root + "acs/" + Segment(typ) + "/" + id + "/" }

// Version is the href of version n of a repository.
func Version(repoType, repoID string, n int64) string {
	return Repository(repoType, repoID) + "versions/" + strconv.FormatInt(n, 10) + "/"
}

// Content is the href of a unit whose kind lives under content/<segment>/ (segment
// "rpm/packages").
func Content(segment, id string) string { return Root + "content/" + segment + "/" + id + "/" }

// Artifact, Upload, Task, Schedule, Group, Worker and SigningService are the hrefs of
// the core resources.
func Artifact(id string) string       { return Root + "artifacts/" + id + "/" }
func Upload(id string) string         { return Root + "uploads/" + id + "/" }
func Task(id string) string           { return Root + "tasks/" + id + "/" }
func Schedule(id string) string       { return Root + "task-schedules/" + id + "/" }
func Group(id string) string          { return Root + "task-groups/" + id + "/" }
func Worker(id string) string         { return Root + "workers/" + id + "/" }
func SigningService(id string) string { return Root + "signing-services/" + id + "/" }

// PRN is Pulp's resource name: prn:<app>.<model>:<uuid>.
func PRN(model, id string) string { return "prn:" + model + ":" + id }

// Parts is a parsed href: the collection path ("repositories/file/file/"), the UUID and
// what follows it ("versions/3").
type Parts struct {
	Collection string
	ID         string
	Rest       string
}

// Parse splits an href (or a full URL ending in one) into its parts. ok is false for
// anything that isn't an href of this API with a UUID.
func Parse(h string) (Parts, bool) {
	i := strings.Index(h, Root)
	if i < 0 {
		return Parts{}, false
	}
	h = h[i+len(Root):]
	segs := strings.Split(strings.TrimSuffix(h, "/"), "/")
	for i, s := range segs {
		if len(s) == 36 {
			if _, err := uuid.Parse(s); err == nil {
				return Parts{Collection: strings.Join(segs[:i], "/") + "/", ID: s, Rest: strings.Join(segs[i+1:], "/")}, true
			}
		}
	}
	return Parts{}, false
}

// VersionNumber is the number of a version href's rest ("versions/3"); ok is false for
// any other rest.
func (p Parts) VersionNumber() (int64, bool) {
	s, ok := strings.CutPrefix(p.Rest, "versions/")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n >= 0
}
