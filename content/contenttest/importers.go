package contenttest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"pith/api/href"
	"pith/meta"
)

// Importers in the tour: every Env allows imports from <Dir>/exports too. An import
// the tour asks for names a file there that is not an export: its task fails, which
// the tour does not look at (the import task is tested on its own, api/port_test.go).

// importer makes a pulp importer and returns its href.
func (tr *tour) importer() string {
	return tr.json("POST", href.Root+"importers/core/pulp/", map[string]any{"name": tr.name("importer")})["pulp_href"].(string)
}

// importRow makes an import of a new importer, its row directly, and returns its href.
func (tr *tour) importRow() string {
	h := tr.importer()
	p, _ := href.Parse(h)
	ctx := context.Background()
	x, err := meta.ImporterByPulpID(ctx, tr.e.DB, p.ID)
	if err != nil {
		tr.e.T.Fatal(err)
	}
	attrs, _ := json.Marshal(map[string]any{"params": map[string]any{"path": "/nowhere.tar"}})
	t, _ := href.Parse(tr.first(href.Root + "tasks/?state=completed")) // an import's task always names one
	m, err := meta.CreateImport(ctx, tr.e.DB, meta.Import{Owner: x.ID, Task: &t.ID, Attrs: attrs})
	if err != nil {
		tr.e.T.Fatal(err)
	}
	return h + "imports/" + m.PulpID + "/"
}

// importBody is an import request the API accepts.
func (tr *tour) importBody() map[string]any {
	return map[string]any{"path": filepath.Join(tr.e.ExportRoot(), "not-an-export.tar")}
}

// importerRequest is a good request of an importer operation the generic cases do not
// cover (p is the operation's path), or ok false.
func (tr *tour) importerRequest(opID, p string) (method, path string, body map[string]any, ok bool) {
	switch opID {
	case "importers_core_pulp_create":
		return "POST", p, map[string]any{"name": tr.name("importer")}, true
	case "importers_core_pulp_imports_create":
		return "POST", p, tr.importBody(), true
	case "pulp_import_check_post":
		return "POST", p, map[string]any{"path": filepath.Join(tr.e.ExportRoot(), "x.tar"), "repo_mapping": "{}"}, true
	}
	return "", "", nil, false
}

// callImporter calls an importer operation the generic cases do not cover; it reports
// whether it did.
func (tr *tour) callImporter(opID, p string) bool {
	if method, path, body, ok := tr.importerRequest(opID, p); ok {
		tr.json(method, path, body)
		return true
	}
	switch opID {
	case "importers_core_pulp_delete":
		tr.send("DELETE", tr.importer(), "", nil)
	case "importers_core_pulp_imports_delete":
		tr.send("DELETE", tr.importRow(), "", nil)
	default:
		return false
	}
	return true
}

// isImporter reports whether an operation is one of the importers'.
func isImporter(opID string) bool {
	return strings.HasPrefix(opID, "importers_") || opID == "pulp_import_check_post"
}
