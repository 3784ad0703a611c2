package ansible

import (
	"net/http"

	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/meta"
)

// tagResponseCount is a tag with how many collection versions carry it.
type tagCount struct {
	Name  string `json:"name" openapi:"readOnly,desc=The name of the Tag."`
	Count int64  `json:"count" openapi:"readOnly"`
}

// declareTags adds pulp_ansible_tags_list: every tag of the stored collection versions,
// by name, with its count.
func (p *Plugin) declareTags(t *rest.Table) {
	spec := rest.ListSpec{}
	pat := href.Root + "pulp_ansible/tags/"
	t.Add(rest.Op{ID: "pulp_ansible_tags_list", Viewset: "pulp_ansible/tags", Method: "GET", Path: pat, Pattern: pat + "{$}",
		Tag: "Pulp_Ansible: Tags", List: &spec, Responses: []openapi.Response{rest.Resp(200, t.Paginated(t.Schema("TagResponse", tagCount{})))},
		Handler: p.tagList(spec)})
}

func (p *Plugin) tagList(spec rest.ListSpec) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q, err := rest.ParseList(r, p.db.Dialect(), spec)
		if err != nil {
			return err
		}
		from := `contents c, json_each(c.attrs, '$.tags') t`
		tag := "t.value"
		if p.db.Dialect() == meta.Postgres {
			from, tag = `contents c, jsonb_array_elements_text(c.attrs::jsonb -> 'tags') t`, "t"
		}
		var total int64
		if err := p.db.QueryRow(r.Context(), `SELECT count(DISTINCT `+tag+`) FROM `+from+` WHERE c.type = ?`, CollectionVersionType).Scan(&total); err != nil {
			return err
		}
		rows, err := p.db.Query(r.Context(), `SELECT `+tag+`, count(*) FROM `+from+` WHERE c.type = ? GROUP BY `+tag+` ORDER BY `+tag+` LIMIT ? OFFSET ?`,
			CollectionVersionType, q.List.Limit, q.List.Offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		var items []any
		for rows.Next() {
			var tc tagCount
			if err := rows.Scan(&tc.Name, &tc.Count); err != nil {
				return err
			}
			items = append(items, tc)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return rest.WritePage(w, r, q, total, items)
	}
}
