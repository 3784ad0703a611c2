#!/bin/sh
# Copies into this folder, from the shared tree beside the development checkout
# (default ../shared, relative to the repository root), exactly the third-party files the
# tests read; see README.md. Run from the repository root: sh testdata/refresh.sh [SHARED]
set -eu
cd "$(dirname "$0")/.."
shared=${1:-../shared}
src=$shared/data
dst=testdata

# Whole directories: repositories that tests sync or serve, and folders every file of
# which some test reads.
for d in \
	file-katello-puppet \
	yum-katello/zoo yum-katello/zoo2 yum-katello/file1 \
	rpm-edge-cases/repo_00 rpm-edge-cases/repo_01 rpm-edge-cases/repo_02 \
	rpm-edge-cases/repo_03 rpm-edge-cases/repo_04 \
	rpm-edge-cases/repo_koji_01 rpm-edge-cases/repo_koji_02 \
	rpm-edge-cases/repo_with_additional_metadata rpm-edge-cases/repo_with_duplicate_packages \
	rpm-edge-cases/compressed_files rpm-edge-cases/comps_files rpm-edge-cases/modified_repo_files \
	rpm-edge-cases/packages rpm-edge-cases/repodata_snippets rpm-edge-cases/updateinfo_files; do
	rm -rf "${dst:?}/$d"
	mkdir -p "$dst/$(dirname "$d")"
	cp -R "$src/$d" "$dst/$d"
done

# Single files: the tests read these and nothing else of their folders.
for f in \
	yum-katello/zoo_dup/.treeinfo yum-katello/zoo_dup/repodata/repomd.xml \
	yum-katello/zoo_dup_dup/.treeinfo yum-katello/zoo_dup_dup/repodata/repomd.xml \
	yum-katello/zoo2_dup/.treeinfo yum-katello/zoo2_dup/repodata/repomd.xml \
	rpm-edge-cases/other_metadata/comps-f19.xml \
	rpm-edge-cases/other_metadata/0402e012013246e7e2f2f638c8a6046efdfd71ae1cbeff9c391d9c1ae5d7d431-comps-f19.xml.bz2 \
	rpm-edge-cases/other_metadata/71d988ca33b31a18b0d775478d6f59b40583c794ae76393284850ee97bfba4dc-comps-f19.xml.gz \
	rpm-edge-cases/other_metadata/c941e2c77a27cdca324c0e0bc3190e134fddddb36a03fb5517e55d156b955205-comps-f19.xml.xz \
	ansible-collections/cisco-iosxr-4.0.2.tar.gz ansible-collections/ansible-netcommon-4.1.0.tar.gz \
	ansible-collections/ansible-utils-2.7.0.tar.gz ansible-collections/community-general-5.7.0.tar.gz \
	ansible-collections/foo-bar-1.0.0.tar.gz \
	ansible-collections/pulp-testing_asset-1.0.0.tar.gz ansible-collections/pulp-testing_asset-1.0.1.tar.gz; do
	mkdir -p "$dst/$(dirname "$f")"
	cp "$src/$f" "$dst/$f"
done

# The reference OpenAPI documents, gzipped (about 3.4 MB each as JSON), with their
# operation lists and READMEs.
for r in pulp-3.105:3105 pulp-latest:latest; do
	dir=${r%%:*} v=${r#*:}
	mkdir -p "$dst/reference/$dir"
	gzip -9 -n -c "$shared/reference/$dir/api-$v.json" >"$dst/reference/$dir/api-$v.json.gz"
	cp "$shared/reference/$dir/ops-$v.tsv" "$shared/reference/$dir/README.md" "$dst/reference/$dir/"
done

chmod -R u+w "$dst"
