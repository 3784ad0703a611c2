#!/usr/bin/env python3
"""Katello-style flow that drives a Pulp 3 API server only through the generated
Python bindings (pulpcore-client, pulp-file-client, pulp-rpm-client).

Every call goes through the bindings' API classes and every response is
deserialized into the bindings' models (pydantic), exactly as Katello does it. The
script prints each step and stops with a non-zero exit status at the first failure,
printing the exception, the HTTP body the server answered and the request the
binding sent.

Usage (see README.md beside this file):

    flow.py --base-url http://127.0.0.1:24817 --username admin --password password \
            --upstream http://127.0.0.1:8000

or the environment variables PITH_BASE_URL, PITH_USERNAME, PITH_PASSWORD and
PITH_UPSTREAM. The upstream is an HTTP server whose root holds the shared test data
(`python3 -m http.server --directory shared/data`): yum-katello/zoo/ (a yum
repository), yum-katello/file1/ (a file repository with PULP_MANIFEST) and
rpm-edge-cases/packages/*.rpm (packages to upload).
"""

import argparse
import http.server
import hashlib
import json
import os
import sys
import threading
import time
import traceback
import urllib.request
import uuid

import pydantic

from pulpcore.client import pulpcore as core
from pulpcore.client import pulp_file as pfile
from pulpcore.client import pulp_rpm as prpm


# --------------------------------------------------------------------------- plumbing

class StepFailed(Exception):
    pass


class Recorder:
    """Wraps each ApiClient.call_api to keep the last exchanges (request and answer),
    so that a failure can show what the binding sent and what the server said."""

    def __init__(self, keep=6):
        self.keep = keep
        self.exchanges = []

    def wrap(self, api_client):
        original = api_client.call_api

        def call_api(method, url, header_params=None, body=None, post_params=None,
                     _request_timeout=None):
            entry = {"method": method, "url": url, "body": body,
                     "post_params": _describe_post_params(post_params)}
            self.exchanges.append(entry)
            del self.exchanges[:-self.keep]
            try:
                response = original(method, url, header_params=header_params, body=body,
                                    post_params=post_params,
                                    _request_timeout=_request_timeout)
            except Exception as exc:  # connection errors
                entry["error"] = repr(exc)
                raise
            entry["status"] = response.status
            try:
                entry["response"] = response.read()
            except Exception as exc:  # pragma: no cover
                entry["response"] = "<unreadable: %r>" % exc
            return response

        api_client.call_api = call_api

    def dump(self, last=3, limit=4000):
        out = []
        for e in self.exchanges[-last:]:
            out.append("  -> %s %s" % (e["method"], e["url"]))
            if e.get("body") is not None:
                out.append("     body: %s" % _clip(json.dumps(e["body"], default=str), limit))
            if e.get("post_params"):
                out.append("     form: %s" % _clip(str(e["post_params"]), limit))
            if "error" in e:
                out.append("  <- error %s" % e["error"])
            else:
                data = e.get("response")
                if isinstance(data, bytes):
                    data = data.decode("utf-8", "replace")
                out.append("  <- %s %s" % (e.get("status"), _clip(str(data), limit)))
        return "\n".join(out)


def _describe_post_params(post_params):
    if not post_params:
        return None
    out = []
    for k, v in post_params:
        if isinstance(v, tuple) and len(v) >= 2 and isinstance(v[1], (bytes, bytearray)):
            out.append((k, "<file %s, %d bytes>" % (v[0], len(v[1]))))
        elif isinstance(v, (bytes, bytearray)):
            out.append((k, "<%d bytes>" % len(v)))
        else:
            out.append((k, v))
    return out


def _clip(s, limit):
    return s if len(s) <= limit else s[:limit] + "... (%d more characters)" % (len(s) - limit)


class StallingUpstream:
    """An HTTP server that holds every request without answering until closed: a sync
    from it stays running, so that it can be canceled."""

    def __init__(self, listen):
        host, _, port = listen.rpartition(":")
        release = threading.Event()
        self.release = release

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                release.wait(600)
                try:
                    self.send_response(404)
                    self.end_headers()
                except OSError:
                    pass

            do_HEAD = do_GET

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer((host or "127.0.0.1", int(port or 0)),
                                                      Handler)
        self.server.daemon_threads = True
        h, p = self.server.server_address[:2]
        self.url = "http://%s:%d/repo/" % (h, p)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def check(cond, message):
    if not cond:
        raise StepFailed(message)


class Flow:
    def __init__(self, args):
        self.args = args
        self.base = args.base_url.rstrip("/")
        self.upstream = args.upstream.rstrip("/")
        self.suffix = args.suffix or uuid.uuid4().hex[:8]
        self.rec = Recorder()
        self.step_no = 0
        self.passed = []

        def client(pkg):
            conf = pkg.Configuration(host=self.base, username=args.username,
                                     password=args.password)
            c = pkg.ApiClient(conf)
            self.rec.wrap(c)
            return c

        self.core_client = client(core)
        self.file_client = client(pfile)
        self.rpm_client = client(prpm)
        cc, fc, rc = self.core_client, self.file_client, self.rpm_client

        # pulpcore
        self.status_api = core.StatusApi(cc)
        self.tasks_api = core.TasksApi(cc)
        self.uploads_api = core.UploadsApi(cc)
        self.artifacts_api = core.ArtifactsApi(cc)
        self.content_api = core.ContentApi(cc)
        self.repositories_api = core.RepositoriesApi(cc)
        self.repository_versions_api = core.RepositoryVersionsApi(cc)
        self.remotes_api = core.RemotesApi(cc)
        self.distributions_api = core.DistributionsApi(cc)
        self.publications_api = core.PublicationsApi(cc)
        self.orphans_cleanup_api = core.OrphansCleanupApi(cc)
        # pulp_rpm
        self.rpm_remotes = prpm.RemotesRpmApi(rc)
        self.rpm_repos = prpm.RepositoriesRpmApi(rc)
        self.rpm_versions = prpm.RepositoriesRpmVersionsApi(rc)
        self.rpm_publications = prpm.PublicationsRpmApi(rc)
        self.rpm_distributions = prpm.DistributionsRpmApi(rc)
        self.rpm_copy = prpm.RpmCopyApi(rc)
        self.rpm_packages = prpm.ContentPackagesApi(rc)
        self.rpm_advisories = prpm.ContentAdvisoriesApi(rc)
        self.rpm_modulemds = prpm.ContentModulemdsApi(rc)
        self.rpm_packagegroups = prpm.ContentPackagegroupsApi(rc)
        self.rpm_trees = prpm.ContentDistributionTreesApi(rc)
        self.rpm_metadata_files = prpm.ContentRepoMetadataFilesApi(rc)
        # pulp_file
        self.file_remotes = pfile.RemotesFileApi(fc)
        self.file_repos = pfile.RepositoriesFileApi(fc)
        self.file_versions = pfile.RepositoriesFileVersionsApi(fc)
        self.file_publications = pfile.PublicationsFileApi(fc)
        self.file_distributions = pfile.DistributionsFileApi(fc)
        self.file_content = pfile.ContentFilesApi(fc)

        self.s = {}  # state shared between steps

    # ------------------------------------------------------------------ helpers

    def name(self, what):
        return "bindings-%s-%s" % (what, self.suffix)

    def step(self, title, fn):
        self.step_no += 1
        label = "[%02d] %s" % (self.step_no, title)
        print(label + " ...", flush=True)
        t0 = time.monotonic()
        try:
            detail = fn()
        except Exception as exc:
            self.fail(label, exc)
        self.passed.append(title)
        print("     ok (%.2fs)%s" % (time.monotonic() - t0, (": " + detail) if detail else ""),
              flush=True)

    def fail(self, label, exc):
        print("\nFAILED %s" % label, flush=True)
        print("exception: %s" % type(exc).__module__ + "." + type(exc).__name__)
        if isinstance(exc, (core.ApiException, pfile.ApiException, prpm.ApiException)):
            print("status: %s %s" % (exc.status, exc.reason))
            body = exc.body if exc.body is not None else exc.data
            if isinstance(body, bytes):
                body = body.decode("utf-8", "replace")
            print("server body: %s" % body)
        elif isinstance(exc, pydantic.ValidationError):
            print("response did not deserialize into the model (%d errors):" % exc.error_count())
            for err in exc.errors()[:20]:
                print("  - %s: %s (input: %s)" % (
                    ".".join(str(x) for x in err["loc"]), err["msg"],
                    _clip(repr(err.get("input")), 200)))
        else:
            print("message: %s" % exc)
        print("last exchanges (binding request -> server answer):")
        print(self.rec.dump())
        if self.args.traceback:
            traceback.print_exc()
        print("\n%d steps passed before the failure." % len(self.passed))
        sys.exit(1)

    def wait(self, task_href, timeout=None):
        """Polls TasksApi.read until the task is final; returns the TaskResponse."""
        timeout = timeout or self.args.task_timeout
        deadline = time.monotonic() + timeout
        while True:
            task = self.tasks_api.read(task_href)
            if task.state in ("completed", "failed", "canceled", "skipped"):
                break
            check(time.monotonic() < deadline,
                  "task %s still %s after %ss" % (task_href, task.state, timeout))
            time.sleep(0.3)
        check(task.state == "completed",
              "task %s (%s) ended %s: %s" % (task_href, task.name, task.state, task.error))
        return task

    def wait_async(self, response):
        """Waits for the task of an AsyncOperationResponse."""
        check(isinstance(response, (core.AsyncOperationResponse, pfile.AsyncOperationResponse,
                                    prpm.AsyncOperationResponse)),
              "expected an AsyncOperationResponse, got %r" % (response,))
        return self.wait(response.task)

    @staticmethod
    def created(task, marker):
        hrefs = [h for h in (task.created_resources or []) if h and marker in h]
        check(hrefs, "task %s created no %s (created_resources=%r)"
              % (task.pulp_href, marker, task.created_resources))
        return hrefs[0]

    def fetch_upstream(self, path):
        with urllib.request.urlopen(self.upstream + "/" + path.lstrip("/"), timeout=60) as r:
            return r.read()

    def chunked_upload(self, data, chunk_size):
        """UploadsApi create, update per chunk, read; returns the upload href."""
        upload = self.uploads_api.create(core.Upload(size=len(data)))
        check(upload.pulp_href, "upload has no pulp_href")
        check(upload.size == len(data), "upload size %r != %d" % (upload.size, len(data)))
        n = 0
        for start in range(0, len(data), chunk_size):
            chunk = data[start:start + chunk_size]
            end = start + len(chunk) - 1
            resp = self.uploads_api.update(
                "bytes %d-%d/%d" % (start, end, len(data)), upload.pulp_href,
                ("chunk%d" % n, chunk), sha256=hashlib.sha256(chunk).hexdigest())
            check(resp.pulp_href == upload.pulp_href, "chunk answered for another upload")
            n += 1
        detail = self.uploads_api.read(upload.pulp_href)
        check(detail.size == len(data), "upload read: size %r" % detail.size)
        check(detail.chunks is not None and len(detail.chunks) == n,
              "upload read: %d chunks expected, got %r" % (n, detail.chunks))
        return upload.pulp_href, n

    def version_package_count(self, version_href):
        page = self.rpm_packages.list(repository_version=version_href, limit=1)
        return page.count

    # ------------------------------------------------------------------ core

    def core_steps(self):
        def status():
            st = self.status_api.status_read()
            versions = {v.component: v.version for v in st.versions}
            check("core" in versions and "rpm" in versions and "file" in versions,
                  "status lacks core/rpm/file: %r" % versions)
            return "versions %s" % versions
        self.step("StatusApi.status_read", status)

        def tasks_list():
            page = self.tasks_api.list(limit=5)
            check(page.count is not None, "no count")
            return "%d tasks" % page.count
        self.step("TasksApi.list", tasks_list)

    # ------------------------------------------------------------------ rpm

    def rpm_steps(self):
        s = self.s
        url = self.upstream + "/" + self.args.rpm_path.strip("/") + "/"

        def remotes_create():
            r1 = self.rpm_remotes.create(prpm.RpmRpmRemote(
                name=self.name("rpm-immediate"), url=url, policy="immediate"))
            r2 = self.rpm_remotes.create(prpm.RpmRpmRemote(
                name=self.name("rpm-on-demand"), url=url, policy="on_demand"))
            check(r1.policy == "immediate" and r2.policy == "on_demand",
                  "policies %r %r" % (r1.policy, r2.policy))
            s["remote_immediate"], s["remote_on_demand"] = r1.pulp_href, r2.pulp_href
            s["remote_immediate_prn"] = r1.prn
            return "%s, %s" % (r1.pulp_href, r2.pulp_href)
        self.step("RemotesRpmApi.create (immediate and on_demand)", remotes_create)

        def remotes_read_list():
            r = self.rpm_remotes.read(s["remote_immediate"])
            check(r.url == url, "url %r" % r.url)
            page = self.rpm_remotes.list(name=self.name("rpm-on-demand"))
            check(page.count == 1 and page.results[0].pulp_href == s["remote_on_demand"],
                  "list by name: %r" % page)
        self.step("RemotesRpmApi.read / list(name)", remotes_read_list)

        def repo_create():
            for key in ("repo_a", "repo_b", "repo_c", "repo_od"):
                repo = self.rpm_repos.create(prpm.RpmRpmRepository(name=self.name(key)))
                check(repo.latest_version_href and repo.latest_version_href.endswith("/versions/0/"),
                      "latest_version_href %r" % repo.latest_version_href)
                s[key] = repo.pulp_href
                s[key + "_prn"] = repo.prn
            return "4 repositories"
        self.step("RepositoriesRpmApi.create (x4)", repo_create)

        def repo_read():
            repo = self.rpm_repos.read(s["repo_a"])
            check(repo.name == self.name("repo_a"), "name %r" % repo.name)
            # Pulp answers repo_config {} when none was set (the field is in every response).
            check(repo.repo_config is not None, "rpm repository has no repo_config")
            page = self.rpm_repos.list(name=self.name("repo_a"))
            check(page.count == 1, "list by name count %r" % page.count)
        self.step("RepositoriesRpmApi.read / list(name)", repo_read)

        def sync_immediate():
            resp = self.rpm_repos.sync(s["repo_a"], prpm.RpmRepositorySyncURL(
                remote=s["remote_immediate"]))
            task = self.wait_async(resp)
            s["va"] = self.created(task, "/versions/")
            n = self.version_package_count(s["va"])
            check(n > 0, "sync made a version without packages")
            return "%s with %d packages" % (s["va"], n)
        self.step("RepositoriesRpmApi.sync (immediate remote) + TasksApi.read", sync_immediate)

        def sync_on_demand():
            resp = self.rpm_repos.sync(s["repo_od"], prpm.RpmRepositorySyncURL(
                remote=s["remote_on_demand"], sync_policy="mirror_content_only"))
            task = self.wait_async(resp)
            s["vod"] = self.created(task, "/versions/")
            return s["vod"]
        self.step("RepositoriesRpmApi.sync (on_demand remote, mirror_content_only)",
                  sync_on_demand)

        def versions():
            page = self.rpm_versions.list(s["repo_a"])
            check(page.count == 2, "2 versions expected, got %r" % page.count)
            v = self.rpm_versions.read(s["va"])
            check(v.number == 1, "number %r" % v.number)
            check(v.content_summary is not None and v.content_summary.added,
                  "content_summary %r" % v.content_summary)
            pkg = v.content_summary.present.get("rpm.package")
            check(pkg is not None and pkg["count"] > 0, "present rpm.package %r" % pkg)
            s["va_summary"] = v.content_summary.present
            return "present %s" % {k: c["count"] for k, c in v.content_summary.present.items()}
        self.step("RepositoriesRpmVersionsApi.list / read", versions)

        def packages():
            page = self.rpm_packages.list(repository_version=s["va"], name="walrus")
            check(page.count == 3 and all(p.name == "walrus" for p in page.results),
                  "name=walrus: count %r" % page.count)
            total = self.version_package_count(s["va"])
            first = self.rpm_packages.list(repository_version=s["va"], limit=2, offset=0,
                                           ordering=["pulp_id"])
            second = self.rpm_packages.list(repository_version=s["va"], limit=2, offset=2,
                                            ordering=["pulp_id"])
            check(first.count == total and len(first.results) == 2 and first.next,
                  "first page: count %r, %d results, next %r"
                  % (first.count, len(first.results), first.next))
            check(len(second.results) == 2 and second.previous,
                  "second page: %d results, previous %r" % (len(second.results), second.previous))
            hrefs = {p.pulp_href for p in first.results} | {p.pulp_href for p in second.results}
            check(len(hrefs) == 4, "pages overlap")
            last = self.rpm_packages.list(repository_version=s["va"], limit=2,
                                          offset=total - 1)
            check(len(last.results) == 1 and last.next is None, "last page %r" % last)
            by_name = {}
            everything = self.rpm_packages.list(repository_version=s["va"], limit=1000)
            for p in everything.results:
                by_name["%s-%s-%s" % (p.name, p.version, p.release)] = p
            s["pkgs"] = {k: p.pulp_href for k, p in by_name.items()}
            s["pkg_prns"] = {p.pulp_href: p.prn for p in by_name.values()}
            for p in by_name.values():
                want = "prn:rpm.package:%s" % p.pulp_href.rstrip("/").rsplit("/", 1)[1]
                check(p.prn == want, "package prn %r, expected %r" % (p.prn, want))
            one = self.rpm_packages.read(by_name["walrus-0.71-1"].pulp_href)
            check(one.name == "walrus" and one.location_href, "read %r" % one.name)
            two = [by_name["walrus-0.71-1"].pulp_href, by_name["lion-0.3-0.8"].pulp_href]
            page = self.rpm_packages.list(pulp_href__in=two)
            check(page.count == 2, "pulp_href__in: count %r" % page.count)
            page = self.rpm_packages.list(repository_version_added=s["va"], limit=1)
            check(page.count == total, "repository_version_added: count %r" % page.count)
            return "%d packages, walrus x3, pages of 2" % total
        self.step("ContentPackagesApi.list (name filter, limit/offset) / read", packages)

        def typed_lists():
            counts = {}
            # (list, API, pulp_type, PRN model label: Pulp's prn:<app>.<model>:<pk>)
            for label, api, typ, model in (
                    ("advisories", self.rpm_advisories, "rpm.advisory", "rpm.updaterecord"),
                    ("modulemds", self.rpm_modulemds, "rpm.modulemd", "rpm.modulemd"),
                    ("packagegroups", self.rpm_packagegroups, "rpm.packagegroup",
                     "rpm.packagegroup"),
                    ("distribution_trees", self.rpm_trees, "rpm.distribution_tree",
                     "rpm.distributiontree"),
                    ("repo_metadata_files", self.rpm_metadata_files, "rpm.repo_metadata_file",
                     "rpm.repometadatafile")):
                page = api.list(repository_version=s["va"])
                expected = s["va_summary"].get(typ, {}).get("count", 0)
                check(page.count == expected,
                      "%s: count %r, content_summary says %r" % (label, page.count, expected))
                check(len(page.results) == min(expected, 100), "%s: results" % label)
                for unit in page.results:
                    want = "prn:%s:%s" % (model, unit.pulp_href.rstrip("/").rsplit("/", 1)[1])
                    check(unit.prn == want, "%s: prn %r, expected %r" % (label, unit.prn, want))
                counts[label] = page.count
            return str(counts)
        self.step("Advisories/Modulemds/Packagegroups/DistributionTrees/RepoMetadataFiles"
                  " list(repository_version)", typed_lists)

        def generic_content():
            total = sum(c["count"] for c in s["va_summary"].values())
            page = self.content_api.list(repository_version=s["va"], limit=1000)
            check(page.count == total, "count %r, content_summary total %r" % (page.count, total))
            mismatched = []
            for c in page.results:
                if c.pulp_href in s["pkg_prns"] and c.prn != s["pkg_prns"][c.pulp_href]:
                    mismatched.append((c.pulp_href, c.prn, s["pkg_prns"][c.pulp_href]))
            check(not mismatched, "generic content PRNs differ from the typed ones: %r"
                  % mismatched[:3])
            page2 = self.content_api.list(repository_version=s["va"], limit=3, offset=3)
            check(len(page2.results) == 3, "limit/offset: %d" % len(page2.results))
            return "%d units" % page.count
        self.step("ContentApi.list (generic, repository_version)", generic_content)

        def generic_lists():
            repos = self.repositories_api.list(name=self.name("repo_a"))
            check(repos.count == 1, "RepositoriesApi name filter: %r" % repos.count)
            r = repos.results[0]
            check(r.pulp_href == s["repo_a"], "href %r != %r" % (r.pulp_href, s["repo_a"]))
            check(r.prn == s["repo_a_prn"], "RepositoriesApi prn %r != typed prn %r"
                  % (r.prn, s["repo_a_prn"]))
            remotes = self.remotes_api.list(name=self.name("rpm-immediate"))
            check(remotes.count == 1 and remotes.results[0].pulp_href == s["remote_immediate"],
                  "RemotesApi: %r" % remotes)
            check(remotes.results[0].prn == s["remote_immediate_prn"],
                  "RemotesApi prn %r != typed prn %r"
                  % (remotes.results[0].prn, s["remote_immediate_prn"]))
            self.distributions_api.list(limit=10)
            self.publications_api.list(limit=10)
            typed = self.rpm_versions.read(s["va"])
            rv = self.repository_versions_api.list(prn__in=[typed.prn])
            check(rv.count == 1 and rv.results[0].pulp_href == s["va"],
                  "RepositoryVersionsApi(prn__in=[%s]): count %r" % (typed.prn, rv.count))
            rv = self.repository_versions_api.list(limit=10)
            return "repositories %d, remotes %d, versions %d" % (
                self.repositories_api.list(limit=1).count,
                self.remotes_api.list(limit=1).count, rv.count)
        self.step("RepositoriesApi/RemotesApi/DistributionsApi/PublicationsApi/"
                  "RepositoryVersionsApi generic lists", generic_lists)

        def publication():
            resp = self.rpm_publications.create(prpm.RpmRpmPublication(repository_version=s["va"]))
            task = self.wait_async(resp)
            s["pub_a"] = self.created(task, "/publications/")
            pub = self.rpm_publications.read(s["pub_a"])
            check(pub.repository_version == s["va"], "repository_version %r" % pub.repository_version)
            pubs = self.publications_api.list(repository_version=s["va"])
            check(any(p.pulp_href == s["pub_a"] for p in pubs.results),
                  "PublicationsApi(repository_version) lacks it")
            check(all(p.prn == pub.prn for p in pubs.results if p.pulp_href == s["pub_a"]),
                  "PublicationsApi prn differs from the typed prn %r" % pub.prn)
            return s["pub_a"]
        self.step("PublicationsRpmApi.create / read", publication)

        def distribution():
            resp = self.rpm_distributions.create(prpm.RpmRpmDistribution(
                name=self.name("dist"), base_path=self.name("dist"), publication=s["pub_a"]))
            task = self.wait_async(resp)
            s["dist"] = self.created(task, "/distributions/")
            d = self.rpm_distributions.read(s["dist"])
            check(d.publication == s["pub_a"] and d.base_url, "read %r" % d)
            dists = self.distributions_api.list(name=self.name("dist"))
            check(dists.count == 1 and dists.results[0].prn == d.prn,
                  "DistributionsApi: count %r, prn %r vs typed %r" % (
                      dists.count, dists.results[0].prn if dists.results else None, d.prn))
            return d.base_url
        self.step("DistributionsRpmApi.create / read", distribution)

        def distribution_update():
            resp = self.rpm_distributions.partial_update(
                s["dist"], prpm.PatchedrpmRpmDistribution(base_path=self.name("dist2")))
            if hasattr(resp, "task"):
                self.wait_async(resp)
            d = self.rpm_distributions.read(s["dist"])
            check(d.base_path == self.name("dist2"), "base_path %r" % d.base_path)
            resp = self.rpm_distributions.update(s["dist"], prpm.RpmRpmDistribution(
                name=self.name("dist"), base_path=self.name("dist3"), repository=s["repo_a"],
                publication=None))
            if hasattr(resp, "task"):
                self.wait_async(resp)
            d = self.rpm_distributions.read(s["dist"])
            check(d.base_path == self.name("dist3") and d.repository == s["repo_a"]
                  and d.publication is None,
                  "after update: base_path %r repository %r publication %r"
                  % (d.base_path, d.repository, d.publication))
        self.step("DistributionsRpmApi.partial_update / update", distribution_update)

        def copy_plain():
            pkg = s["pkgs"]["walrus-0.71-1"]
            resp = self.rpm_copy.copy_content(prpm.Copy(config=[{
                "source_repo_version": s["va"], "dest_repo": s["repo_b"], "content": [pkg]}],
                dependency_solving=False))
            task = self.wait_async(resp)
            s["vb"] = self.created(task, "/versions/")
            n = self.version_package_count(s["vb"])
            check(n == 1, "copy without dependency solving: %d packages" % n)
            return s["vb"]
        self.step("RpmCopyApi.copy_content (dependency_solving=False)", copy_plain)

        def copy_deps():
            # A module whose requirements are all met in the source: its artifact
            # (kangaroo-0.3-1) comes along. (zoo's packages with requirements all have one
            # that nothing upstream provides, and there libsolv adds nothing to what was
            # asked for.)
            mods = self.rpm_modulemds.list(repository_version=s["va"], name="kangaroo",
                                           version="20180730223407")
            check(mods.count == 1, "kangaroo module 20180730223407: count %r" % mods.count)
            resp = self.rpm_copy.copy_content(prpm.Copy(config=[{
                "source_repo_version": s["va"], "dest_repo": s["repo_c"],
                "content": [mods.results[0].pulp_href]}],
                dependency_solving=True))
            task = self.wait_async(resp)
            s["vc"] = self.created(task, "/versions/")
            nevras = {"%s-%s-%s" % (p.name, p.version, p.release) for p in
                      self.rpm_packages.list(repository_version=s["vc"]).results}
            check("kangaroo-0.3-1" in nevras,
                  "copied packages %r" % sorted(nevras))
            copied_mods = self.rpm_modulemds.list(repository_version=s["vc"], name="kangaroo",
                                                  version="20180730223407")
            check(copied_mods.count == 1, "module not copied")
            return "copied %s and %d module(s)" % (sorted(nevras), copied_mods.count)
        self.step("RpmCopyApi.copy_content (dependency_solving=True)", copy_deps)

        def modify():
            add = [s["pkgs"]["kangaroo-0.3-1"], s["pkgs"]["lion-0.3-0.8"]]
            resp = self.rpm_repos.modify(s["repo_b"], prpm.RepositoryAddRemoveContent(
                add_content_units=add, remove_content_units=[s["pkgs"]["walrus-0.71-1"]]))
            task = self.wait_async(resp)
            v2 = self.created(task, "/versions/")
            names = sorted(p.name for p in
                           self.rpm_packages.list(repository_version=v2).results)
            check(names == ["kangaroo", "lion"], "after add/remove: %r" % names)
            # base_version: start again from version 1 (walrus only) and add penguin.
            resp = self.rpm_repos.modify(s["repo_b"], prpm.RepositoryAddRemoveContent(
                add_content_units=[s["pkgs"]["penguin-0.3-0.8"]], base_version=s["vb"]))
            task = self.wait_async(resp)
            v3 = self.created(task, "/versions/")
            names = sorted(p.name for p in
                           self.rpm_packages.list(repository_version=v3).results)
            check(names == ["penguin", "walrus"], "after base_version modify: %r" % names)
            s["vb"] = v3
            return v3
        self.step("RepositoriesRpmApi.modify (add/remove, base_version)", modify)

        def upload_artifact():
            data = self.fetch_upstream(self.args.upload_rpm_artifact)
            href, n = self.chunked_upload(data, max(1, len(data) // 2 + 1))
            resp = self.uploads_api.commit(href, core.UploadCommit(
                sha256=hashlib.sha256(data).hexdigest()))
            task = self.wait_async(resp)
            artifact = self.created(task, "/artifacts/")
            a = self.artifacts_api.read(artifact)
            check(a.sha256 == hashlib.sha256(data).hexdigest() and a.size == len(data),
                  "artifact %r" % a)
            resp = self.rpm_packages.create(artifact=artifact)
            task = self.wait_async(resp)
            pkg = self.created(task, "/content/rpm/packages/")
            p = self.rpm_packages.read(pkg)
            check(p.sha256 == a.sha256, "package sha256 %r" % p.sha256)
            s["uploaded_artifact_pkg"] = pkg
            return "%d chunks -> %s -> %s-%s-%s" % (n, artifact, p.name, p.version, p.release)
        self.step("UploadsApi create/update(chunks)/read/commit + ContentPackagesApi.create"
                  "(artifact)", upload_artifact)

        def upload_content():
            data = self.fetch_upstream(self.args.upload_rpm_upload)
            href, n = self.chunked_upload(data, max(1, len(data) // 3 + 1))
            resp = self.rpm_packages.create(upload=href, repository=s["repo_b"])
            task = self.wait_async(resp)
            pkg = self.created(task, "/content/rpm/packages/")
            version = self.created(task, "/versions/")
            p = self.rpm_packages.read(pkg)
            check(p.sha256 == hashlib.sha256(data).hexdigest(), "sha256 %r" % p.sha256)
            names = sorted(x.name for x in
                           self.rpm_packages.list(repository_version=version).results)
            check(p.name in names, "%s not in the new version %r" % (p.name, names))
            resp = self.rpm_repos.modify(s["repo_b"], prpm.RepositoryAddRemoveContent(
                add_content_units=[s["uploaded_artifact_pkg"]]))
            self.wait_async(resp)
            return "%d chunks -> %s-%s-%s in %s" % (n, p.name, p.version, p.release, version)
        self.step("UploadsApi create/update(chunks) + ContentPackagesApi.create(upload, "
                  "repository)", upload_content)

        def orphans():
            resp = self.orphans_cleanup_api.cleanup(core.OrphansCleanup(orphan_protection_time=0))
            self.wait_async(resp)
            # content in repositories must survive
            self.rpm_packages.read(s["uploaded_artifact_pkg"])
        self.step("OrphansCleanupApi.cleanup", orphans)

        def cancel():
            # A sync from an upstream that never answers stays running; a second sync of the
            # same repository waits behind it. Cancel the waiting one, then the running one.
            stall = StallingUpstream(self.args.stall_listen)
            try:
                url = self.args.stall_url or stall.url
                remote = self.rpm_remotes.create(prpm.RpmRpmRemote(
                    name=self.name("rpm-stalled"), url=url, policy="on_demand",
                    total_timeout=self.args.task_timeout))
                s["remote_stalled"] = remote.pulp_href
                running = self.rpm_repos.sync(s["repo_od"], prpm.RpmRepositorySyncURL(
                    remote=remote.pulp_href)).task
                waiting = self.rpm_repos.sync(s["repo_od"], prpm.RpmRepositorySyncURL(
                    remote=remote.pulp_href)).task
                deadline = time.monotonic() + 30
                while self.tasks_api.read(running).state != "running":
                    check(time.monotonic() < deadline, "stalled sync never started running")
                    time.sleep(0.2)
                w = self.tasks_api.read(waiting)
                check(w.state == "waiting", "second sync of the repository is %s" % w.state)
                out = []
                for href in (waiting, running):
                    t = self.tasks_api.tasks_cancel(href, core.PatchedTaskCancel(state="canceled"))
                    check(t.state in ("canceling", "canceled"),
                          "state right after cancel %r" % t.state)
                    deadline = time.monotonic() + self.args.task_timeout
                    while t.state not in ("canceled", "completed", "failed"):
                        check(time.monotonic() < deadline, "cancel did not finish")
                        time.sleep(0.3)
                        t = self.tasks_api.read(href)
                    check(t.state == "canceled", "canceled task ended %s" % t.state)
                    out.append(t.state)
                return "waiting -> %s, running -> %s" % tuple(out)
            finally:
                stall.close()
        self.step("TasksApi.tasks_cancel (waiting/running task)", cancel)

        def delete():
            resp = self.rpm_distributions.delete(s["dist"])
            self.wait_async(resp)
            for key in ("repo_c", "repo_od"):
                resp = self.rpm_repos.delete(s[key])
                self.wait_async(resp)
            page = self.rpm_repos.list(name=self.name("repo_c"))
            check(page.count == 0, "repository still listed")
            for key in ("remote_on_demand", "remote_stalled"):
                self.wait_async(self.rpm_remotes.delete(s[key]))
        self.step("DistributionsRpmApi/RepositoriesRpmApi/RemotesRpmApi.delete", delete)

    # ------------------------------------------------------------------ file

    def file_steps(self):
        s = self.s
        manifest = (self.upstream + "/" + self.args.file_path.strip("/") + "/PULP_MANIFEST")

        def remote():
            r = self.file_remotes.create(pfile.FileFileRemote(
                name=self.name("file-remote"), url=manifest, policy="immediate"))
            s["file_remote"] = r.pulp_href
            check(self.file_remotes.read(r.pulp_href).url == manifest, "url")
            return r.pulp_href
        self.step("RemotesFileApi.create / read", remote)

        def repo():
            r = self.file_repos.create(pfile.FileFileRepository(name=self.name("file-repo")))
            s["file_repo"] = r.pulp_href
            check(self.file_repos.read(r.pulp_href).name == self.name("file-repo"), "name")
            return r.pulp_href
        self.step("RepositoriesFileApi.create / read", repo)

        def sync():
            resp = self.file_repos.sync(s["file_repo"], pfile.RepositorySyncURL(
                remote=s["file_remote"]))
            task = self.wait_async(resp)
            s["fv"] = self.created(task, "/versions/")
            page = self.file_content.list(repository_version=s["fv"])
            check(page.count == 3, "3 files expected, got %r" % page.count)
            versions = self.file_versions.list(s["file_repo"])
            check(versions.count == 2, "versions %r" % versions.count)
            self.file_versions.read(s["fv"])
            return "%s: %s" % (s["fv"], sorted(c.relative_path for c in page.results))
        self.step("RepositoriesFileApi.sync + versions list/read + ContentFilesApi.list", sync)

        def publication():
            resp = self.file_publications.create(pfile.FileFilePublication(
                repository=s["file_repo"]))
            task = self.wait_async(resp)
            s["file_pub"] = self.created(task, "/publications/")
            pub = self.file_publications.read(s["file_pub"])
            check(pub.repository_version == s["fv"], "version %r" % pub.repository_version)
            return s["file_pub"]
        self.step("PublicationsFileApi.create / read", publication)

        def distribution():
            resp = self.file_distributions.create(pfile.FileFileDistribution(
                name=self.name("file-dist"), base_path=self.name("file-dist"),
                publication=s["file_pub"]))
            task = self.wait_async(resp)
            s["file_dist"] = self.created(task, "/distributions/")
            d = self.file_distributions.read(s["file_dist"])
            check(d.publication == s["file_pub"], "publication %r" % d.publication)
            return d.base_url
        self.step("DistributionsFileApi.create / read", distribution)

        def content_create():
            data = ("pith bindings flow %s\n" % self.suffix).encode()
            resp = self.file_content.create(relative_path="hello-%s.txt" % self.suffix,
                                            file=("hello.txt", data))
            task = self.wait_async(resp)
            s["file_unit"] = self.created(task, "/content/file/files/")
            c = self.file_content.read(s["file_unit"])
            check(c.sha256 == hashlib.sha256(data).hexdigest(), "sha256 %r" % c.sha256)
            return s["file_unit"]
        self.step("ContentFilesApi.create (file upload)", content_create)

        def modify():
            resp = self.file_repos.modify(s["file_repo"], pfile.RepositoryAddRemoveContent(
                add_content_units=[s["file_unit"]]))
            task = self.wait_async(resp)
            v = self.created(task, "/versions/")
            page = self.file_content.list(repository_version=v)
            check(page.count == 4, "4 files expected, got %r" % page.count)
            return v
        self.step("RepositoriesFileApi.modify (add)", modify)

        def cleanup():
            for api, key in ((self.file_distributions, "file_dist"),
                             (self.file_repos, "file_repo"),
                             (self.file_remotes, "file_remote")):
                self.wait_async(api.delete(s[key]))
        self.step("file deletes (distribution, repository, remote)", cleanup)

    def finish_rpm(self):
        s = self.s

        def delete():
            for key in ("repo_a", "repo_b"):
                self.wait_async(self.rpm_repos.delete(s[key]))
            self.wait_async(self.rpm_remotes.delete(s["remote_immediate"]))
        self.step("RepositoriesRpmApi.delete (remaining) / RemotesRpmApi.delete", delete)

    def run(self):
        print("pith bindings flow: %s (upstream %s, suffix %s)" % (
            self.base, self.upstream, self.suffix), flush=True)
        self.core_steps()
        self.rpm_steps()
        self.file_steps()
        self.finish_rpm()
        print("\nall %d steps passed" % len(self.passed))


def main(argv=None):
    env = os.environ.get
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", default=env("PITH_BASE_URL", "http://127.0.0.1:24817"),
                   help="server origin, without /pulp/api/v3 (env PITH_BASE_URL)")
    p.add_argument("--username", default=env("PITH_USERNAME", "admin"),
                   help="(env PITH_USERNAME)")
    p.add_argument("--password", default=env("PITH_PASSWORD", "password"),
                   help="(env PITH_PASSWORD)")
    p.add_argument("--upstream", default=env("PITH_UPSTREAM"),
                   help="HTTP origin serving shared/data (env PITH_UPSTREAM)")
    p.add_argument("--rpm-path", default="yum-katello/zoo/",
                   help="yum repository under the upstream")
    p.add_argument("--file-path", default="yum-katello/file1/",
                   help="file repository (with PULP_MANIFEST) under the upstream")
    p.add_argument("--upload-rpm-artifact",
                   default="rpm-edge-cases/packages/Archer-3.4.5-6.x86_64.rpm",
                   help="rpm under the upstream uploaded and made a package from its artifact")
    p.add_argument("--upload-rpm-upload",
                   default="rpm-edge-cases/packages/Rimmer-1.0.2-2.x86_64.rpm",
                   help="rpm under the upstream uploaded and made a package from the upload")
    p.add_argument("--suffix", default=env("PITH_FLOW_SUFFIX"),
                   help="suffix of every object name (default: random)")
    p.add_argument("--task-timeout", type=float, default=300)
    p.add_argument("--stall-listen", default=env("PITH_STALL_LISTEN", "127.0.0.1:0"),
                   help="host:port of the never-answering upstream the flow runs itself for"
                        " the task cancel step (env PITH_STALL_LISTEN)")
    p.add_argument("--stall-url", default=env("PITH_STALL_URL"),
                   help="URL the server reaches that upstream at (default: http://<listen>/)"
                        " (env PITH_STALL_URL)")
    p.add_argument("--traceback", action="store_true", help="print Python tracebacks")
    args = p.parse_args(argv)
    if not args.upstream:
        p.error("--upstream (or PITH_UPSTREAM) is required")
    Flow(args).run()


if __name__ == "__main__":
    main()
