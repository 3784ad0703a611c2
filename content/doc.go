// Package content is the seam between pith and its content types, and what they share.
//
// A content type (content/file, content/rpm) implements Type: it declares its kinds
// (units, repositories, remotes, publications, distributions) with their REST shapes,
// filters and renderers on the API's table, and gives its task functions. Optional
// capabilities are found by type assertion: Autopublisher, DistributionFiles, Router.
// cmd/pith lists the types a process serves and registers them on a Core; the api and
// serve packages range over the Core's registry and never name a type.
//
// Core holds what every type uses at run time and the generic repository-version
// behaviour: a new version is reported, autopublished and trimmed by
// retain_repo_versions whoever made it (VersionMade); modify, version deletion, repair,
// orphan cleanup, task purge and the upload tasks run here for every type. Beside it:
// the rules for a unit's relative path, remote → downloader settings, verified downloads
// into the blob store (FetchBlob, Core.FetchTemp, bounded), Parallel and Refetch.
//
// Content types import content, meta, blob, task and the API toolkits (api/rest,
// api/href, api/openapi); never api or serve.
package content
