package contenttest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"pith/api/href"
	"pith/content"
	"pith/meta"
)

// Exporters in the tour: every Env allows exports below <Dir>/exports; each exporter
// writes to a directory of its own there, since a filesystem export needs an empty one.

// ExportRoot is the directory of an Env that exporters may write below.
func (e *Env) ExportRoot() string { return filepath.Join(e.Dir, "exports") }

// exporterKind is the kind of exporter an operation acts on ("pulp", "filesystem").
func exporterKind(opID string) string {
	if strings.HasPrefix(opID, "exporters_core_pulp") {
		return "pulp"
	}
	return "filesystem"
}

// exporterBody is a good create body of an exporter of a kind: a new directory, and the
// fixture's repository when its type can be exported.
func (tr *tour) exporterBody(kind string) map[string]any {
	b := map[string]any{"name": tr.name("exporter"), "path": filepath.Join(tr.e.ExportRoot(), tr.name("dir"))}
	if kind == "pulp" {
		repos := []string{}
		if typ, ok := tr.e.Core.TypeOf(tr.s.f.Repository); ok {
			if _, porter := typ.(content.Porter); porter {
				repos = append(repos, tr.refs.Repository)
			}
		}
		b["repositories"] = repos
	}
	return b
}

// exporter makes an exporter of a kind and returns its href.
func (tr *tour) exporter(kind string) string {
	return tr.json("POST", href.Root+"exporters/core/"+kind+"/", tr.exporterBody(kind))["pulp_href"].(string)
}

// exportRequest is a good export request of a kind: a full pulp export; a filesystem
// export by a new exporter of the empty first version of a new repository (the tour
// reclaims the space of the fixture's: its files are no longer there to export).
func (tr *tour) exportRequest(kind string) (string, map[string]any) {
	if kind == "pulp" {
		return tr.vars["pulp_exporter_href"] + "exports/", map[string]any{}
	}
	repo := tr.json("POST", collection("repositories", tr.s.f.Repository), tr.createBody("repositories", ""))["pulp_href"].(string)
	return tr.exporter(kind) + "exports/", map[string]any{"repository_version": repo + "versions/0/"}
}

// export makes an export of a kind and returns its href: a filesystem export; a pulp
// export's row, made directly (the export task is tested on its own).
func (tr *tour) export(kind string) string {
	if kind == "filesystem" {
		p, body := tr.exportRequest(kind)
		return tr.created(tr.json("POST", p, body))
	}
	h := tr.exporter(kind)
	p, _ := href.Parse(h)
	ctx := context.Background()
	x, err := meta.ExporterByPulpID(ctx, tr.e.DB, p.ID)
	if err != nil {
		tr.e.T.Fatal(err)
	}
	attrs, _ := json.Marshal(map[string]any{"params": map[string]any{}, "exported_resources": []string{}, "output_file_info": map[string]any{},
		"toc_info": map[string]any{}})
	ex, err := meta.CreateExport(ctx, tr.e.DB, meta.Export{Owner: x.ID, Attrs: attrs})
	if err != nil {
		tr.e.T.Fatal(err)
	}
	return h + "exports/" + ex.PulpID + "/"
}

// callExporter calls an operation of the exporters that the generic cases do not
// cover; it reports whether it did. A pulp export's task is not waited for: the task
// is tested on its own.
func (tr *tour) callExporter(opID, suffix string) bool {
	if !strings.HasPrefix(opID, "exporters_") {
		return false
	}
	kind := exporterKind(opID)
	switch {
	case strings.HasSuffix(opID, "_exports_create") && kind == "pulp":
		p, body := tr.exportRequest(kind)
		ct, b := JSONBody(body)
		if code, m, _ := tr.e.Do("POST", p, ct, b); code != 202 {
			tr.e.T.Errorf("POST %s: %d %v", p, code, m)
		}
	case strings.HasSuffix(opID, "_exports_create"):
		p, body := tr.exportRequest(kind)
		tr.json("POST", p, body)
	case strings.HasSuffix(opID, "_exports_delete"):
		tr.send("DELETE", tr.export(kind), "", nil)
	case suffix == "create":
		tr.exporter(kind)
	case suffix == "delete":
		tr.send("DELETE", tr.exporter(kind), "", nil)
	default:
		return false
	}
	return true
}
