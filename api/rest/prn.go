package rest

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"pith/api/href"
	"pith/meta"
)

// Pulp accepts a resource's PRN ("prn:rpm.rpmrepository:<uuid>") wherever it accepts its
// href, in bodies and in filters. pith resolves PRNs to hrefs as a request is read
// (ReadBody, ParseList), so handlers only ever see hrefs.

// coreModels are the PRN models of the core's resources and their collections.
var coreModels = map[string]string{
	"core.artifact":       "artifacts/",
	"core.upload":         "uploads/",
	"core.task":           "tasks/",
	"core.taskgroup":      "task-groups/",
	"core.taskschedule":   "task-schedules/",
	"core.signingservice": "signing-services/",
	"core.worker":         "workers/",
	"core.role":           "roles/",
	"core.accesspolicy":   "access_policies/",
	"auth.user":           "users/",
	"core.group":          "groups/",
	"core.upstreampulp":   "upstream-pulps/",
	// Exporters (their exports are below them, and have no collection of their own).
	"core.pulpexporter":       "exporters/core/pulp/",
	"core.filesystemexporter": "exporters/core/filesystem/",
	// Content guards.
	"core.rbaccontentguard":            "contentguards/core/rbac/",
	"core.contentredirectcontentguard": "contentguards/core/content_redirect/",
	"core.headercontentguard":          "contentguards/core/header/",
	"core.compositecontentguard":       "contentguards/core/composite/",
	"certguard.x509certguard":          "contentguards/certguard/x509/",
	"certguard.rhsmcertguard":          "contentguards/certguard/rhsm/",
}

type resolverKey struct{}

// WithPRNs makes the requests of ctx resolve PRNs through e (api does this for every
// request).
func WithPRNs(ctx context.Context, e *Env) context.Context {
	return context.WithValue(ctx, resolverKey{}, e)
}

func envOf(ctx context.Context) *Env {
	e, _ := ctx.Value(resolverKey{}).(*Env)
	return e
}

// collections maps every PRN model to its collection ("rpm.rpmrepository" →
// "repositories/rpm/rpm/"), and back. They are made once, at the first request: the
// types have declared their kinds by then.
func (e *Env) collections() (byModel, byCollection map[string]string) {
	e.collOnce.Do(func() { e.byModel, e.byCollection = e.makeCollections() })
	return e.byModel, e.byCollection
}

func (e *Env) makeCollections() (byModel, byCollection map[string]string) {
	byModel, byCollection = map[string]string{}, map[string]string{}
	add := func(model, coll string) { byModel[model], byCollection[coll] = coll, model }
	for m, c := range coreModels {
		add(m, c)
	}
	if t := e.Table; t != nil {
		for _, k := range t.Repositories() {
			add(k.PRN, "repositories/"+href.Segment(k.Type)+"/")
		}
		for _, k := range t.Remotes() {
			add(k.PRN, "remotes/"+href.Segment(k.Type)+"/")
		}
		for _, k := range t.Distributions() {
			add(k.PRN, "distributions/"+href.Segment(k.Type)+"/")
		}
		for _, k := range t.Publications() {
			add(k.PRN, "publications/"+href.Segment(k.Type)+"/")
		}
		for _, k := range t.Units() {
			add(k.PRN, "content/"+k.Segment+"/")
		}
		for _, k := range t.Objects() {
			add(k.Model, k.Collection)
		}
		for _, k := range t.ACSKinds() {
			add(k.PRN, "acs/"+href.Segment(k.Type)+"/")
		}
	}
	return byModel, byCollection
}

// HrefOfPRN is the href a PRN names; ok is false for anything that is not the PRN of
// a resource pith knows (which is then left as it is).
func (e *Env) HrefOfPRN(ctx context.Context, s string) (string, bool) {
	rest, ok := strings.CutPrefix(s, "prn:")
	if !ok {
		return "", false
	}
	model, id, ok := strings.Cut(rest, ":")
	if !ok || id == "" || strings.ContainsAny(id, "/?#") {
		return "", false
	}
	if model == "core.repositoryversion" {
		if e.DB == nil {
			return "", false
		}
		var typ, repo string
		var n int64
		err := e.DB.QueryRow(ctx, `SELECT r.type, r.pulp_id, v.number FROM repository_versions v JOIN repositories r ON r.id = v.repository_id
			WHERE v.pulp_id = ?`, id).Scan(&typ, &repo, &n)
		if err != nil {
			return "", false
		}
		return href.Version(typ, repo, n), true
	}
	byModel, _ := e.collections()
	coll, ok := byModel[model]
	if !ok {
		return "", false
	}
	return href.Root + coll + id + "/", true
}

// PRNOf is the PRN of the resource an href names; ok is false for an href that names
// no resource of a known collection (a collection, a version), which stays as it is.
func (e *Env) PRNOf(h string) (string, bool) {
	p, ok := href.Parse(h)
	if !ok || p.Rest != "" {
		return "", false
	}
	_, byCollection := e.collections()
	model, ok := byCollection[p.Collection]
	if !ok {
		return "", false
	}
	return href.PRN(model, p.ID), true
}

// ObjectOf names the resource an href names, as roles are held on it: its PRN model and
// its id (users and groups have integer ids); ok is false for anything else.
func (e *Env) ObjectOf(h string) (meta.Object, bool) {
	_, byCollection := e.collections()
	if p, ok := href.Parse(h); ok {
		if p.Rest != "" {
			return meta.Object{}, false
		}
		model, ok := byCollection[p.Collection]
		return meta.Object{Type: model, ID: p.ID}, ok
	}
	rest, ok := strings.CutPrefix(h, href.Root)
	if !ok {
		return meta.Object{}, false
	}
	coll, id, ok := strings.Cut(strings.TrimSuffix(rest, "/"), "/")
	if !ok || (coll != "users" && coll != "groups") {
		return meta.Object{}, false
	}
	if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
		return meta.Object{}, false
	}
	return meta.Object{Type: byCollection[coll+"/"], ID: id}, true
}

// CollectionOf is the collection of a PRN model ("repositories/rpm/rpm/"); "" for none.
func (e *Env) CollectionOf(model string) string {
	byModel, _ := e.collections()
	return byModel[model]
}

// ModelOf is the PRN model of a collection ("repositories/file/file/"); "" for none.
func (e *Env) ModelOf(collection string) string {
	_, byCollection := e.collections()
	return byCollection[collection]
}

// resolvePRNs replaces, in a decoded JSON value, every string that is a PRN pith knows
// by its href.
func resolvePRNs(ctx context.Context, e *Env, v any) any {
	switch x := v.(type) {
	case string:
		if h, ok := e.HrefOfPRN(ctx, x); ok {
			return h
		}
	case []any:
		for i := range x {
			x[i] = resolvePRNs(ctx, e, x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = resolvePRNs(ctx, e, x[k])
		}
	}
	return v
}

// resolveRaw resolves the PRNs in a body's raw members.
func resolveRaw(ctx context.Context, raw map[string]json.RawMessage) {
	e := envOf(ctx)
	if e == nil {
		return
	}
	for k, m := range raw {
		if !strings.Contains(string(m), `"prn:`) {
			continue
		}
		var v any
		if json.Unmarshal(m, &v) != nil {
			continue
		}
		if b, err := json.Marshal(resolvePRNs(ctx, e, v)); err == nil {
			raw[k] = b
		}
	}
}

// resolveValue resolves a filter value: a PRN, or comma-separated PRNs.
func resolveValue(ctx context.Context, v string) string {
	e := envOf(ctx)
	if e == nil || !strings.Contains(v, "prn:") {
		return v
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		if h, ok := e.HrefOfPRN(ctx, strings.TrimSpace(p)); ok {
			parts[i] = h
		}
	}
	return strings.Join(parts, ",")
}
