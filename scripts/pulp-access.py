"""Writes the default access policies, locked roles and permissions of a Pulp release as
JSON, one file per Pulp app, for pith to serve as its defaults (see api/access).

Run it with the Python of a virtualenv holding the release pith claims and a settings
file that needs no database (as testdata/reference/README.md describes for the OpenAPI
documents):

    python3 -m venv /tmp/refpol/venv
    /tmp/refpol/venv/bin/pip install pulpcore==3.105.25 pulp-rpm==3.35.6 pulp-ansible==0.30.3
    PULP_SETTINGS=/tmp/refpol/settings.py PYTHONHASHSEED=0 \
        /tmp/refpol/venv/bin/python scripts/pulp-access.py OUTDIR

It writes OUTDIR/<app>.json for core, file, certguard, rpm and ansible:
  {"policies": {viewset urlpattern: {"statements", "creation_hooks", "queryset_scoping",
                "scope_permission"}},
   "roles": {name: {"description", "permissions"}},
   "permissions": {app.model: [app.codename, ...]}}
Policies are those Pulp stores in its access_policies table (the named viewsets with a
DEFAULT_ACCESS_POLICY, plus login); roles are the LOCKED_ROLES of the app's viewsets.
"""
import json
import os
import sys

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pulpcore.app.settings")
django.setup()

from django.apps import apps  # noqa: E402

from pulpcore.app.apps import pulp_plugin_configs  # noqa: E402
from pulpcore.app.util import get_view_urlpattern  # noqa: E402
from pulpcore.app.viewsets import LoginViewSet  # noqa: E402

out_dir = sys.argv[1]
data = {}
for cfg in pulp_plugin_configs():
    app = data.setdefault(cfg.label, {"policies": {}, "roles": {}, "permissions": {}})
    viewsets = [v for batch in (cfg.named_viewsets or {}).values() for v in batch]
    if cfg.label == "core":
        viewsets.append(LoginViewSet)
    for v in viewsets:
        policy = getattr(v, "DEFAULT_ACCESS_POLICY", None)
        if policy is not None:
            p = dict(policy)
            p["scope_permission"] = getattr(v, "queryset_filtering_required_permission", None)
            app["policies"][get_view_urlpattern(v)] = p
        for name, role in (getattr(v, "LOCKED_ROLES", None) or {}).items():
            if isinstance(role, list):
                role = {"description": None, "permissions": role}
            app["roles"][name] = {"description": role.get("description"), "permissions": role["permissions"]}
# Views outside the named viewsets that have a policy of their own (rpm's copy, prune and
# comps upload): Pulp applies them but does not list them; keyed by their path below the
# API root, as pith's routes know them.
from django.urls import get_resolver  # noqa: E402


def walk(patterns, prefix=""):
    for p in patterns:
        if hasattr(p, "url_patterns"):
            yield from walk(p.url_patterns, prefix + str(p.pattern))
        else:
            yield prefix + str(p.pattern), getattr(p.callback, "cls", None)


named = {v for cfg in pulp_plugin_configs() for batch in (cfg.named_viewsets or {}).values() for v in batch}
for route, cls in walk(get_resolver().url_patterns):
    policy = getattr(cls, "DEFAULT_ACCESS_POLICY", None)
    if cls is None or cls in named or cls is LoginViewSet or policy is None or "<" in route:
        continue
    label = cls.__module__.split(".")[0].replace("pulp_", "").replace("pulpcore", "core")
    path = route.split("api/v3/", 1)[-1].rstrip("$").lstrip("^").rstrip("/")
    if label in data and path:
        data[label]["policies"][path] = dict(policy, scope_permission=None, unlisted=True)
for m in apps.get_models():
    label = m._meta.app_label
    if label == "auth":
        label = "core"  # users and groups: their permissions are auth.*, listed with core
    if label not in data:
        continue
    perms = [f"{m._meta.app_label}.{a}_{m._meta.model_name}" for a in m._meta.default_permissions]
    perms += [f"{m._meta.app_label}.{p[0]}" for p in m._meta.permissions]
    data[label]["permissions"][f"{m._meta.app_label}.{m._meta.model_name}"] = perms
for label, app in data.items():
    with open(os.path.join(out_dir, label + ".json"), "w") as f:
        json.dump(app, f, indent=1, sort_keys=True)
        f.write("\n")
    print(label, len(app["policies"]), "policies", len(app["roles"]), "roles", len(app["permissions"]), "models")
