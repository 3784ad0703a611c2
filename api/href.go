package api

import (
	"context"
	"pith/meta"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// apiPath is the root of every href.
const apiPath = "/pulp/api/v3/"

// plural maps a content unit type label ("file.file") to its href segment ("file/files").
var unitSegment = map[string]string{
	"file.file":              "file/files",
	"rpm.package":            "rpm/packages",
	"rpm.advisory":           "rpm/advisories",
	"rpm.packagegroup":       "rpm/packagegroups",
	"rpm.packagecategory":    "rpm/packagecategories",
	"rpm.packageenvironment": "rpm/packageenvironments",
	"rpm.packagelangpacks":   "rpm/packagelangpacks",
	"rpm.modulemd":           "rpm/modulemds",
	"rpm.modulemd_defaults":  "rpm/modulemd_defaults",
	"rpm.modulemd_obsolete":  "rpm/modulemd_obsoletes",
	"rpm.distribution_tree":  "rpm/distribution_trees",
	"rpm.repo_metadata_file": "rpm/repo_metadata_files",
}

// typeSegment maps a repository/remote/publication/distribution type ("file.file") to its
// href segment ("file/file").
func typeSegment(t string) string { return strings.Replace(t, ".", "/", 1) }

func repoHref(typ, id string) string {
	return apiPath + "repositories/" + typeSegment(typ) + "/" + id + "/"
}
func remoteHref(typ, id string) string {
	return apiPath + "remotes/" + typeSegment(typ) + "/" + id + "/"
}
func pubHref(typ, id string) string {
	return apiPath + "publications/" + typeSegment(typ) + "/" + id + "/"
}
func distHref(typ, id string) string {
	return apiPath + "distributions/" + typeSegment(typ) + "/" + id + "/"
}
func versionHref(repoType, repoID string, n int64) string {
	return repoHref(repoType, repoID) + "versions/" + strconv.FormatInt(n, 10) + "/"
}
func contentHref(typ, id string) string {
	return apiPath + "content/" + unitSegment[typ] + "/" + id + "/"
}
func artifactHref(id string) string { return apiPath + "artifacts/" + id + "/" }
func uploadHref(id string) string   { return apiPath + "uploads/" + id + "/" }
func taskHref(id string) string     { return apiPath + "tasks/" + id + "/" }
func scheduleHref(id string) string { return apiPath + "task-schedules/" + id + "/" }
func groupHref(id string) string    { return apiPath + "task-groups/" + id + "/" }
func workerHref(id string) string   { return apiPath + "workers/" + id + "/" }

// prn is Pulp's resource name: prn:<app>.<model>:<uuid>.
func prn(model, id string) string { return "prn:" + model + ":" + id }

// hrefParts is a parsed href: the collection path ("repositories/file/file/"), the
// UUID and what follows it ("versions/3/").
type hrefParts struct {
	collection string
	id         string
	rest       string
}

// parseHref splits an href (or a full URL ending in one) into its parts. ok is false for
// anything that isn't an href of this API with a UUID.
func parseHref(h string) (hrefParts, bool) {
	if i := strings.Index(h, apiPath); i >= 0 {
		h = h[i+len(apiPath):]
	} else {
		return hrefParts{}, false
	}
	segs := strings.Split(strings.TrimSuffix(h, "/"), "/")
	for i, s := range segs {
		if _, err := uuid.Parse(s); err == nil && len(s) == 36 {
			return hrefParts{
				collection: strings.Join(segs[:i], "/") + "/",
				id:         s,
				rest:       strings.Join(segs[i+1:], "/"),
			}, true
		}
	}
	return hrefParts{}, false
}

// hrefOf parses an href expected to name a resource in the given collection
// ("repositories/file/file/"); rest must be empty.
func hrefOf(field, h, collection string) (string, error) {
	p, ok := parseHref(h)
	if !ok || p.collection != collection || p.rest != "" {
		return "", badField(field, "Invalid hyperlink - No URL match for %q.", h)
	}
	return p.id, nil
}

// repositoryOf finds the repository a body's field names (an href in collection, e.g.
// "repositories/rpm/rpm/"); a bad href or a missing repository is a 400 on field.
func repositoryOf(ctx context.Context, q meta.Querier, field, h, collection string) (*meta.Repository, error) {
	id, err := hrefOf(field, h, collection)
	if err != nil {
		return nil, err
	}
	repo, err := meta.RepositoryByPulpID(ctx, q, id)
	if err != nil {
		return nil, badField(field, "Invalid hyperlink - Object does not exist.")
	}
	return &repo, nil
}

// versionOf parses a repository version href.
func versionOf(field, h, collection string) (string, int64, error) {
	p, ok := parseHref(h)
	if ok && p.collection == collection && strings.HasPrefix(p.rest, "versions/") {
		if n, err := strconv.ParseInt(strings.TrimPrefix(p.rest, "versions/"), 10, 64); err == nil && n >= 0 {
			return p.id, n, nil
		}
	}
	return "", 0, badField(field, "Invalid hyperlink - No URL match for %q.", h)
}
