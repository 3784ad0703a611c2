package rpm

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"pith/api/access"
	"pith/api/href"
	"pith/api/openapi"
	"pith/api/rest"
	"pith/meta"
	"pith/task"
)

// Declare adds the rpm type's kinds and operations to the table.
func (p *Plugin) Declare(t *rest.Table) error {
	p.declareUnits(t)
	t.Repository(rest.RepoKind{Type: RepoType, Title: "Rpm", Schema: "rpm.Rpm", PRN: "rpm.rpmrepository",
		Body: func() rest.RepoBody { return &rpmRepositoryIn{} }, View: func() rest.RepoView { return &rpmRepositoryResponse{} },
		Remotes: []string{RepoType, ULNRemoteType}, Sync: &rest.Action{Body: rpmSyncIn{}, BodyName: "RpmRepositorySyncURL", Handler: p.rpmRepoSync}})
	t.Remote(rest.RemoteKind{Type: RepoType, Title: "Rpm", Schema: "rpm.Rpm", PRN: "rpm.rpmremote",
		Body: func() rest.RemoteBody { return &rpmRemoteIn{} }, View: func() rest.RemoteView { return &rpmRemoteResponse{} }})
	t.Remote(rest.RemoteKind{Type: ULNRemoteType, Title: "Uln", Schema: "rpm.Uln", PRN: "rpm.ulnremote", URLScheme: "uln",
		Body: func() rest.RemoteBody { return &ulnRemoteIn{} }, View: func() rest.RemoteView { return &ulnRemoteResponse{} }})
	t.ACS(rest.ACSKind{Type: RepoType, Title: "Rpm", Schema: "rpm.Rpm", PRN: "rpm.rpmalternatecontentsource", Remote: RepoType, Refresh: RefreshTask,
		CheckPath: func(p string) string {
			if !strings.HasSuffix(p, "/") {
				return "Path must end with a slash."
			}
			return ""
		}})
	t.Distribution(rest.DistKind{Type: RepoType, Title: "Rpm", Schema: "rpm.Rpm", PRN: "rpm.rpmdistribution",
		Body: func() rest.DistBody { return &rpmDistributionIn{} }, View: func() rest.DistView { return &rpmDistributionResponse{} },
		Repositories: RepoType, Publications: RepoType})
	t.Publication(rest.PubKind{Type: RepoType, Title: "Rpm", Schema: "rpm.Rpm", PRN: "rpm.rpmpublication", View: rpmPublicationResponse{},
		Render: func(pub meta.Publication, _ []string) any { return renderRpmPub(pub) },
		Create: rest.Action{Body: rpmPublicationIn{}, BodyName: "rpm.RpmPublication", Handler: p.rpmPubCreate}})
	async := t.Async()
	tg := t.Schema("TaskGroupOperationResponse", rest.TaskGroupRef{})
	t.Add(rest.Op{ID: "rpm_prune_prune_packages", Viewset: "rpm/prune", Action: "prune_packages", Method: "POST", Path: href.Root + "rpm/prune/", Pattern: href.Root + "rpm/prune/{$}", Tag: "Rpm: Prune",
		Body: pruneIn{}, BodyName: "PrunePackages", Media: rest.JSONForms, Responses: []openapi.Response{rest.Resp(202, tg)}, Handler: p.rpmPrune})
	t.Add(rest.Op{ID: "rpm_comps_upload", Viewset: "rpm/comps", Method: "POST", Path: href.Root + "rpm/comps/", Pattern: href.Root + "rpm/comps/{$}", Tag: "Rpm: Comps",
		Body: compsIn{}, BodyName: "CompsXml", Media: rest.FileForms, Responses: []openapi.Response{rest.Resp(202, async)}, Handler: p.rpmCompsUpload})
	t.Add(rest.Op{ID: "copy_content_2", Viewset: "rpm/copy", Method: "POST", Path: href.Root + "rpm/copy/", Pattern: href.Root + "rpm/copy/{$}", Tag: "Rpm: Copy",
		Body: copyIn{}, BodyName: "Copy", Media: rest.JSONForms, Responses: []openapi.Response{rest.Resp(202, async)}, Handler: p.rpmCopy})
	for kind, fn := range map[string]rest.Creator{packageKind: p.runRpmPackage, advisoryKind: p.runRpmAdvisory} {
		if err := t.Create(kind, fn); err != nil {
			return err
		}
	}
	for _, k := range rpmModuleKinds {
		if err := t.Create(k.kind, p.moduleCreator(k)); err != nil {
			return err
		}
	}
	d, err := access.Parse(accessJSON)
	if err != nil {
		return err
	}
	if err := t.Access(d); err != nil {
		return err
	}
	return t.Condition("has_perms_to_copy", hasPermsToCopy)
}

// accessJSON are pulp_rpm's default access policies, built-in roles and permissions
// (scripts/pulp-access.py).
//
//go:embed access.json
var accessJSON []byte

// hasPermsToCopy is pulp_rpm's condition of a copy: the caller may modify every
// destination repository and view every source version's repository (on that
// repository or on every one).
func hasPermsToCopy(c rest.Check, _ string) (bool, error) {
	body, err := c.Body()
	if err != nil {
		return false, err
	}
	var in struct {
		Config []struct {
			SourceRepoVersion string `json:"source_repo_version"`
			DestRepo          string `json:"dest_repo"`
		} `json:"config"`
	}
	if raw, ok := body["config"]; ok {
		if err := json.Unmarshal(raw, &in.Config); err != nil {
			return false, rest.BadField("config", "Invalid value: %v", err)
		}
	}
	can := func(perm, h string) (bool, error) {
		if ok, err := c.HasModelPerm(perm); ok || err != nil {
			return ok, err
		}
		return c.HasPermOn(perm, h)
	}
	for _, e := range in.Config {
		if ok, err := can("rpm.modify_content_rpmrepository", e.DestRepo); !ok || err != nil {
			return false, err
		}
		repo, _, _ := strings.Cut(e.SourceRepoVersion, "versions/")
		if ok, err := can("rpm.view_rpmrepository", repo); !ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

type rpmSyncIn struct {
	Remote     *string  `json:"remote" openapi:"format=uri"`
	Mirror     *bool    `json:"mirror" openapi:"nullable"`
	SyncPolicy *string  `json:"sync_policy" openapi:"enum=additive|mirror_complete|mirror_content_only,nullable"`
	SkipTypes  []string `json:"skip_types"`
	Optimize   bool     `json:"optimize" openapi:"default=true"`
}

func (p *Plugin) rpmRepoSync(w http.ResponseWriter, r *http.Request) error {
	repo, err := p.core.Env().RepoByPath(r)
	if err != nil {
		return err
	}
	in := rpmSyncIn{Optimize: true}
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	policy := Additive
	if in.Mirror != nil && *in.Mirror {
		policy = MirrorComplete
	}
	if in.SyncPolicy != nil {
		policy = *in.SyncPolicy
	}
	if in.Mirror != nil && in.SyncPolicy != nil {
		return rest.FieldErrors{"non_field_errors": {"Cannot use 'mirror' and 'sync_policy' options simultaneously."}}
	}
	switch policy {
	case Additive, MirrorContentOnly, MirrorComplete:
	default:
		return rest.BadField("sync_policy", "%q is not a valid choice (additive, mirror_complete, mirror_content_only).", policy)
	}
	for _, t := range in.SkipTypes {
		if t != "srpm" && t != "treeinfo" {
			return rest.BadField("skip_types", "%q is not a valid choice (srpm, treeinfo).", t)
		}
	}
	if policy == MirrorComplete && len(in.SkipTypes) > 0 {
		return rest.FieldErrors{"non_field_errors": {"Cannot use 'skip_types' with the 'mirror_complete' sync policy: the mirrored metadata would list what was skipped."}}
	}
	remote, err := p.core.Env().SyncRemote(r, repo, in.Remote)
	if err != nil {
		return err
	}
	skip := slices.Clone(in.SkipTypes)
	slices.Sort(skip)
	return p.core.Env().Dispatch(w, r, task.Spec{
		Name:      SyncTask,
		Args:      SyncArgs{Repository: repo.PulpID, Remote: remote.PulpID, SyncPolicy: policy, SkipTypes: slices.Compact(skip), Optimize: in.Optimize},
		Exclusive: []string{href.Repository(repo.Type, repo.PulpID)},
		Shared:    []string{href.Remote(remote.Type, remote.PulpID)},
	})
}

// copyIn is the body of /rpm/copy/: the config entries and whether to solve
// dependencies (pulp-glue adds that field to the reference schema).
type copyIn struct {
	Config            json.RawMessage `json:"config" openapi:"type=object,required"`
	DependencySolving *bool           `json:"dependency_solving" openapi:"optional"`
}

type copyEntryIn struct {
	SourceRepoVersion string   `json:"source_repo_version"`
	DestRepo          string   `json:"dest_repo"`
	DestBaseVersion   *int64   `json:"dest_base_version"`
	Content           []string `json:"content"`
}

// CopyArgs are the arguments of the rpm copy task.
type CopyArgs struct {
	Entries           []copyEntry `json:"entries"`
	DependencySolving bool        `json:"dependency_solving"`
}

type copyEntry struct {
	Source        string  `json:"source"` // repository pulp ID
	SourceVersion int64   `json:"source_version"`
	Dest          string  `json:"dest"`
	DestBase      *int64  `json:"dest_base,omitempty"`
	Content       []int64 `json:"content"` // nil: everything in the source version
}

// CopyTask copies units between repositories.
const CopyTask = "pulp_rpm.app.tasks.copy.copy_content"

func (p *Plugin) rpmCopy(w http.ResponseWriter, r *http.Request) error {
	var in copyIn
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Require(raw, "config"); err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	var entries []copyEntryIn
	dec := json.NewDecoder(bytes.NewReader(in.Config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entries); err != nil || len(entries) == 0 {
		return rest.BadField("config", "Must be a non-empty list of {source_repo_version, dest_repo, dest_base_version, content}: %v", err)
	}
	ctx := r.Context()
	a := CopyArgs{DependencySolving: in.DependencySolving == nil || *in.DependencySolving} // Pulp's default is to solve
	var exclusive, shared []string
	for i, e := range entries {
		field := fmt.Sprintf("config[%d]", i)
		srcID, n, err := rest.VersionOf(field+".source_repo_version", e.SourceRepoVersion, "repositories/rpm/rpm/")
		if err != nil {
			return err
		}
		src, err := meta.RepositoryByPulpID(ctx, p.db, srcID)
		if err != nil {
			return rest.BadField(field+".source_repo_version", "Invalid hyperlink - Object does not exist.")
		}
		if _, err := meta.VersionByNumber(ctx, p.db, src.ID, n); err != nil {
			return rest.BadField(field+".source_repo_version", "Version %d of repository %s does not exist.", n, src.Name)
		}
		destID, err := rest.HrefOf(field+".dest_repo", e.DestRepo, "repositories/rpm/rpm/")
		if err != nil {
			return err
		}
		dest, err := meta.RepositoryByPulpID(ctx, p.db, destID)
		if err != nil {
			return rest.BadField(field+".dest_repo", "Invalid hyperlink - Object does not exist.")
		}
		if e.DestBaseVersion != nil {
			if _, err := meta.VersionByNumber(ctx, p.db, dest.ID, *e.DestBaseVersion); err != nil {
				return rest.BadField(field+".dest_base_version", "Version %d of repository %s does not exist.", *e.DestBaseVersion, dest.Name)
			}
		}
		ce := copyEntry{Source: src.PulpID, SourceVersion: n, Dest: dest.PulpID, DestBase: e.DestBaseVersion}
		if e.Content != nil {
			// Units not in the source version are not copied (as in Pulp: the copy takes
			// what the source version and the list have in common, possibly nothing).
			ids, err := p.core.Env().ContentIDs(ctx, field+".content", e.Content)
			if err != nil {
				return err
			}
			ce.Content = append([]int64{}, ids...) // never nil: nil copies the whole version
		}
		a.Entries = append(a.Entries, ce)
		exclusive = append(exclusive, href.Repository(RepoType, dest.PulpID))
		shared = append(shared, href.Repository(RepoType, src.PulpID))
	}
	return p.core.Env().Dispatch(w, r, task.Spec{Name: CopyTask, Args: a, Exclusive: exclusive, Shared: shared})
}

// runCopy adds the units of each entry, with the units they name and, when asked, the
// packages their dependencies need (CopyPlan), to its destination: one new version
// per destination repository.
func (p *Plugin) runCopy(ctx context.Context, r *task.Run) error {
	var a CopyArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	plan := make([]CopyEntry, len(a.Entries))
	for i, e := range a.Entries {
		src, err := meta.RepositoryByPulpID(ctx, p.db, e.Source)
		if err != nil {
			return err
		}
		dest, err := meta.RepositoryByPulpID(ctx, p.db, e.Dest)
		if err != nil {
			return err
		}
		plan[i] = CopyEntry{Source: src.ID, SourceVersion: e.SourceVersion, Dest: dest.ID, DestVersion: dest.LatestVersion, Content: e.Content}
		if e.DestBase != nil {
			plan[i].DestVersion = *e.DestBase
		}
	}
	prog := r.Progress("copy.content", "Copying content", int64(len(plan)))
	units, problems, err := CopyPlan(ctx, p.db, plan, a.DependencySolving)
	if err != nil {
		prog.Finish(err)
		return err
	}
	if len(problems) > 0 {
		// Pulp logs them and copies what it can; here they are in the task too.
		shown := problems[:min(len(problems), 10)]
		msg := "Unmet dependencies, copy may be incomplete: " + strings.Join(shown, "; ")
		if len(problems) > len(shown) {
			msg += fmt.Sprintf("; and %d more", len(problems)-len(shown))
		}
		unmet := r.Progress("copy.depsolving.unmet", msg, int64(len(problems)))
		unmet.Add(int64(len(problems)))
		unmet.Finish(nil)
	}
	var order []string
	adds := map[string]*meta.Change{}
	for i, e := range a.Entries {
		ch := adds[e.Dest]
		if ch == nil {
			ch = &meta.Change{}
			adds[e.Dest] = ch
			order = append(order, e.Dest)
		}
		if e.DestBase != nil {
			ch.Base = e.DestBase
		}
		ch.Add = append(ch.Add, units[i]...)
	}
	for _, dest := range order {
		if err := p.core.NewVersion(ctx, r, dest, *adds[dest]); err != nil {
			prog.Finish(err)
			return err
		}
	}
	prog.Add(int64(len(plan)))
	prog.Finish(nil)
	return nil
}

// configOrEmpty is a repo_config as shown: {} when unset, as Pulp's default.
func configOrEmpty(c json.RawMessage) json.RawMessage {
	if len(c) == 0 || string(c) == "null" {
		return json.RawMessage("{}")
	}
	return c
}

func renderRpmPub(p meta.Publication) rpmPublicationResponse {
	var a PubAttrs
	json.Unmarshal(p.Attrs, &a)
	layout := a.Layout
	return rpmPublicationResponse{
		PublicationResponse: rest.NewPublicationResponse(p, "rpm.rpmpublication"), Checkpoint: p.Checkpoint,
		ChecksumType: a.ChecksumType, MetadataChecksumType: a.ChecksumType, PackageChecksumType: a.ChecksumType,
		RepoConfig: configOrEmpty(a.RepoConfig), CompressionType: a.CompressionType, Layout: &layout,
	}
}

// publishArgs are the arguments of a publication of version n of repo: the options
// given (in), else the repository's, else the defaults.
func (p *Plugin) publishArgs(ctx context.Context, repo meta.Repository, n int64, in rpmPublicationIn) (PublishArgs, error) {
	var ra rpmRepoAttrs
	json.Unmarshal(repo.Attrs, &ra)
	pick := func(v, repoV *string, def string) string {
		switch {
		case v != nil:
			return *v
		case repoV != nil:
			return *repoV
		}
		return def
	}
	a := PublishArgs{Repository: repo.PulpID, Version: n, ChecksumType: pick(in.ChecksumType, ra.ChecksumType, "sha256"),
		Compression: pick(in.CompressionType, ra.CompressionType, "gz"), Layout: pick(in.Layout, ra.Layout, "nested_alphabetically"), Checkpoint: in.Checkpoint}
	if a.ChecksumType == "unknown" {
		a.ChecksumType = "sha256"
	}
	a.RepoConfig = ra.RepoConfig
	if len(in.RepoConfig) > 0 && string(in.RepoConfig) != "null" {
		a.RepoConfig = in.RepoConfig
	}
	if ra.MetadataSigningService != nil {
		id, err := rest.HrefOf("metadata_signing_service", *ra.MetadataSigningService, "signing-services/")
		if err != nil {
			return a, err
		}
		if _, err := meta.SigningServiceByPulpID(ctx, p.db, id); err != nil {
			return a, rest.BadField("repository", "The repository's metadata_signing_service %s does not exist.", *ra.MetadataSigningService)
		}
		a.SigningService = id
	}
	if a.Layout != "nested_alphabetically" && a.Layout != "flat" {
		return a, rest.BadField("layout", "The %s layout is not supported by this server yet (nested_alphabetically, flat).", a.Layout)
	}
	return a, nil
}

// Autopublish publishes a repository's new version with the repository's options.
func (p *Plugin) Autopublish(ctx context.Context, r *task.Run, repo meta.Repository, v meta.Version) (meta.Publication, error) {
	a, err := p.publishArgs(ctx, repo, v.Number, rpmPublicationIn{})
	if err != nil {
		return meta.Publication{}, err
	}
	return p.Publish(ctx, r, repo, a)
}

// rpmPubCreate publishes a version, with the publication's options or else the
// repository's.
func (p *Plugin) rpmPubCreate(w http.ResponseWriter, r *http.Request) error {
	var in rpmPublicationIn
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	if err := checkRpmOptions(in.ChecksumType, in.CompressionType, in.Layout, in.RepoConfig); err != nil {
		return err
	}
	repo, n, err := p.core.Env().PubSource(r, RepoType, in.PublicationIn)
	if err != nil {
		return err
	}
	a, err := p.publishArgs(r.Context(), repo, n, in)
	if err != nil {
		return err
	}
	return p.core.Env().Dispatch(w, r, task.Spec{Name: PublishTask, Args: a, Shared: []string{href.Repository(repo.Type, repo.PulpID)}})
}

type pruneIn struct {
	RepoHrefs []string `json:"repo_hrefs" openapi:"required"`
	KeepDays  int64    `json:"keep_days" openapi:"minimum=0,default=14"`
	DryRun    bool     `json:"dry_run" openapi:"default=false"`
}

// rpmPrune dispatches one prune task per repository, as one task group.
func (p *Plugin) rpmPrune(w http.ResponseWriter, r *http.Request) error {
	in := pruneIn{KeepDays: 14}
	raw, err := rest.ReadBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := rest.Require(raw, "repo_hrefs"); err != nil {
		return err
	}
	if err := rest.Decode(raw, &in); err != nil {
		return err
	}
	if in.KeepDays < 0 {
		return rest.BadField("keep_days", "Ensure this value is greater than or equal to 0.")
	}
	if len(in.RepoHrefs) == 0 {
		return rest.BadField("repo_hrefs", "Name at least one repository, or [\"*\"] for all.")
	}
	ctx := r.Context()
	var repos []meta.Repository
	if len(in.RepoHrefs) == 1 && in.RepoHrefs[0] == "*" {
		all, _, err := meta.ListRepositories(ctx, p.db, meta.List{Where: []string{"r.type = ?"}, Args: []any{RepoType}})
		if err != nil {
			return err
		}
		repos = all
	} else {
		for _, h := range in.RepoHrefs {
			id, err := rest.HrefOf("repo_hrefs", h, "repositories/rpm/rpm/")
			if err != nil {
				return err
			}
			repo, err := meta.RepositoryByPulpID(ctx, p.db, id)
			if err != nil {
				return rest.BadField("repo_hrefs", "%s: Invalid hyperlink - Object does not exist.", h)
			}
			repos = append(repos, repo)
		}
	}
	g, err := task.CreateGroup(ctx, p.db, "Prune old Packages.")
	if err != nil {
		return err
	}
	for _, repo := range repos {
		if _, err := p.core.Env().Enqueue(r, task.Spec{Name: PruneTask, Args: PruneArgs{Repository: repo.PulpID, KeepDays: in.KeepDays, DryRun: in.DryRun},
			Exclusive: []string{href.Repository(repo.Type, repo.PulpID)}, GroupID: &g.ID}); err != nil {
			return err
		}
	}
	return rest.WriteOne(w, r, http.StatusAccepted, rest.TaskGroupRef{TaskGroup: href.Group(g.PulpID)})
}
