package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"pith/api/access"
	"pith/api/openapi"
	"pith/meta"
	"pith/task"
)

// Media types of request bodies, as the reference declares them.
var (
	JSONForms = []string{"application/json", "application/x-www-form-urlencoded", "multipart/form-data"}
	FileForms = []string{"multipart/form-data", "application/x-www-form-urlencoded"}
)

// HandlerFunc serves one operation; a returned error becomes the response (WriteError).
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Op is one operation of the table: its document entry, mux pattern and handler. Path is
// the reference's (an href template such as {task_href} for detail operations); Pattern
// is the mux's.
type Op struct {
	ID, Method, Path, Pattern, Tag string
	List                           *ListSpec // a list operation's filters and ordering
	Detail                         bool      // takes fields/exclude_fields
	Body                           any       // request shape, nil for none
	BodyName                       string
	Media                          []string
	Responses                      []openapi.Response
	Anonymous                      bool
	Extra                          []openapi.Param // operation-specific parameters (headers)
	Handler                        HandlerFunc
	// Viewset names the access policy deciding who may run the operation (Pulp's
	// viewset name: "repositories/file/file"); Action is the policy's action ("sync");
	// empty, it follows the method: list or retrieve, create, update, partial_update,
	// destroy. An operation with no policy of that name is for administrators only.
	Viewset, Action string
	// Also are more mux patterns that serve the operation (pulp_ansible serves one Galaxy
	// operation at several URLs); the document names only Path.
	Also []string
	// WriteError, when set, answers the operation's errors, those of authentication and
	// authorization included, in a shape of its own (Galaxy's {"errors": [...]}); nil:
	// WriteError.
	WriteError func(w http.ResponseWriter, r *http.Request, err error)
}

// AccessAction is the operation's action in its access policy.
func (op Op) AccessAction() string {
	if op.Action != "" {
		return op.Action
	}
	switch op.Method {
	case "GET":
		if op.List != nil {
			return "list"
		}
		return "retrieve"
	case "POST":
		return "create"
	case "PUT":
		return "update"
	case "PATCH":
		return "partial_update"
	case "DELETE":
		return "destroy"
	}
	return strings.ToLower(op.Method)
}

// Resp is a response of an operation: a status and the schema of its body ("" none).
func Resp(code int, schema string) openapi.Response {
	return openapi.Response{Code: code, Schema: schema}
}

// Action is a type's own operation on one of its kinds (a repository's sync, a
// publication's create): its request shape and handler; the table makes the rest.
type Action struct {
	Body     any    // request shape
	BodyName string // its schema's name
	Handler  HandlerFunc
}

// RepoKind is a repository type. The generic operations (list, create, read, update,
// delete, labels, versions, modify) come from it; Sync is the type's own.
type RepoKind struct {
	Type    string // "rpm.rpm": hrefs repositories/rpm/rpm/, operations repositories_rpm_rpm_*
	Title   string // "Rpm": tags "Repositories: Rpm"
	Schema  string // "rpm.Rpm": schemas rpm.RpmRepository and rpm.RpmRepositoryResponse
	PRN     string // "rpm.rpmrepository"
	Body    func() RepoBody
	View    func() RepoView
	Remotes []string // the remote types it syncs from
	Sync    *Action
}

// RemoteKind is a remote type.
type RemoteKind struct {
	Type, Title, Schema, PRN string
	Body                     func() RemoteBody
	View                     func() RemoteView
	// Filters are the kind's own list filters, beside every remote list's.
	Filters []Filter
	// URLScheme is the one scheme its url takes, with a host ("uln": uln://<channel>);
	// empty: http or https.
	URLScheme string
}

// DistKind is a distribution type: what it serves.
type DistKind struct {
	Type, Title, Schema, PRN string
	Body                     func() DistBody
	View                     func() DistView
	Repositories             string // the repository type it serves
	Publications             string // the publication type it serves; "" for none
	// Versions: it may serve one fixed repository version (repository_version), which
	// its body gives through VersionBody.
	Versions bool
}

// PubKind is a publication type. The generic operations (list, read, delete) come from
// it; Create is the type's own.
type PubKind struct {
	Type, Title, Schema, PRN string
	View                     any // the response shape, for the document
	// Render shows a publication; dists are the hrefs of the distributions serving it.
	Render func(p meta.Publication, dists []string) any
	Create Action
}

// UnitKind is a kind of content unit. The generic operations (list, read, labels) come
// from it; a type adds its create and upload operations with Table.Add.
type UnitKind struct {
	Type    string // "rpm.package" (meta.Content.Type; content summaries' key)
	Segment string // "rpm/packages": hrefs content/rpm/packages/, operations content_rpm_packages_*
	PRN     string // "rpm.package"
	Href    string // "{rpm_package_href}"
	Tag     string // "Content: Packages"
	Schema  string // "rpm.PackageResponse"
	View    any    // the response shape, for the document
	// Filters and Ordering are the kind's own; every unit list adds the common ones.
	Filters  []Filter
	Ordering map[string]string
	// Render shows a page of units of this kind.
	Render func(ctx context.Context, units []meta.Content) ([]any, error)
	// LabelStatus is what set_label and unset_label answer (Pulp differs by type).
	LabelStatus int
	// Reclaimable: reclaim_space may drop the stored files of its units (Pulp's
	// PROTECTED_FROM_RECLAIM false); those of other kinds are always kept.
	Reclaimable bool
}

// ACSKind is an alternate content source type (Pulp's AlternateContentSource of a
// plugin). Its operations (CRUD, roles, refresh) come from the API; the type gives the
// remote type it takes, its own check of a path and the task that refreshes one path.
type ACSKind struct {
	Type, Title, Schema, PRN string
	Remote                   string // the remote type it takes ("file.file")
	// CheckPath checks one path beyond the common rules (rpm: it ends with a slash); it
	// returns the problem, or "" for none.
	CheckPath func(path string) string
	// Refresh is the task name that refreshes one path (args content.RefreshArgs).
	Refresh string
}

// Creator is the body of a general_create task of one kind, given the task's body.
type Creator func(ctx context.Context, r *task.Run, body json.RawMessage) error

// Table is what the API serves: the operations and the kinds of every content type and
// of the core, and the schemas they use. Types fill it through content.Type.Declare.
type Table struct {
	Env      *Env
	Reg      *openapi.Registry
	ops      []Op
	repos    []RepoKind
	remotes  []RemoteKind
	dists    []DistKind
	pubs     []PubKind
	units    []UnitKind
	objects  []ObjectKind
	acs      []ACSKind
	creators map[string]Creator
	access   access.Defaults
	conds    map[string]Condition
}

// NewTable is an empty table whose handlers run in env.
func NewTable(env *Env) *Table {
	t := &Table{Env: env, Reg: openapi.NewRegistry(), creators: map[string]Creator{}, conds: map[string]Condition{}}
	if env != nil && env.Table == nil {
		env.Table = t
	}
	return t
}

// Add adds operations.
func (t *Table) Add(ops ...Op) { t.ops = append(t.ops, ops...) }

// Schema registers a shape under name and returns the name.
func (t *Table) Schema(name string, v any) string { return t.Reg.Add(name, v) }

// Paginated registers the paginated list of a schema and returns its name.
func (t *Table) Paginated(item string) string { return t.Reg.Paginated(item) }

// Async is the schema of a 202 that dispatched a task.
func (t *Table) Async() string { return t.Reg.Add("AsyncOperationResponse", TaskRef{}) }

// Repository, Remote, Distribution, Publication and Unit declare kinds.
func (t *Table) Repository(k RepoKind)   { t.repos = append(t.repos, k) }
func (t *Table) Remote(k RemoteKind)     { t.remotes = append(t.remotes, k) }
func (t *Table) Distribution(k DistKind) { t.dists = append(t.dists, k) }
func (t *Table) Publication(k PubKind)   { t.pubs = append(t.pubs, k) }
func (t *Table) Unit(k UnitKind)         { t.units = append(t.units, k) }

// ACS declares an alternate content source type.
func (t *Table) ACS(k ACSKind) { t.acs = append(t.acs, k) }

// ACSKinds are the declared alternate content source types.
func (t *Table) ACSKinds() []ACSKind { return t.acs }

// ACSKind finds an alternate content source type.
func (t *Table) ACSKind(typ string) (ACSKind, bool) {
	return find(t.acs, typ, func(k ACSKind) string { return k.Type })
}

// ObjectKind is a kind of object of a type's own (ansible's collections) that holds
// object roles: the API gives its objects add_role, remove_role, list_roles and
// my_permissions, and resolves its PRNs.
type ObjectKind struct {
	Model      string // PRN model ("ansible.collection")
	Collection string // under /pulp/api/v3/ ("ansible/collections/")
	Viewset    string // its access policy ("ansible/collections")
	Prefix     string // of its operation IDs ("ansible_collections")
	Href, Tag  string // its href template ("{ansible_collection_href}") and tag
	// Exists reports whether an object with the pulp_id exists.
	Exists func(ctx context.Context, id string) (bool, error)
}

// Object declares an ObjectKind.
func (t *Table) Object(k ObjectKind) { t.objects = append(t.objects, k) }

// Objects are the declared ObjectKinds.
func (t *Table) Objects() []ObjectKind { return t.objects }

// Create declares the creator of a general_create kind (content of a type).
func (t *Table) Create(kind string, fn Creator) error {
	if _, dup := t.creators[kind]; dup {
		return fmt.Errorf("general_create kind %q declared twice", kind)
	}
	t.creators[kind] = fn
	return nil
}

// Access adds a type's access defaults (its policies, built-in roles and permissions,
// access.Parse of its access.json).
func (t *Table) Access(d access.Defaults) error { return t.access.Merge(d) }

// AccessDefaults are the access defaults every type declared.
func (t *Table) AccessDefaults() access.Defaults { return t.access }

// Condition adds a condition function a type's policies name (rpm's has_perms_to_copy).
func (t *Table) Condition(name string, fn Condition) error {
	if _, dup := t.conds[name]; dup {
		return fmt.Errorf("access condition %q declared twice", name)
	}
	t.conds[name] = fn
	return nil
}

// Conditions are the condition functions the types declared.
func (t *Table) Conditions() map[string]Condition { return t.conds }

// Ops are the operations added with Add.
func (t *Table) Ops() []Op { return t.ops }

// Repositories, Remotes, Distributions, Publications and Units are the declared kinds.
func (t *Table) Repositories() []RepoKind    { return t.repos }
func (t *Table) Remotes() []RemoteKind       { return t.remotes }
func (t *Table) Distributions() []DistKind   { return t.dists }
func (t *Table) Publications() []PubKind     { return t.pubs }
func (t *Table) Units() []UnitKind           { return t.units }
func (t *Table) Creator(kind string) Creator { return t.creators[kind] }

// RepoKind finds a repository type.
func (t *Table) RepoKind(typ string) (RepoKind, bool) {
	return find(t.repos, typ, func(k RepoKind) string { return k.Type })
}

// RemoteKind finds a remote type.
func (t *Table) RemoteKind(typ string) (RemoteKind, bool) {
	return find(t.remotes, typ, func(k RemoteKind) string { return k.Type })
}

// DistKind finds a distribution type.
func (t *Table) DistKind(typ string) (DistKind, bool) {
	return find(t.dists, typ, func(k DistKind) string { return k.Type })
}

// PubKind finds a publication type.
func (t *Table) PubKind(typ string) (PubKind, bool) {
	return find(t.pubs, typ, func(k PubKind) string { return k.Type })
}

// UnitKind finds a unit kind by its type.
func (t *Table) UnitKind(typ string) (UnitKind, bool) {
	return find(t.units, typ, func(k UnitKind) string { return k.Type })
}

// UnitBySegment finds a unit kind by its href segment ("rpm/packages").
func (t *Table) UnitBySegment(seg string) (UnitKind, bool) {
	return find(t.units, seg, func(k UnitKind) string { return k.Segment })
}

func find[K any](ks []K, key string, of func(K) string) (K, bool) {
	for _, k := range ks {
		if of(k) == key {
			return k, true
		}
	}
	var zero K
	return zero, false
}

// HrefName is the name of a model's href parameter, as Pulp derives it from the model:
// "file.FileGitRemote" → "file_file_git_remote".
func HrefName(model string) string {
	app, class, _ := strings.Cut(model, ".")
	var b strings.Builder
	b.WriteString(app)
	for i, r := range class {
		if unicode.IsUpper(r) || i == 0 {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
