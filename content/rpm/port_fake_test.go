package rpm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"pith/content"
	"pith/meta"
)

// Fakes of the export/import engine's side of content.Port: an export collects each
// resource file as rows whose cells went through content.Cell and a JSON round trip,
// so that an import reads exactly the string forms a tar would hold.

// portFiles are the resource files of one exported version, by member name.
type portFiles struct {
	rows    map[string][]content.Row
	columns map[string][]string
	order   []string // resource files in the order written
	mapping map[string][]string
	// added are the files exported beside the units' own, by unit upstream id.
	added map[string][]addedFile
}

type addedFile struct {
	path string
	data []byte
}

// portOut is one version being exported into portFiles.
type portOut struct {
	db   *meta.DB
	repo meta.Repository
	v    meta.Version
	out  *portFiles
}

func newPortOut(db *meta.DB, repo meta.Repository, v meta.Version) *portOut {
	return &portOut{db: db, repo: repo, v: v, out: &portFiles{rows: map[string][]content.Row{}, columns: map[string][]string{},
		mapping: map[string][]string{}, added: map[string][]addedFile{}}}
}

func (o *portOut) Q() meta.Querier             { return o.db }
func (o *portOut) Repository() meta.Repository { return o.repo }
func (o *portOut) Version() meta.Version       { return o.v }
func (o *portOut) Domain() string              { return "00000000-0000-0000-0000-00000000d0d0" }

func (o *portOut) Units(ctx context.Context, fn func([]meta.Content) error, types ...string) error {
	ids, err := meta.VersionContentIDs(ctx, o.db, o.repo.ID, o.v.Number, types...)
	if err != nil {
		return err
	}
	for part := range slices.Chunk(ids, 500) {
		marks := strings.TrimSuffix(strings.Repeat("?,", len(part)), ",")
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		units, _, err := meta.ListContent(ctx, o.db, meta.List{Where: []string{"c.id IN (" + marks + ")"}, Args: args})
		if err != nil {
			return err
		}
		if err := fn(units); err != nil {
			return err
		}
	}
	return nil
}

func (o *portOut) Resource(name string, columns ...string) (content.RowWriter, error) {
	if _, dup := o.out.columns[name]; dup {
		return nil, fmt.Errorf("%s written twice", name)
	}
	o.out.columns[name] = columns
	o.out.order = append(o.out.order, name)
	return &rowWriter{name: name, columns: columns, out: o.out}, nil
}

func (o *portOut) Map(repository string, units []meta.Content) {
	for _, u := range units {
		o.out.mapping[repository] = append(o.out.mapping[repository], u.PulpID)
	}
}

// AddFile is the optional method the rpm Port uses for a tree's .treeinfo.
func (o *portOut) AddFile(u meta.Content, path string, data []byte) error {
	o.out.added[u.PulpID] = append(o.out.added[u.PulpID], addedFile{path, data})
	return nil
}

type rowWriter struct {
	name    string
	columns []string
	out     *portFiles
	closed  bool
}

func (w *rowWriter) Row(values ...any) error {
	if w.closed {
		return fmt.Errorf("%s: row after close", w.name)
	}
	if len(values) != len(w.columns) {
		return fmt.Errorf("%s: %d values for %d columns", w.name, len(values), len(w.columns))
	}
	m := map[string]any{}
	for i, v := range values {
		cell, err := content.Cell(v)
		if err != nil {
			return fmt.Errorf("%s: column %s: %w", w.name, w.columns[i], err)
		}
		m[w.columns[i]] = cell
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var row content.Row
	if err := json.Unmarshal(b, &row); err != nil {
		return err
	}
	w.out.rows[w.name] = append(w.out.rows[w.name], row)
	return nil
}

func (w *rowWriter) Close() error {
	if w.closed {
		return fmt.Errorf("%s closed twice", w.name)
	}
	w.closed = true
	return nil
}

// portIn is one version being imported from portFiles.
type portIn struct {
	tx       *meta.Tx
	repo     meta.Repository
	in       *portFiles
	files    map[string][]meta.ContentFile // by upstream id
	imported map[string]int64
}

func (i *portIn) Tx() *meta.Tx                               { return i.tx }
func (i *portIn) Repository() meta.Repository                { return i.repo }
func (i *portIn) Files(upstreamID string) []meta.ContentFile { return i.files[upstreamID] }
func (i *portIn) Imported(upstreamID string, id int64)       { i.imported[upstreamID] = id }
func (i *portIn) Mapped(repository string) ([]int64, error) {
	var ids []int64
	for _, up := range i.in.mapping[repository] {
		id, ok := i.imported[up]
		if !ok {
			return nil, fmt.Errorf("content_mapping.json lists unit %s under %q, which no resource file holds", up, repository)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (i *portIn) Rows(name string, fn func(content.Row) error) error {
	for n, r := range i.in.rows[name] {
		if err := fn(r); err != nil {
			return fmt.Errorf("%s: row %d: %w", name, n+1, err)
		}
	}
	return nil
}
