package api

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"reflect"
	"strings"
	"time"

	"pith/api/href"
	"pith/api/rest"
	"pith/content"
	"pith/content/download"
	"pith/meta"
	"pith/task"
)

// Replication, as Pulp's replicate_distributions does it: for each type that is a
// content.Replicator and that the upstream's status lists, the upstream's distributions
// of the type are listed (filtered by q_select) and each one that serves something gets
// a local remote, repository and distribution of the same name, the remote and the
// repository made at once, the rest through the general tasks in the replication's task
// group, with a sync of the repository; then what the upstream no longer has is deleted
// as the upstream Pulp's policy says. Every task of the group holds the upstream Pulp
// shared; the finishing task holds it exclusively, so it runs after all of them, fails
// the group if one failed, and otherwise records when the replication started.

// The task names, as Pulp names them.
const (
	replicateTask = "pulpcore.app.tasks.replica.replicate_distributions"
	finalizeTask  = "pulpcore.app.tasks.replica.finalize_replication"
)

// Locks: one replication at a time (Pulp's pdrn:<domain>:servers), and the lock of
// distribution creation and update (distCreate's).
const (
	upstreamsLock     = "/api/v3/upstream-pulps/"
	distributionsLock = "/api/v3/distributions/"
)

// upstreamLabel is the label a replication puts on what it makes, valued with the
// upstream Pulp's pulp_id (Pulp's UpstreamPulp label).
const upstreamLabel = "UpstreamPulp"

// Bounds of what a replication reads upstream.
const (
	upstreamPage      = 100      // distributions asked per request, as pulp-glue does
	maxUpstreamDists  = 100_000  // distributions of one type
	maxUpstreamAnswer = 16 << 20 // bytes of one answer
)

type replicateArgs struct {
	Upstream string `json:"upstream_pulp"`
	// QSelect replaces the upstream Pulp's own q_select; nothing is deleted then.
	QSelect *string `json:"q_select,omitempty"`
}

type finalizeArgs struct {
	Upstream string `json:"upstream_pulp"`
}

// upstreamClient reads an upstream's API.
type upstreamClient struct {
	d    *download.Downloader
	name string // the upstream Pulp's name, for errors
	base string // base_url, without a trailing slash
	api  string // base + api_root [+ domain/] + "api/v3/"
}

func newUpstreamClient(u meta.UpstreamPulp) (*upstreamClient, error) {
	in := upstreamSettings(u)
	cfg := download.Config{URL: u.BaseURL, CACert: deref(in.CACert), ClientCert: deref(in.ClientCert), ClientKey: deref(in.ClientKey),
		TLSValidation: in.TLSValidation, Username: deref(in.Username), Password: deref(in.Password), DownloadConcurrency: 2}
	if in.MaxRetries != nil {
		cfg.MaxRetries = int(*in.MaxRetries)
		if cfg.MaxRetries == 0 {
			cfg.MaxRetries = -1 // explicitly none, as a remote's
		}
	}
	d, err := download.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("upstream pulp %q: %w", u.Name, err)
	}
	c := &upstreamClient{d: d, name: u.Name, base: strings.TrimSuffix(u.BaseURL, "/")}
	c.api = c.base + in.APIRoot
	if in.Domain != nil {
		c.api += *in.Domain + "/"
	}
	c.api += "api/v3/"
	return c, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// get reads an answer of the upstream's API (an href, or a URL below its base_url).
func (c *upstreamClient) get(ctx context.Context, h string, v any) error {
	u := h
	if strings.HasPrefix(h, "/") {
		u = c.base + h
	} else if !strings.HasPrefix(h, c.base+"/") {
		return fmt.Errorf("upstream pulp %q (%s) named %q, which is not below its base_url", c.name, c.base, h)
	}
	resp, err := c.d.Get(ctx, u)
	if err != nil {
		return fmt.Errorf("upstream pulp %q (%s): %w", c.name, c.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxUpstreamAnswer+1))
	if err == nil && len(b) > maxUpstreamAnswer {
		err = fmt.Errorf("answer larger than %d MiB", maxUpstreamAnswer>>20)
	}
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return fmt.Errorf("upstream pulp %q (%s): %s: %w", c.name, c.base, u, err)
	}
	return nil
}

// components are the components the upstream's status lists.
func (c *upstreamClient) components(ctx context.Context) (map[string]bool, error) {
	var st struct {
		Versions []struct {
			Component string `json:"component"`
		} `json:"versions"`
	}
	if err := c.get(ctx, c.api+"status/", &st); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, v := range st.Versions {
		out[v.Component] = true
	}
	return out, nil
}

// distributions lists the upstream's distributions of a type, a page at a time.
func (c *upstreamClient) distributions(ctx context.Context, typ string, q *string) ([]content.UpstreamDistribution, error) {
	var out []content.UpstreamDistribution
	for offset := 0; ; offset += upstreamPage {
		v := url.Values{"limit": {fmt.Sprint(upstreamPage)}, "offset": {fmt.Sprint(offset)}}
		if q != nil && *q != "" {
			v.Set("q", *q)
		}
		var page struct {
			Count   int64                          `json:"count"`
			Results []content.UpstreamDistribution `json:"results"`
		}
		if err := c.get(ctx, c.api+"distributions/"+href.Segment(typ)+"/?"+v.Encode(), &page); err != nil {
			return nil, err
		}
		out = append(out, page.Results...)
		if len(out) > maxUpstreamDists {
			return nil, fmt.Errorf("upstream pulp %q (%s) has more than %d %s distributions", c.name, c.base, maxUpstreamDists, typ)
		}
		if len(page.Results) < upstreamPage || int64(len(out)) >= page.Count {
			return out, nil
		}
	}
}

// replication is one run of the replicate task.
type replication struct {
	c        *crud
	r        *task.Run
	up       meta.UpstreamPulp
	settings upstreamIn
	client   *upstreamClient
}

func (c *crud) replicate(ctx context.Context, r *task.Run) error {
	var a replicateArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	up, err := meta.UpstreamByPulpID(ctx, c.core.DB, a.Upstream)
	if err != nil {
		return err
	}
	client, err := newUpstreamClient(up)
	if err != nil {
		return err
	}
	defer client.d.CloseIdleConnections()
	rp := &replication{c: c, r: r, up: up, settings: upstreamSettings(up), client: client}
	q := rp.settings.QSelect
	if a.QSelect != nil {
		q = a.QSelect
	}
	have, err := client.components(ctx)
	if err != nil {
		return err
	}
	for _, t := range c.core.Types() {
		rt, ok := t.(content.Replicator)
		if !ok {
			continue
		}
		rep := rt.Replica()
		if !have[rep.Component] {
			continue // the upstream does not serve the type (Pulp's has_plugin)
		}
		if err := rp.replicateType(ctx, rep, q, a.QSelect == nil); err != nil {
			return err
		}
	}
	return rp.dispatch(ctx, task.Spec{Name: finalizeTask, Args: finalizeArgs{Upstream: up.PulpID}, Exclusive: []string{upstreamHref(up.PulpID)}})
}

// dispatch queues a task of the replication's group; every one but the finishing task
// holds the upstream Pulp shared.
func (rp *replication) dispatch(ctx context.Context, spec task.Spec) error {
	if spec.Name != finalizeTask {
		spec.Shared = append(spec.Shared, upstreamHref(rp.up.PulpID))
	}
	_, err := rp.r.Dispatch(ctx, spec)
	return err
}

// labels are what a replication labels its objects with. Pulp means to add the
// upstream's labels too, but reads them where they never are.
func (rp *replication) labels() map[string]string {
	return map[string]string{upstreamLabel: rp.up.PulpID}
}

// managed reports whether the replication may change or delete an object with labels.
func (rp *replication) managed(l meta.Labels) bool {
	return rp.settings.Policy != policyLabeled || l[upstreamLabel] == rp.up.PulpID
}

// body is fields as a general task's body.
func body(fields map[string]any) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range fields {
		b, _ := json.Marshal(v)
		out[k] = b
	}
	return out
}

func (rp *replication) replicateType(ctx context.Context, rep content.Replica, q *string, deleteMissing bool) error {
	dists, err := rp.client.distributions(ctx, rep.Type, q)
	if err != nil {
		return err
	}
	type pending struct {
		repo meta.Repository
		dist content.UpstreamDistribution
	}
	var names []string
	var todo []pending
	for _, d := range dists {
		if d.Name == "" || d.BasePath == "" {
			return fmt.Errorf("upstream pulp %q (%s) listed a %s distribution without a name or base_path", rp.up.Name, rp.client.base, rep.Type)
		}
		remote, err := rp.remote(ctx, rep, d)
		if err != nil {
			return err
		}
		if remote == nil {
			continue // serves nothing; removed below like one upstream no longer has
		}
		repo, err := rp.repository(ctx, rep, *remote)
		if err != nil {
			return err
		}
		if repo == nil {
			continue // a repository of that name the replication does not manage
		}
		if rp.needsSync(d) {
			spec := rep.Sync(repo.PulpID, remote.PulpID)
			spec.Exclusive = append(spec.Exclusive, href.Repository(repo.Type, repo.PulpID))
			spec.Shared = append(spec.Shared, href.Remote(remote.Type, remote.PulpID))
			if err := rp.dispatch(ctx, spec); err != nil {
				return err
			}
		}
		names = append(names, d.Name)
		todo = append(todo, pending{*repo, d})
	}
	// Distributions before deletion: one renamed upstream is renamed here at once, so
	// that it is not among what is deleted.
	for _, p := range todo {
		if err := rp.distribution(ctx, rep, p.repo, p.dist); err != nil {
			return err
		}
	}
	if !deleteMissing || rp.settings.Policy == policyNoDelete {
		return nil
	}
	return rp.removeMissing(ctx, rep, names)
}

// remote makes or updates the remote of an upstream distribution; nil when the
// distribution serves nothing or the remote of its name is not the replication's.
func (rp *replication) remote(ctx context.Context, rep content.Replica, d content.UpstreamDistribution) (*meta.Remote, error) {
	u, err := rep.RemoteURL(ctx, rp.client.get, d)
	if err != nil || u == "" {
		return nil, err
	}
	if strings.HasPrefix(u, "/") {
		u = rp.client.base + u
	}
	s := rp.settings
	fields := map[string]any{"url": u, "pulp_labels": rp.labels(), "ca_cert": s.CACert, "tls_validation": s.TLSValidation,
		"client_cert": s.ClientCert, "client_key": s.ClientKey}
	if s.RemotePolicy != nil {
		fields["policy"] = *s.RemotePolicy
	}
	if rep.SignIn {
		fields["username"], fields["password"] = s.Username, s.Password
	}
	for name, v := range map[string]any{"download_concurrency": s.DownloadConcurrency, "max_retries": s.MaxRetries, "total_timeout": s.TotalTimeout,
		"connect_timeout": s.ConnectTimeout, "sock_connect_timeout": s.SockConnectTimeout, "sock_read_timeout": s.SockReadTimeout} {
		if !reflect.ValueOf(v).IsNil() {
			fields[name] = v
		}
	}
	k, ok := rp.c.core.Table().RemoteKind(rep.Remote())
	if !ok {
		return nil, fmt.Errorf("replication: no remote kind %q", rep.Remote())
	}
	db := rp.c.core.DB
	found, _, err := meta.ListRemotes(ctx, db, meta.List{Where: []string{"m.name = ?"}, Args: []any{d.Name}})
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		fields["name"] = d.Name
		m, err := applyRemote(meta.Remote{}, k, body(fields), false)
		if err != nil {
			return nil, fmt.Errorf("remote %q for upstream distribution %q: %w", d.Name, d.Name, err)
		}
		m, err = meta.CreateRemote(ctx, db, m)
		return &m, err
	}
	cur := found[0]
	if cur.Type != rep.Remote() {
		return nil, fmt.Errorf("a %s remote is named %q, so the %s distribution %q of upstream pulp %q cannot be replicated", cur.Type, d.Name, rep.Type, d.Name, rp.up.Name)
	}
	if !rp.managed(cur.Labels) {
		return nil, nil
	}
	raw := body(fields)
	next, err := applyRemote(cur, k, raw, true)
	if err != nil {
		return nil, fmt.Errorf("remote %q: %w", d.Name, err)
	}
	if next.URL != cur.URL || next.Policy != cur.Policy || !maps.Equal(next.Labels, cur.Labels) || !sameJSON(next.Attrs, cur.Attrs) {
		err = rp.dispatch(ctx, task.Spec{Name: updateTask, Args: updateArgs{Kind: kindRemote, ID: cur.PulpID, Body: raw, Partial: true},
			Exclusive: []string{href.Remote(cur.Type, cur.PulpID)}})
	}
	return &cur, err
}

// repository makes or updates the repository of a remote; nil when the repository of
// its name is not the replication's.
func (rp *replication) repository(ctx context.Context, rep content.Replica, remote meta.Remote) (*meta.Repository, error) {
	fields := rep.Repository(remote.URL)
	fields["pulp_labels"] = rp.labels()
	k, ok := rp.c.core.Table().RepoKind(rep.Type)
	if !ok {
		return nil, fmt.Errorf("replication: no repository kind %q", rep.Type)
	}
	db := rp.c.core.DB
	found, _, err := meta.ListRepositories(ctx, db, meta.List{Where: []string{"r.name = ?", "r.sub_of IS NULL"}, Args: []any{remote.Name}})
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		fields["name"] = remote.Name
		repo, err := applyRepo(ctx, db, meta.Repository{}, k, body(fields), false)
		if err != nil {
			return nil, fmt.Errorf("repository %q: %w", remote.Name, err)
		}
		repo, err = meta.CreateRepository(ctx, db, repo)
		return &repo, err
	}
	cur := found[0]
	if cur.Type != rep.Type {
		return nil, fmt.Errorf("a %s repository is named %q, so the %s distribution %q of upstream pulp %q cannot be replicated", cur.Type, remote.Name, rep.Type, remote.Name, rp.up.Name)
	}
	if !rp.managed(cur.Labels) {
		return nil, nil
	}
	raw := body(fields)
	next, err := applyRepo(ctx, db, cur, k, raw, true)
	if err != nil {
		return nil, fmt.Errorf("repository %q: %w", remote.Name, err)
	}
	if !maps.Equal(next.Labels, cur.Labels) || !sameJSON(next.Attrs, cur.Attrs) {
		err = rp.dispatch(ctx, task.Spec{Name: updateTask, Args: updateArgs{Kind: kindRepository, ID: cur.PulpID, Body: raw, Partial: true},
			Exclusive: []string{href.Repository(cur.Type, cur.PulpID)}})
	}
	return &cur, err
}

// needsSync is Pulp's requires_syncing: a distribution whose content has not changed
// since the last replication started (and the upstream Pulp has not changed since
// either) is not synced again.
func (rp *replication) needsSync(d content.UpstreamDistribution) bool {
	last := rp.up.LastReplication
	if d.NoContentChangeSince == nil || last == nil || *last < rp.up.Updated {
		return true
	}
	since, err := time.Parse(time.RFC3339Nano, *d.NoContentChangeSince)
	return err != nil || *last <= since.UnixMicro()
}

// distribution makes or updates the distribution of an upstream distribution, serving
// the repository.
func (rp *replication) distribution(ctx context.Context, rep content.Replica, repo meta.Repository, d content.UpstreamDistribution) error {
	repoHref := href.Repository(repo.Type, repo.PulpID)
	k, ok := rp.c.core.Table().DistKind(rep.Type)
	if !ok {
		return fmt.Errorf("replication: no distribution kind %q", rep.Type)
	}
	fields := map[string]any{"base_path": d.BasePath, "repository": repoHref, "pulp_labels": rp.labels()}
	if k.Publications != "" {
		fields["publication"] = nil
	}
	db := rp.c.core.DB
	lock := task.Spec{Exclusive: []string{distributionsLock}, Shared: []string{repoHref}}
	update := func(cur meta.Distribution) error {
		raw := body(fields)
		next, err := applyDist(ctx, db, cur, k, raw, true)
		if err != nil {
			return fmt.Errorf("distribution %q: %w", d.Name, err)
		}
		if next.BasePath == cur.BasePath && ptrEq(next.RepositoryID, cur.RepositoryID) && next.PublicationID == nil && next.VersionID == nil && maps.Equal(next.Labels, cur.Labels) {
			return nil
		}
		spec := lock
		spec.Name, spec.Args = updateTask, updateArgs{Kind: kindDistribution, ID: cur.PulpID, Body: raw, Partial: true}
		return rp.dispatch(ctx, spec)
	}
	found, _, err := meta.ListDistributions(ctx, db, meta.List{Where: []string{"d.name = ?"}, Args: []any{d.Name}})
	if err != nil {
		return err
	}
	if len(found) > 0 {
		cur := found[0]
		if cur.Type != rep.Type {
			return fmt.Errorf("a %s distribution is named %q, so the %s distribution %q of upstream pulp %q cannot be replicated", cur.Type, d.Name, rep.Type, d.Name, rp.up.Name)
		}
		if !rp.managed(cur.Labels) {
			return nil
		}
		return update(cur)
	}
	// Renamed upstream: the managed distribution at its base path takes the new name now.
	found, _, err = meta.ListDistributions(ctx, db, meta.List{Where: []string{"d.base_path = ?", "d.type = ?"}, Args: []any{d.BasePath, rep.Type}})
	if err != nil {
		return err
	}
	if len(found) > 0 && rp.managed(found[0].Labels) {
		cur := found[0]
		cur.Name = d.Name
		if err := meta.UpdateDistribution(ctx, db, cur, meta.Now()+rp.c.gracePeriod.Microseconds()); err != nil {
			return fmt.Errorf("distribution at %q: rename to %q: %w", d.BasePath, d.Name, err)
		}
		return update(cur)
	}
	fields["name"] = d.Name
	spec := lock
	spec.Name, spec.Args = rest.CreateTask, rest.CreateArgs{Kind: kindDistribution, Type: rep.Type, Body: body(fields)}
	return rp.dispatch(ctx, spec)
}

// removeMissing deletes the distributions, repositories and remotes of the type that
// the upstream no longer has (under policy labeled, only those replications made).
func (rp *replication) removeMissing(ctx context.Context, rep content.Replica, names []string) error {
	keep := map[string]bool{}
	for _, n := range names {
		keep[n] = true
	}
	db := rp.c.core.DB
	l := meta.List{Where: []string{"d.type = ?"}, Args: []any{rep.Type}}
	dists, _, err := meta.ListDistributions(ctx, db, l)
	if err != nil {
		return err
	}
	for _, d := range dists {
		if !keep[d.Name] && rp.managed(d.Labels) {
			err := rp.dispatch(ctx, task.Spec{Name: deleteTask, Args: deleteArgs{Kind: kindDistribution, ID: d.PulpID}, Exclusive: []string{distributionsLock}})
			if err != nil {
				return err
			}
		}
	}
	repos, _, err := meta.ListRepositories(ctx, db, meta.List{Where: []string{"r.type = ?", "r.sub_of IS NULL"}, Args: []any{rep.Type}})
	if err != nil {
		return err
	}
	for _, x := range repos {
		if !keep[x.Name] && rp.managed(x.Labels) {
			err := rp.dispatch(ctx, task.Spec{Name: deleteTask, Args: deleteArgs{Kind: kindRepository, ID: x.PulpID},
				Exclusive: []string{distributionsLock, href.Repository(x.Type, x.PulpID)}})
			if err != nil {
				return err
			}
		}
	}
	remotes, _, err := meta.ListRemotes(ctx, db, meta.List{Where: []string{"m.type = ?"}, Args: []any{rep.Remote()}})
	if err != nil {
		return err
	}
	for _, m := range remotes {
		if !keep[m.Name] && rp.managed(m.Labels) {
			err := rp.dispatch(ctx, task.Spec{Name: deleteTask, Args: deleteArgs{Kind: kindRemote, ID: m.PulpID},
				Exclusive: []string{distributionsLock, href.Remote(m.Type, m.PulpID)}})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// finalize ends a replication: it fails when another task of the group did not
// complete, and otherwise records when the replication started.
func (c *crud) finalize(ctx context.Context, r *task.Run) error {
	var a finalizeArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	up, err := meta.UpstreamByPulpID(ctx, c.core.DB, a.Upstream)
	if err != nil {
		return err
	}
	if r.Task.GroupID == nil {
		return errors.New("replication: the finishing task has no task group")
	}
	var failed []string
	var started sql.NullInt64
	err = c.core.DB.Tx(ctx, func(tx *meta.Tx) error {
		rows, err := tx.Query(ctx, `SELECT name, state, error FROM tasks WHERE task_group_id = ? AND id <> ? AND state <> ? ORDER BY id`,
			*r.Task.GroupID, r.Task.ID, task.Completed)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name, state string
			var e sql.NullString
			if err := rows.Scan(&name, &state, &e); err != nil {
				return err
			}
			desc := state
			var te struct {
				Description string `json:"description"`
			}
			if e.Valid && json.Unmarshal([]byte(e.String), &te) == nil && te.Description != "" {
				desc = te.Description
			}
			failed = append(failed, "  "+name+": "+desc)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT min(started) FROM tasks WHERE task_group_id = ?`, *r.Task.GroupID).Scan(&started)
	})
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("Replication failed. %d subtask(s) did not complete successfully:\n%s", len(failed), strings.Join(failed, "\n"))
	}
	return meta.SetLastReplication(ctx, c.core.DB, up.ID, started.Int64)
}

func ptrEq[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// sameJSON compares two JSON documents by value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	json.Unmarshal(a, &x)
	json.Unmarshal(b, &y)
	return reflect.DeepEqual(x, y)
}
