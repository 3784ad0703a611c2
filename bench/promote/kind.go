package promote

import (
	"encoding/json"
	"fmt"

	"pith/meta"
)

// A kind is what the study's repositories hold: file units (the study's own) or Ansible
// collection versions. Generated units are stored as the type stores an on-demand unit
// of its own (a content_artifacts row without an artifact), so that the API's list,
// modify and version code reads them as it reads imported ones.
type kind struct {
	repoType, unitType       string // pith's types, Pulp's pulp_type
	repoSegment, unitSegment string // /pulp/api/v3/repositories/<repo>/, /content/<unit>/
	repoAttrs                string // repositories.attrs of a repository created through the API
	// unit is generated unit i of run; step units (promoted) use unit(run, -1-step).
	unit func(run string, i int) genUnit
}

// genUnit is a generated unit: its row, its documents (content_documents) and, for
// Pulp, its ansible fields.
type genUnit struct {
	c    meta.Content
	docs map[string][]byte
	cv   *cvFields
}

// cvFields are a generated collection version's names.
type cvFields struct {
	namespace, name, version string
	major, minor, patch      int
}

// Types the scenario can generate (--type).
const (
	FileType    = "file"
	AnsibleType = "ansible"
)

func kindOf(typ string) (kind, error) {
	switch typ {
	case "", FileType:
		return kind{repoType: "file.file", unitType: "file.file", repoSegment: "file/file", unitSegment: "file/files", repoAttrs: "{}", unit: fileUnit}, nil
	case AnsibleType:
		return kind{repoType: "ansible.ansible", unitType: "ansible.collection_version", repoSegment: "ansible/ansible",
			unitSegment: "ansible/collection_versions", repoAttrs: `{"gpgkey":null,"last_synced_metadata_time":null,"private":false}`, unit: ansibleUnit}, nil
	}
	return kind{}, fmt.Errorf("promote: unknown type %q (want %s or %s)", typ, FileType, AnsibleType)
}

// fileUnit is file i: promote-<run>/unit-<i>.txt; a step's is promoted-<step>.txt.
func fileUnit(run string, i int) genUnit {
	p := unitPath(run, i)
	if i < 0 {
		p = fmt.Sprintf("promote-%s/promoted-%02d.txt", run, -1-i)
	}
	dg := digestOf(p)
	attrs, _ := json.Marshal(map[string]string{"relative_path": p, "digest": dg})
	return genUnit{c: meta.Content{Type: "file.file", NaturalKey: dg + ":" + p, RepoKey: p, RelativePath: p, Digest: dg, Attrs: attrs}}
}

// Collections per namespace and versions per collection: the study's 10,000 units are
// 100 namespaces × 20 names × 5 versions.
const (
	namesPerNamespace  = 20
	versionsPerName    = 5
	unitsPerNamespaces = namesPerNamespace * versionsPerName
)

// ansibleUnit is collection version i: namespace p<run>_ns<i/100>, name c<(i/5) mod 20>,
// version <1 + i mod 5>.0.0; a step's is p<run>_promoted.step<step> 1.0.0. The sha256
// stands for an artifact never downloaded (on demand); its documents are what an
// on-demand sync stores when the upstream lists none.
func ansibleUnit(run string, i int) genUnit {
	f := cvFields{namespace: fmt.Sprintf("p%s_ns%03d", run, i/unitsPerNamespaces), name: fmt.Sprintf("c%02d", (i/versionsPerName)%namesPerNamespace),
		major: 1 + i%versionsPerName}
	if i < 0 {
		f = cvFields{namespace: "p" + run + "_promoted", name: fmt.Sprintf("step%02d", -1-i), major: 1}
	}
	f.version = fmt.Sprintf("%d.%d.%d", f.major, f.minor, f.patch)
	rel := f.namespace + "-" + f.name + "-" + f.version + ".tar.gz"
	dg := digestOf(rel)
	// The fields content/ansible keeps in attrs (TestAnsibleUnitsAsImported holds the
	// two to the same keys); version_key sorts as its versionKey does.
	attrs, _ := json.Marshal(map[string]any{"namespace": f.namespace, "name": f.name, "version": f.version,
		"version_major": f.major, "version_minor": f.minor, "version_patch": f.patch, "version_prerelease": "",
		"version_key": fmt.Sprintf("%010d.%010d.%010d~", f.major, f.minor, f.patch), "authors": []string{"Pith bench"},
		"dependencies": map[string]string{}, "description": "A generated collection of the promotion study.", "documentation": "",
		"homepage": "", "issues": "", "license": []string{"GPL-3.0-or-later"}, "repository": "https://example.com/" + f.namespace + "/" + f.name,
		"requires_ansible": ">=2.15.0", "tags": []string{"bench"}, "contents": []string{}, "sha256": dg})
	return genUnit{c: meta.Content{Type: "ansible.collection_version", NaturalKey: dg, RepoKey: f.namespace + "." + f.name + ":" + f.version,
		RelativePath: rel, Digest: dg, Attrs: attrs},
		docs: map[string][]byte{"docs_blob": []byte("{}"), "manifest": []byte("{}"), "files": []byte("{}")}, cv: &f}
}
