package ansible

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"pith/api/rest"
	"pith/blob"
	"pith/content/ansible/collection"
	"pith/meta"
	"pith/task"
)

// Deleting through Galaxy (PULP.md §3.13): a collection version, or every version of a
// collection, leaves every repository that holds it (a new version each) and, once no
// version keeps it, the database and the storage. Refused while other collections
// depend on what would go.

// DeleteTask removes collection versions from every repository and deletes them.
const DeleteTask = "pulp_ansible.app.tasks.deletion.delete_collection_version"

// DeleteArgs are the collection versions a delete removes (pulp_ids).
type DeleteArgs struct {
	Versions []string `json:"versions"`
}

// storedVersion is a stored collection version with its attrs.
type storedVersion struct {
	c meta.Content
	a cvAttrs
}

// storedVersionsOf are the stored versions of a collection (all, or the one version).
func (p *Plugin) storedVersionsOf(ctx context.Context, ns, name, version string) ([]storedVersion, error) {
	l := meta.List{Where: []string{"c.type = ?"}, Args: []any{CollectionVersionType}}
	if version != "" {
		l.And("c.repo_key = ?", repoKey(ns, name, version))
	} else {
		l.And(`c.repo_key LIKE ? ESCAPE '\'`, strings.NewReplacer("%", `\%`, "_", `\_`).Replace(ns+"."+name)+":%")
	}
	cs, _, err := meta.ListContent(ctx, p.db, l)
	out := make([]storedVersion, 0, len(cs))
	for _, c := range cs {
		a := decodeAttrs[cvAttrs](c.Attrs)
		if a.Namespace == ns && a.Name == name {
			out = append(out, storedVersion{c, a})
		}
	}
	return out, err
}

// dependents are the stored versions of other collections that depend on ns.name and
// that deleting the versions going would leave without a version in range (all of them,
// when the whole collection goes).
func (p *Plugin) dependents(ctx context.Context, ns, name string, going, staying []storedVersion) ([]string, error) {
	dep := ns + "." + name
	l := meta.List{Where: []string{"c.type = ?", `c.attrs LIKE ? ESCAPE '\'`}, Args: []any{CollectionVersionType, `%"` + strings.NewReplacer("%", `\%`, "_", `\_`).Replace(dep) + `"%`}}
	cs, _, err := meta.ListContent(ctx, p.db, l)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range cs {
		a := decodeAttrs[cvAttrs](c.Attrs)
		spec, ok := a.Dependencies[dep]
		if !ok || a.Namespace+"."+a.Name == dep {
			continue
		}
		rg, err := collection.ParseRange(spec)
		inRange := func(v storedVersion) bool {
			sem, _ := collection.ParseVersion(v.a.Version)
			return err != nil || rg.Match(sem)
		}
		if slices.ContainsFunc(going, inRange) && !slices.ContainsFunc(staying, inRange) {
			out = append(out, a.Namespace+"."+a.Name+" "+a.Version)
		}
	}
	slices.Sort(out)
	return out, nil
}

// galaxyDelete is DELETE collections/index/<ns>/<name>/ and …/versions/<v>/.
func (p *Plugin) galaxyDelete(w http.ResponseWriter, r *http.Request) error {
	if _, err := p.distribution(r.Context(), distBasePath(r)); err != nil {
		return err
	}
	ns, name, version := r.PathValue("namespace"), r.PathValue("name"), r.PathValue("version")
	all, err := p.storedVersionsOf(r.Context(), ns, name, "")
	if err != nil {
		return err
	}
	going := slices.DeleteFunc(slices.Clone(all), func(v storedVersion) bool { return version != "" && v.a.Version != version })
	if len(going) == 0 {
		return rest.ErrNotFound
	}
	staying := slices.DeleteFunc(slices.Clone(all), func(v storedVersion) bool { return version == "" || v.a.Version == version })
	deps, err := p.dependents(r.Context(), ns, name, going, staying)
	if err != nil {
		return err
	}
	if len(deps) > 0 {
		what := "Collection " + ns + "." + name
		if version != "" {
			what = "Collection version " + ns + "." + name + " " + version
		}
		rest.WriteJSON(w, http.StatusBadRequest, map[string]any{
			"detail":                        what + " could not be deleted because there are other collections that require it.",
			"dependent_collection_versions": deps})
		return nil
	}
	a := DeleteArgs{}
	var locks []string
	for _, v := range going {
		a.Versions = append(a.Versions, v.c.PulpID)
	}
	holders, err := p.holders(r.Context(), going)
	if err != nil {
		return err
	}
	for _, repo := range holders {
		locks = append(locks, repoHref(repo))
	}
	return p.core.Env().Dispatch(w, r, task.Spec{Name: DeleteTask, Args: a, Exclusive: locks})
}

// holders are the repositories (pulp_ids) whose latest version holds any of the
// versions.
func (p *Plugin) holders(ctx context.Context, vs []storedVersion) ([]string, error) {
	var out []string
	for _, v := range vs {
		rows, err := p.db.Query(ctx, `SELECT DISTINCT r.pulp_id FROM repository_content rc JOIN repositories r ON r.id = rc.repository_id
			WHERE rc.content_id = ? AND rc.version_removed IS NULL`, v.c.ID)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// runDelete removes the versions from every repository holding them, deletes the older
// versions of those repositories that no distribution serves (as pulp_ansible deletes
// every older version, so that nothing keeps them), then the versions themselves, with
// their artifacts, when nothing holds them any more.
func (p *Plugin) runDelete(ctx context.Context, r *task.Run) error {
	var a DeleteArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	ids, err := meta.ContentIDsByPulpID(ctx, p.db, a.Versions)
	if err != nil {
		return err
	}
	vs := make([]storedVersion, len(ids))
	for i, id := range ids {
		vs[i].c.ID = id
	}
	repos, err := p.holders(ctx, vs)
	if err != nil {
		return err
	}
	for _, id := range repos {
		if err := p.core.NewVersion(ctx, r, id, meta.Change{Remove: ids}); err != nil {
			return fmt.Errorf("remove from repository %s: %w", id, err)
		}
		repo, err := meta.RepositoryByPulpID(ctx, p.db, id)
		if err != nil {
			return err
		}
		protected, err := meta.ProtectedVersions(ctx, p.db, repo.ID, meta.Now())
		if err != nil {
			return err
		}
		old, _, err := meta.ListVersions(ctx, p.db, meta.List{Where: []string{"v.repository_id = ?", "v.number < ?"}, Args: []any{repo.ID, repo.LatestVersion}})
		if err != nil {
			return err
		}
		for _, v := range old {
			if protected[v.Number] {
				continue
			}
			if err := p.db.Tx(ctx, func(tx *meta.Tx) error { return meta.DeleteVersion(ctx, tx, v) }); err != nil {
				return fmt.Errorf("delete version %d of repository %s: %w", v.Number, repo.Name, err)
			}
		}
	}
	var digests []string
	err = p.db.Tx(ctx, func(tx *meta.Tx) error {
		var err error
		_, digests, err = meta.DeleteOrphans(ctx, tx, meta.Now(), ids)
		return err
	})
	if err != nil {
		return err
	}
	for _, d := range digests {
		if err := p.core.Store.Delete(ctx, d); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return fmt.Errorf("delete blob %s: %w", d, err)
		}
	}
	p.core.Invalidate()
	return nil
}
