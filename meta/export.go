package meta

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Exporter kinds (Pulp's PulpExporter and FilesystemExporter).
const (
	ExporterPulp       = "pulp"
	ExporterFilesystem = "filesystem"
)

// Exporter writes repository content to a directory of the server: a pulp exporter
// exports its repositories' versions in Pulp's format, a filesystem exporter a
// publication or a version as plain files. Attrs hold a filesystem exporter's method.
type Exporter struct {
	ID     int64
	PulpID string
	Kind   string
	Name   string
	Path   string
	Attrs  json.RawMessage
	// Repositories are a pulp exporter's repositories (ids), in no order.
	Repositories []int64
	// LastExport is the id of the last successful export; nil for none.
	LastExport *int64
	Created    int64
	Updated    int64
}

const exporterCols = "x.id, x.pulp_id, x.kind, x.name, x.path, x.attrs, x.last_export, x.created, x.updated"

func scanExporter(r interface{ Scan(...any) error }) (Exporter, error) {
	var x Exporter
	var attrs string
	var last sql.NullInt64
	err := r.Scan(&x.ID, &x.PulpID, &x.Kind, &x.Name, &x.Path, &attrs, &last, &x.Created, &x.Updated)
	x.Attrs = json.RawMessage(attrs)
	if last.Valid {
		x.LastExport = &last.Int64
	}
	return x, err
}

// fillExporterRepos reads the repositories of the exporters.
func fillExporterRepos(ctx context.Context, q Querier, xs []Exporter) error {
	if len(xs) == 0 {
		return nil
	}
	at := map[int64]int{}
	ids := make([]int64, len(xs))
	for i, x := range xs {
		at[x.ID], ids[i] = i, x.ID
	}
	in, args := inList(ids)
	return scanRows(ctx, q, "SELECT exporter_id, repository_id FROM exporter_repositories WHERE exporter_id IN "+in+" ORDER BY repository_id", args,
		func(r *sql.Rows) error {
			var x, repo int64
			if err := r.Scan(&x, &repo); err != nil {
				return err
			}
			xs[at[x]].Repositories = append(xs[at[x]].Repositories, repo)
			return nil
		})
}

// CreateExporter inserts an exporter with its repositories; a taken name is
// ErrConflict.
func CreateExporter(ctx context.Context, q Querier, x Exporter) (Exporter, error) {
	now := Now()
	if x.PulpID == "" {
		x.PulpID = NewID()
	}
	err := q.QueryRow(ctx, `INSERT INTO exporters (pulp_id, kind, name, path, attrs, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		x.PulpID, x.Kind, x.Name, x.Path, rawText(x.Attrs), now, now).Scan(&x.ID)
	if IsUniqueViolation(err) {
		return Exporter{}, fmt.Errorf("exporter named %q: %w", x.Name, ErrConflict)
	}
	if err != nil {
		return Exporter{}, fmt.Errorf("insert exporter %q: %w", x.Name, err)
	}
	if err := setExporterRepos(ctx, q, x.ID, x.Repositories); err != nil {
		return Exporter{}, err
	}
	return ExporterByPulpID(ctx, q, x.PulpID)
}

func setExporterRepos(ctx context.Context, q Querier, id int64, repos []int64) error {
	if _, err := q.Exec(ctx, `DELETE FROM exporter_repositories WHERE exporter_id = ?`, id); err != nil {
		return err
	}
	for _, r := range repos {
		if _, err := q.Exec(ctx, `INSERT INTO exporter_repositories (exporter_id, repository_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, id, r); err != nil {
			return fmt.Errorf("exporter %d: add repository %d: %w", id, r, err)
		}
	}
	return nil
}

// ExporterByPulpID finds an exporter (of any kind) by its href UUID.
func ExporterByPulpID(ctx context.Context, q Querier, id string) (Exporter, error) {
	x, err := scanExporter(q.QueryRow(ctx, "SELECT "+exporterCols+" FROM exporters x WHERE x.pulp_id = ?", id))
	if err != nil {
		return x, noRows(err, "exporter", id)
	}
	xs := []Exporter{x}
	err = fillExporterRepos(ctx, q, xs)
	return xs[0], err
}

// ListExporters selects a page of exporters (alias x; the caller narrows the kind),
// newest first by default.
func ListExporters(ctx context.Context, q Querier, l List) ([]Exporter, int64, error) {
	xs, n, err := Page(ctx, q, exporterCols, "exporters x", "x.created DESC, x.id DESC", l, func(r *sql.Rows) (Exporter, error) { return scanExporter(r) })
	if err != nil {
		return nil, 0, err
	}
	return xs, n, fillExporterRepos(ctx, q, xs)
}

// UpdateExporter writes an exporter's name, path, attrs, last export and repositories.
func UpdateExporter(ctx context.Context, q Querier, x Exporter) error {
	_, err := q.Exec(ctx, `UPDATE exporters SET name = ?, path = ?, attrs = ?, last_export = ?, updated = ? WHERE id = ?`,
		x.Name, x.Path, rawText(x.Attrs), x.LastExport, Now(), x.ID)
	if IsUniqueViolation(err) {
		return fmt.Errorf("exporter named %q: %w", x.Name, ErrConflict)
	}
	if err != nil {
		return err
	}
	return setExporterRepos(ctx, q, x.ID, x.Repositories)
}

// DeleteExporter deletes an exporter, its exports (not their files, as in Pulp) and
// the roles held on it.
func DeleteExporter(ctx context.Context, q Querier, id int64) error {
	if err := ForgetGrants(ctx, q, "exporters", "id = ?", id); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM exporters WHERE id = ?`, id)
	return err
}

// Run is one run of an exporter (an Export) or of an importer (an Import). Attrs hold
// what Pulp shows of it, by Pulp's names: an export's params, exported_resources,
// output_file_info and toc_info; an import's params.
type Run struct {
	ID      int64
	PulpID  string
	Owner   int64 // the exporter's or importer's id
	Task    *string
	Attrs   json.RawMessage
	Created int64
	Updated int64
}

// Export is a run of an exporter; Import a run of an importer.
type (
	Export = Run
	Import = Run
)

// runs are the table of one kind of runs: its alias in lists and its owner column.
type runs struct{ table, alias, owner, what string }

var (
	exportRuns = runs{"exports", "e", "exporter_id", "export"}
	importRuns = runs{"imports", "m", "importer_id", "import"}
)

func (k runs) cols() string {
	a := k.alias + "."
	return a + "id, " + a + "pulp_id, " + a + k.owner + ", " + a + "task, " + a + "attrs, " + a + "created, " + a + "updated"
}

func scanRun(r interface{ Scan(...any) error }) (Run, error) {
	var m Run
	var attrs string
	err := r.Scan(&m.ID, &m.PulpID, &m.Owner, &m.Task, &attrs, &m.Created, &m.Updated)
	m.Attrs = json.RawMessage(attrs)
	return m, err
}

func (k runs) create(ctx context.Context, q Querier, m Run) (Run, error) {
	now := Now()
	if m.PulpID == "" {
		m.PulpID = NewID()
	}
	err := q.QueryRow(ctx, `INSERT INTO `+k.table+` (pulp_id, `+k.owner+`, task, attrs, created, updated) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		m.PulpID, m.Owner, m.Task, rawText(m.Attrs), now, now).Scan(&m.ID)
	if err != nil {
		return Run{}, fmt.Errorf("insert %s of %s %d: %w", k.what, k.owner[:len(k.owner)-3], m.Owner, err)
	}
	m.Created, m.Updated = now, now
	return m, nil
}

func (k runs) byPulpID(ctx context.Context, q Querier, owner int64, id string) (Run, error) {
	m, err := scanRun(q.QueryRow(ctx, "SELECT "+k.cols()+" FROM "+k.table+" "+k.alias+" WHERE "+k.alias+"."+k.owner+" = ? AND "+k.alias+".pulp_id = ?", owner, id))
	return m, noRows(err, k.what, id)
}

func (k runs) list(ctx context.Context, q Querier, l List) ([]Run, int64, error) {
	a := k.alias
	return Page(ctx, q, k.cols(), k.table+" "+a, a+".created DESC, "+a+".id DESC", l, func(r *sql.Rows) (Run, error) { return scanRun(r) })
}

// CreateExport inserts an export of an exporter (Owner).
func CreateExport(ctx context.Context, q Querier, e Export) (Export, error) {
	return exportRuns.create(ctx, q, e)
}

// ExportByPulpID finds an export of an exporter by its href UUID.
func ExportByPulpID(ctx context.Context, q Querier, exporterID int64, id string) (Export, error) {
	return exportRuns.byPulpID(ctx, q, exporterID, id)
}

// ExportByID finds an export by its row id.
func ExportByID(ctx context.Context, q Querier, id int64) (Export, error) {
	e, err := scanRun(q.QueryRow(ctx, "SELECT "+exportRuns.cols()+" FROM exports e WHERE e.id = ?", id))
	return e, noRows(err, "export", fmt.Sprint(id))
}

// ListExports selects a page of exports (alias e; the caller narrows the exporter),
// newest first by default.
func ListExports(ctx context.Context, q Querier, l List) ([]Export, int64, error) {
	return exportRuns.list(ctx, q, l)
}

// FinishExport writes what an export wrote and makes it its exporter's last export.
func FinishExport(ctx context.Context, q Querier, e Export) error {
	if _, err := q.Exec(ctx, `UPDATE exports SET attrs = ?, updated = ? WHERE id = ?`, rawText(e.Attrs), Now(), e.ID); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `UPDATE exporters SET last_export = ? WHERE id = ?`, e.ID, e.Owner)
	return err
}

// DeleteExport deletes an export's row; its files stay, as in Pulp.
func DeleteExport(ctx context.Context, q Querier, id int64) error {
	if _, err := q.Exec(ctx, `UPDATE exporters SET last_export = NULL WHERE last_export = ?`, id); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM exports WHERE id = ?`, id)
	return err
}

// Importer imports Pulp exports; Mapping is its repo_mapping: a source repository's
// name to a local repository's id.
type Importer struct {
	ID      int64
	PulpID  string
	Name    string
	Mapping map[string]int64
	// MappedNames are the local repositories' names by source name, as read.
	MappedNames map[string]string
	Created     int64
	Updated     int64
}

const importerCols = "i.id, i.pulp_id, i.name, i.created, i.updated"

func scanImporter(r interface{ Scan(...any) error }) (Importer, error) {
	var x Importer
	err := r.Scan(&x.ID, &x.PulpID, &x.Name, &x.Created, &x.Updated)
	return x, err
}

func fillImporterMappings(ctx context.Context, q Querier, xs []Importer) error {
	if len(xs) == 0 {
		return nil
	}
	at := map[int64]int{}
	ids := make([]int64, len(xs))
	for i, x := range xs {
		at[x.ID], ids[i] = i, x.ID
		xs[i].Mapping, xs[i].MappedNames = map[string]int64{}, map[string]string{}
	}
	in, args := inList(ids)
	return scanRows(ctx, q, `SELECT ir.importer_id, ir.source_name, ir.repository_id, r.name FROM importer_repositories ir
		JOIN repositories r ON r.id = ir.repository_id WHERE ir.importer_id IN `+in, args,
		func(r *sql.Rows) error {
			var x, repo int64
			var src, name string
			if err := r.Scan(&x, &src, &repo, &name); err != nil {
				return err
			}
			xs[at[x]].Mapping[src], xs[at[x]].MappedNames[src] = repo, name
			return nil
		})
}

func setImporterMapping(ctx context.Context, q Querier, id int64, m map[string]int64) error {
	if _, err := q.Exec(ctx, `DELETE FROM importer_repositories WHERE importer_id = ?`, id); err != nil {
		return err
	}
	for src, repo := range m {
		if _, err := q.Exec(ctx, `INSERT INTO importer_repositories (importer_id, source_name, repository_id) VALUES (?, ?, ?)`, id, src, repo); err != nil {
			return fmt.Errorf("importer %d: map %q: %w", id, src, err)
		}
	}
	return nil
}

// CreateImporter inserts an importer with its mapping; a taken name is ErrConflict.
func CreateImporter(ctx context.Context, q Querier, x Importer) (Importer, error) {
	now := Now()
	if x.PulpID == "" {
		x.PulpID = NewID()
	}
	err := q.QueryRow(ctx, `INSERT INTO importers (pulp_id, name, created, updated) VALUES (?, ?, ?, ?) RETURNING id`, x.PulpID, x.Name, now, now).Scan(&x.ID)
	if IsUniqueViolation(err) {
		return Importer{}, fmt.Errorf("importer named %q: %w", x.Name, ErrConflict)
	}
	if err != nil {
		return Importer{}, fmt.Errorf("insert importer %q: %w", x.Name, err)
	}
	if err := setImporterMapping(ctx, q, x.ID, x.Mapping); err != nil {
		return Importer{}, err
	}
	return ImporterByPulpID(ctx, q, x.PulpID)
}

// ImporterByPulpID finds an importer by its href UUID.
func ImporterByPulpID(ctx context.Context, q Querier, id string) (Importer, error) {
	x, err := scanImporter(q.QueryRow(ctx, "SELECT "+importerCols+" FROM importers i WHERE i.pulp_id = ?", id))
	if err != nil {
		return x, noRows(err, "importer", id)
	}
	xs := []Importer{x}
	err = fillImporterMappings(ctx, q, xs)
	return xs[0], err
}

// ListImporters selects a page of importers (alias i), newest first by default.
func ListImporters(ctx context.Context, q Querier, l List) ([]Importer, int64, error) {
	xs, n, err := Page(ctx, q, importerCols, "importers i", "i.created DESC, i.id DESC", l, func(r *sql.Rows) (Importer, error) { return scanImporter(r) })
	if err != nil {
		return nil, 0, err
	}
	return xs, n, fillImporterMappings(ctx, q, xs)
}

// UpdateImporter writes an importer's name and mapping.
func UpdateImporter(ctx context.Context, q Querier, x Importer) error {
	_, err := q.Exec(ctx, `UPDATE importers SET name = ?, updated = ? WHERE id = ?`, x.Name, Now(), x.ID)
	if IsUniqueViolation(err) {
		return fmt.Errorf("importer named %q: %w", x.Name, ErrConflict)
	}
	if err != nil {
		return err
	}
	return setImporterMapping(ctx, q, x.ID, x.Mapping)
}

// DeleteImporter deletes an importer, its imports and the roles held on it.
func DeleteImporter(ctx context.Context, q Querier, id int64) error {
	if err := ForgetGrants(ctx, q, "importers", "id = ?", id); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `DELETE FROM importers WHERE id = ?`, id)
	return err
}

// CreateImport inserts an import of an importer (Owner).
func CreateImport(ctx context.Context, q Querier, m Import) (Import, error) {
	return importRuns.create(ctx, q, m)
}

// ImportByPulpID finds an import of an importer by its href UUID.
func ImportByPulpID(ctx context.Context, q Querier, importerID int64, id string) (Import, error) {
	return importRuns.byPulpID(ctx, q, importerID, id)
}

// ListImports selects a page of imports (alias m; the caller narrows the importer),
// newest first by default.
func ListImports(ctx context.Context, q Querier, l List) ([]Import, int64, error) {
	return importRuns.list(ctx, q, l)
}

// DeleteImport deletes an import's row.
func DeleteImport(ctx context.Context, q Querier, id int64) error {
	_, err := q.Exec(ctx, `DELETE FROM imports WHERE id = ?`, id)
	return err
}
