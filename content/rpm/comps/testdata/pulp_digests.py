#!/usr/bin/python3
"""Print the digests Pulp gives the comps units of the files named on the command line.

Pulp (pulp_rpm app/comps.py, models/comps.py) turns each libcomps unit into a dict of its
API fields and hashes sha256("".join(sorted(str(v) for v in dict.values()))). This script
does the same with the system libcomps (Debian: python3-libcomps), so the Go tests can pin
the digests. From the package directory:

    (cd ../../../testdata && /usr/bin/python3 $OLDPWD/testdata/pulp_digests.py \
        rpm-edge-cases/other_metadata/comps-f19.xml rpm-edge-cases/comps_files/comps_00.xml \
        yum-katello/zoo/comps.xml yum-katello/zoo2/comps.xml \
        yum-katello/zoo/repodata/*-comps.xml yum-katello/zoo2/repodata/*-comps.xml) \
        > testdata/pulp_digests.txt
    /usr/bin/python3 testdata/pulp_digests.py testdata/tricky.xml >> testdata/pulp_digests.txt

Each output line is: file, kind, id and digest, separated by tabs.
"""
import hashlib
import sys

import libcomps


def strdict(d):
    # StrDict.items() crashes some libcomps versions; iterating keys does not.
    return {k: d[k] for k in d} if len(d) else {}


def digest(fields):
    vals = sorted(str(v) for v in fields.values())
    return hashlib.sha256("".join(vals).encode("utf-8")).hexdigest()


def groupids(ids):
    return [{"name": i.name, "default": i.default} for i in ids]


def main():
    for path in sys.argv[1:]:
        c = libcomps.Comps()
        with open(path) as f:
            c.fromxml_str(f.read())
        name = path
        for g in c.groups:
            pkgs = []
            for p in g.packages:
                d = {"name": p.name, "type": p.type, "basearchonly": p.basearchonly, "requires": p.requires}
                if d not in pkgs:
                    pkgs.append(d)
            fields = {
                "id": g.id, "default": g.default, "user_visible": g.uservisible,
                "display_order": g.display_order, "name": g.name, "description": g.desc or "",
                "packages": pkgs, "biarch_only": g.biarchonly,
                "desc_by_lang": strdict(g.desc_by_lang), "name_by_lang": strdict(g.name_by_lang),
            }
            print("\t".join([name, "group", g.id, digest(fields)]))
        for x in c.categories:
            fields = {
                "id": x.id, "name": x.name, "description": x.desc or "",
                "display_order": x.display_order, "group_ids": groupids(x.group_ids),
                "desc_by_lang": strdict(x.desc_by_lang), "name_by_lang": strdict(x.name_by_lang),
            }
            print("\t".join([name, "category", x.id, digest(fields)]))
        for x in c.environments:
            fields = {
                "id": x.id, "name": x.name, "description": x.desc or "",
                "display_order": x.display_order, "group_ids": groupids(x.group_ids),
                "option_ids": groupids(x.option_ids),
                "desc_by_lang": strdict(x.desc_by_lang), "name_by_lang": strdict(x.name_by_lang),
            }
            print("\t".join([name, "environment", x.id, digest(fields)]))
        if len(c.langpacks):
            print("\t".join([name, "langpacks", "-", digest({"matches": strdict(c.langpacks)})]))


main()
