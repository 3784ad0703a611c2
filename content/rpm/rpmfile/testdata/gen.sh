#!/bin/sh
# Regenerates the ground truth the tests compare rpmfile against, from the real rpms in
# the top-level testdata/: what rpm itself reads from each package (rpm/<file>.txt) and what
# createrepo_c writes for the rpm-edge-cases packages (createrepo-edge/*.xml; the zoo
# repository ships its own createrepo output). Needs rpm and createrepo_c
# (Debian: apt-get install rpm createrepo-c). Run from this directory: sh gen.sh
set -eu
data=../../../../testdata
out=rpm
rm -rf "$out" createrepo-edge
mkdir -p "$out" createrepo-edge

q() { # file, then one query format per section name
	f=$1; shift
	while [ $# -gt 1 ]; do
		printf '@@%s\n' "$1"
		rpm -qp --nosignature --qf "$2" "$f" 2>/dev/null
		shift 2
	done
}

deps() { # NAME VERSION FLAGS tag stems
	printf '[%%{%sNAME}\\t%%{%sFLAGS}\\t%%{%sVERSION}\\n]' "$1" "$1" "$1"
}

for f in "$data"/yum-katello/zoo/*.rpm "$data"/rpm-edge-cases/packages/*.rpm; do
	b=$(basename "$f")
	{
		q "$f" \
			name '%{NAME}\n' \
			epoch '%{EPOCH}\n' \
			version '%{VERSION}\n' \
			release '%{RELEASE}\n' \
			arch '%{ARCH}\n' \
			sourcepackage '%{SOURCEPACKAGE}\n' \
			sourcerpm '%{SOURCERPM}\n' \
			summary '%{SUMMARY}\n' \
			description '%{DESCRIPTION}\n' \
			url '%{URL}\n' \
			license '%{LICENSE}\n' \
			vendor '%{VENDOR}\n' \
			group '%{GROUP}\n' \
			buildhost '%{BUILDHOST}\n' \
			packager '%{PACKAGER}\n' \
			buildtime '%{BUILDTIME}\n' \
			longsize '%{LONGSIZE}\n' \
			longarchivesize '%{LONGARCHIVESIZE}\n' \
			provides "$(deps PROVIDE)" \
			requires "$(deps REQUIRE)" \
			conflicts "$(deps CONFLICT)" \
			obsoletes "$(deps OBSOLETE)" \
			recommends "$(deps RECOMMEND)" \
			suggests "$(deps SUGGEST)" \
			supplements "$(deps SUPPLEMENT)" \
			enhances "$(deps ENHANCE)" \
			files '[%{FILENAMES}\t%{FILEMODES}\t%{FILEFLAGS}\n]' \
			changelog '[%{CHANGELOGTIME}\t%{CHANGELOGNAME}\n%{CHANGELOGTEXT}\n@@-\n]' \
			signatures '%{RSAHEADER:pgpsig}\n%{DSAHEADER:pgpsig}\n%{SIGGPG:pgpsig}\n%{SIGPGP:pgpsig}\n'
		printf '@@end\n'
	} >"$out/$b.txt"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -p "$data"/rpm-edge-cases/packages/*.rpm "$tmp"
createrepo_c --quiet --no-database --simple-md-filenames "$tmp" >/dev/null
for x in primary filelists other; do
	gzip -dc "$tmp/repodata/$x.xml.gz" >"createrepo-edge/$x.xml"
done
