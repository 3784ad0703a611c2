// Package testgalaxy is a Galaxy server for tests, on 127.0.0.1 until the test ends. It
// speaks what the real clients of a Galaxy read:
//   - the v1 roles API (`/api/v1/roles/`, `/api/v1/roles/<id>/`, `/api/v1/roles/<id>/versions/`)
//     in the shape of galaxy.ansible.com, which pulp_ansible's role remote syncs from and
//     `ansible-galaxy role install` reads; and the role archives at the GitHub-shaped paths
//     `/<github_user>/<github_repo>/archive/<version>.tar.gz` that Galaxy's role data points
//     at (Server.URL stands in for https://github.com), made by RoleArchive, never checked in;
//   - the v3 collections API `ansible-galaxy collection install|download|verify|publish` uses:
//     the API root, collections, paged versions, version detail with download URL and
//     signatures, the artifact download, the publish endpoint (a multipart body whose file
//     part is base64) and its import task.
//
// Every request is recorded (Requests) so tests can say what a client asked for; README.md
// beside this file lists what ansible-galaxy 2.19 and pulp_ansible 0.30.3 request.
//
// Invariants: every input is bounded (path and query lengths, page sizes, the publish
// body, the number of stored collections and recorded requests); bad input is a 4xx with
// Galaxy's error shape and changes nothing; an upload is checked as an import would
// (content/ansible/collection.Read, the sha256 part, the same version twice). The server
// keeps everything in memory: it is for tests, not a Galaxy.
package testgalaxy
