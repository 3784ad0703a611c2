package content

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"pith/meta"
)

// Export and import in Pulp's format (exporters/core/pulp, importers/core/pulp): a tar
// of the artifacts, then JSON "resource" files, one per model, for each repository
// version (docs/research/pulp-export-import.md describes the format as Pulp writes it).
// The engine (package content/port, tasks in api) writes and reads the tar, the
// artifacts, the repositories and the ContentArtifact rows; a type that can be exported
// says how its units become rows and rows become units, through a Port.

// Porter is a type whose repository versions can be exported and imported.
type Porter interface {
	Port() Port
}

// Port says how one type's repository versions are exported and imported.
type Port struct {
	// App is the type's Django app label, in versions.json and as the prefix of its
	// repositories' pulp_type ("file", "rpm").
	App string
	// RepositoryResource is the member name of the type's repository resource in a
	// version's directory ("pulp_file.app.modelresource.FileRepositoryResource.json").
	RepositoryResource string
	// RepositoryColumns are the type's own columns of that resource, after Pulp's core
	// repository columns (pulp_type, name, description, retain_repo_versions,
	// retain_checkpoints, user_hidden, pulp_domain).
	RepositoryColumns []string
	// RepositoryRow renders a repository's values of RepositoryColumns (Cell forms).
	RepositoryRow func(repo meta.Repository) ([]any, error)
	// RepositoryFields are the type's fields of a repository created by an import
	// (create_repositories), by Pulp's API names, read from its row.
	RepositoryFields func(row Row) (map[string]any, error)
	// Export writes the type's resource files of one version.
	Export func(ctx context.Context, x PortOut) error
	// Import stores the units of one version's resource files, reporting each with
	// PortIn.Imported.
	Import func(ctx context.Context, x PortIn) error
}

// PortOut is one repository version being exported, as a Port's Export sees it.
type PortOut interface {
	// Q reads the metadata.
	Q() meta.Querier
	// Repository and Version are what is exported.
	Repository() meta.Repository
	Version() meta.Version
	// Domain is the pulp_domain cell of every row.
	Domain() string
	// Units calls fn with the version's units of the given types (all when none), in
	// batches of at most 500, by id.
	Units(ctx context.Context, fn func([]meta.Content) error, types ...string) error
	// Resource starts a resource file of the version's directory with these columns
	// ("pulp_rpm.app.modelresource.PackageResource.json"). A resource given no rows is
	// left out, as Pulp leaves empty ones out.
	Resource(name string, columns ...string) (RowWriter, error)
	// Map lists units under a repository's name in the version's content_mapping.json
	// (rpm writes one for every version, its distribution trees' sub-repositories under
	// their names); their files are exported with the version's.
	Map(repository string, units []meta.Content)
}

// RowWriter writes the rows of one resource file.
type RowWriter interface {
	// Row writes one row: a value per column, in order, rendered as Cell renders it.
	Row(values ...any) error
	// Close ends the file.
	Close() error
}

// JSON is a JSON field's value in a row: Pulp writes it as a JSON-encoded string, and
// an empty one ([], {}, null, "") as null.
type JSON struct{ V any }

// Cell renders a value as Pulp's export writes it (django-import-export widgets with
// coerce_to_string): strings as they are, numbers as decimal strings, booleans "1" or
// "0", nil (and nil pointers) as "", JSON values as a JSON string or null.
func Cell(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case *string:
		if x == nil {
			return "", nil
		}
		return *x, nil
	case bool:
		if x {
			return "1", nil
		}
		return "0", nil
	case *bool:
		if x == nil {
			return "", nil
		}
		return Cell(*x)
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case *int64:
		if x == nil {
			return "", nil
		}
		return strconv.FormatInt(*x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case JSON:
		b, err := AppendJSON(nil, x.V)
		if err != nil {
			return nil, err
		}
		switch string(b) {
		case "null", "[]", "{}", `""`:
			return nil, nil
		}
		return string(b), nil
	}
	return nil, fmt.Errorf("no cell form for %T", v)
}

// AppendJSON appends v encoded as JSON without escaping <, > and & (as Python's
// json.dumps, which Pulp's export writes). The lists of strings, numbers and
// booleans an rpm package's dependencies, files and changelogs are (thousands of
// cells a second in an export) are written directly; anything else goes through the
// encoder.
func AppendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		for i := 0; i < len(x); i++ {
			if c := x[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return encodeJSON(b, x)
			}
		}
		b = append(b, '"')
		b = append(b, x...)
		return append(b, '"'), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case []any:
		return appendList(b, x)
	case [][]any:
		return appendList(b, x)
	}
	return encodeJSON(b, v)
}

func appendList[E any](b []byte, xs []E) ([]byte, error) {
	if xs == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = AppendJSON(b, x); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

func encodeJSON(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// PortIn is one repository version being imported, as a Port's Import sees it. What
// the Import writes goes through Tx, which commits with the version or not at all.
type PortIn interface {
	// Tx is the import's transaction of this repository.
	Tx() *meta.Tx
	// Repository is the destination repository.
	Repository() meta.Repository
	// Rows calls fn with each row of a resource file of the version's directory, in
	// order; a file the export left out has no rows. Errors name the file and row.
	Rows(name string, fn func(Row) error) error
	// Files are the files of the unit an upstream id names, as the export's
	// ContentArtifact rows list them, each with its local artifact (imported first) or
	// none.
	Files(upstreamID string) []meta.ContentFile
	// Imported records that the unit with this upstream id is now the local unit id.
	// The new version of the destination holds the units its source repository's name
	// maps to, or every unit imported when there is no mapping.
	Imported(upstreamID string, id int64)
	// Mapped are the local ids of the units the version's content_mapping.json lists
	// under a repository name of the export (nil when the export has none: file); an
	// error names a unit listed that was not imported.
	Mapped(repository string) ([]int64, error)
}

// Row is one row of a resource file, its cells by column. Cells are read in the forms
// Pulp writes (strings) and in native JSON forms alike.
type Row map[string]json.RawMessage

// Str is a text cell; a missing cell or null is "".
func (r Row) Str(col string) (string, error) {
	raw, ok := r[col]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	return "", fmt.Errorf("column %s: %s is not text", col, clip(raw))
}

// Int is a number cell; ok is false when it is missing, null or "".
func (r Row) Int(col string) (n int64, ok bool, err error) {
	s, err := r.Str(col)
	if err != nil || s == "" {
		return 0, false, err
	}
	n, err = strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("column %s: %q is not an integer", col, s)
	}
	return n, true, nil
}

// Bool is a boolean cell ("1", "0", true, "True", …); ok is false when it is missing,
// null or "".
func (r Row) Bool(col string) (b bool, ok bool, err error) {
	raw := r[col]
	if json.Unmarshal(raw, &b) == nil {
		return b, true, nil
	}
	s, err := r.Str(col)
	if err != nil || s == "" {
		return false, false, err
	}
	switch strings.ToLower(s) {
	case "1", "true", "t", "yes", "y", "on":
		return true, true, nil
	case "0", "false", "f", "no", "n", "off":
		return false, true, nil
	}
	return false, false, fmt.Errorf("column %s: %q is not a boolean", col, s)
}

// JSON decodes a JSON cell into v: a JSON-encoded string, or the value itself. A
// missing cell, null or "" leaves v as it is and reports false.
func (r Row) JSON(col string, v any) (bool, error) {
	raw, ok := r[col]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return false, nil
		}
		raw = json.RawMessage(s)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("column %s: %s is not the JSON expected: %w", col, clip(raw), err)
	}
	return true, nil
}

// clip shortens a cell for an error message.
func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:77]) + "…"
	}
	return string(b)
}
