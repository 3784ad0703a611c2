package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"pith/api/openapi"
	"pith/content/rpm"
	"pith/meta"
	"pith/task"
)

// rpmTable adds the rpm plugin's operations.
func (s *Server) rpmTable(reg *openapi.Registry, add func(opDef)) {
	s.typeTable(reg, add, typeRoutes{typ: rpmType, plugin: "rpm", name: "rpm", title: "Rpm", schema: "rpm.Rpm",
		repo: rpmRepositoryIn{}, repoView: rpmRepositoryResponse{}, remote: rpmRemoteIn{}, remoteView: rpmRemoteResponse{},
		dist: rpmDistributionIn{}, distView: rpmDistributionResponse{}, sync: s.rpmRepoSync, syncBody: rpmSyncIn{}, syncBodyName: "RpmRepositorySyncURL"})
	s.rpmContentTable(reg, add)
	async := reg.Add("AsyncOperationResponse", taskRef{})
	pg := reg.Paginated
	r := func(code int, schema string) []openapi.Response { return []openapi.Response{resp(code, schema)} }
	pub := reg.Add("rpm.RpmPublicationResponse", rpmPublicationResponse{})
	pl := pubListSpec(rpmType)
	const ppat = "/pulp/api/v3/publications/rpm/rpm/"
	const ph = "{rpm_rpm_publication_href}"
	const ptag = "Publications: Rpm"
	add(opDef{id: "publications_rpm_rpm_list", method: "GET", path: ppat, pattern: ppat + "{$}", tag: ptag,
		list: &pl, responses: r(200, pg(pub)), h: s.pubList(rpmType)})
	add(opDef{id: "publications_rpm_rpm_create", method: "POST", path: ppat, pattern: ppat + "{$}", tag: ptag,
		body: rpmPublicationIn{}, bodyName: "rpm.RpmPublication", media: jsonForms, responses: r(202, async), h: s.rpmPubCreate})
	add(opDef{id: "publications_rpm_rpm_read", method: "GET", path: ph, pattern: ppat + "{id}/{$}", tag: ptag, detail: true,
		responses: r(200, pub), h: s.pubRead})
	add(opDef{id: "publications_rpm_rpm_delete", method: "DELETE", path: ph, pattern: ppat + "{id}/{$}", tag: ptag,
		responses: r(204, ""), h: s.pubDelete})
	tg := reg.Add("TaskGroupOperationResponse", taskGroupRef{})
	add(opDef{id: "rpm_prune_prune_packages", method: "POST", path: "/pulp/api/v3/rpm/prune/", pattern: "/pulp/api/v3/rpm/prune/{$}", tag: "Rpm: Prune",
		body: pruneIn{}, bodyName: "PrunePackages", media: jsonForms, responses: []openapi.Response{resp(202, tg)}, h: s.rpmPrune})
	add(opDef{id: "rpm_comps_upload", method: "POST", path: "/pulp/api/v3/rpm/comps/", pattern: "/pulp/api/v3/rpm/comps/{$}", tag: "Rpm: Comps",
		body: compsIn{}, bodyName: "CompsXml", media: fileForms, responses: []openapi.Response{resp(202, async)}, h: s.rpmCompsUpload})
	add(opDef{id: "copy_content_2", method: "POST", path: "/pulp/api/v3/rpm/copy/", pattern: "/pulp/api/v3/rpm/copy/{$}", tag: "Rpm: Copy",
		body: copyIn{}, bodyName: "Copy", media: jsonForms, responses: []openapi.Response{resp(202, async)}, h: s.rpmCopy})
}

type rpmSyncIn struct {
	Remote     *string  `json:"remote" openapi:"format=uri"`
	Mirror     *bool    `json:"mirror" openapi:"nullable"`
	SyncPolicy *string  `json:"sync_policy" openapi:"enum=additive|mirror_complete|mirror_content_only,nullable"`
	SkipTypes  []string `json:"skip_types"`
	Optimize   bool     `json:"optimize" openapi:"default=true"`
}

func (s *Server) rpmRepoSync(w http.ResponseWriter, r *http.Request) error {
	repo, err := s.repoByPath(r)
	if err != nil {
		return err
	}
	in := rpmSyncIn{Optimize: true}
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	policy := rpm.Additive
	if in.Mirror != nil && *in.Mirror {
		policy = rpm.MirrorComplete
	}
	if in.SyncPolicy != nil {
		policy = *in.SyncPolicy
	}
	if in.Mirror != nil && in.SyncPolicy != nil {
		return fieldError{"non_field_errors": {"Cannot use 'mirror' and 'sync_policy' options simultaneously."}}
	}
	switch policy {
	case rpm.Additive, rpm.MirrorContentOnly, rpm.MirrorComplete:
	default:
		return badField("sync_policy", "%q is not a valid choice (additive, mirror_complete, mirror_content_only).", policy)
	}
	for _, t := range in.SkipTypes {
		if t != "srpm" && t != "treeinfo" {
			return badField("skip_types", "%q is not a valid choice (srpm, treeinfo).", t)
		}
	}
	if policy == rpm.MirrorComplete && len(in.SkipTypes) > 0 {
		return fieldError{"non_field_errors": {"Cannot use 'skip_types' with the 'mirror_complete' sync policy: the mirrored metadata would list what was skipped."}}
	}
	remoteID, err := s.syncRemote(r, repo, in.Remote)
	if err != nil {
		return err
	}
	skip := slices.Clone(in.SkipTypes)
	slices.Sort(skip)
	t, err := s.dispatch(r, task.Spec{
		Name:      rpm.SyncTask,
		Args:      rpm.SyncArgs{Repository: repo.PulpID, Remote: remoteID, SyncPolicy: policy, SkipTypes: slices.Compact(skip), Optimize: in.Optimize},
		Exclusive: []string{repoHref(repo.Type, repo.PulpID)},
		Shared:    []string{remoteHref(repo.Type, remoteID)},
	})
	if err != nil {
		return err
	}
	return accepted(w, t)
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

const copyTask = "pulp_rpm.app.tasks.copy.copy_content"

func (s *Server) rpmCopy(w http.ResponseWriter, r *http.Request) error {
	var in copyIn
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := requireFields(raw, "config"); err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	var entries []copyEntryIn
	dec := json.NewDecoder(bytes.NewReader(in.Config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&entries); err != nil || len(entries) == 0 {
		return badField("config", "Must be a non-empty list of {source_repo_version, dest_repo, dest_base_version, content}: %v", err)
	}
	ctx := r.Context()
	a := CopyArgs{DependencySolving: in.DependencySolving == nil || *in.DependencySolving} // Pulp's default is to solve
	var exclusive, shared []string
	for i, e := range entries {
		field := fmt.Sprintf("config[%d]", i)
		srcID, n, err := versionOf(field+".source_repo_version", e.SourceRepoVersion, "repositories/rpm/rpm/")
		if err != nil {
			return err
		}
		src, err := meta.RepositoryByPulpID(ctx, s.db, srcID)
		if err != nil {
			return badField(field+".source_repo_version", "Invalid hyperlink - Object does not exist.")
		}
		if _, err := meta.VersionByNumber(ctx, s.db, src.ID, n); err != nil {
			return badField(field+".source_repo_version", "Version %d of repository %s does not exist.", n, src.Name)
		}
		destID, err := hrefOf(field+".dest_repo", e.DestRepo, "repositories/rpm/rpm/")
		if err != nil {
			return err
		}
		dest, err := meta.RepositoryByPulpID(ctx, s.db, destID)
		if err != nil {
			return badField(field+".dest_repo", "Invalid hyperlink - Object does not exist.")
		}
		if e.DestBaseVersion != nil {
			if _, err := meta.VersionByNumber(ctx, s.db, dest.ID, *e.DestBaseVersion); err != nil {
				return badField(field+".dest_base_version", "Version %d of repository %s does not exist.", *e.DestBaseVersion, dest.Name)
			}
		}
		ce := copyEntry{Source: src.PulpID, SourceVersion: n, Dest: dest.PulpID, DestBase: e.DestBaseVersion}
		if e.Content != nil {
			ids, err := s.contentIDs(ctx, field+".content", e.Content)
			if err != nil {
				return err
			}
			have, err := meta.VersionContentIDs(ctx, s.db, src.ID, n)
			if err != nil {
				return err
			}
			in := map[int64]bool{}
			for _, id := range have {
				in[id] = true
			}
			for j, id := range ids {
				if !in[id] {
					return badField(field+".content", "%s is not in the source repository version.", e.Content[j])
				}
			}
			ce.Content = ids
		}
		a.Entries = append(a.Entries, ce)
		exclusive = append(exclusive, repoHref(rpmType, dest.PulpID))
		shared = append(shared, repoHref(rpmType, src.PulpID))
	}
	t, err := s.dispatch(r, task.Spec{Name: copyTask, Args: a, Exclusive: exclusive, Shared: shared})
	if err != nil {
		return err
	}
	return accepted(w, t)
}

// runCopy adds the units of each entry, with the units they name and, when asked, the
// packages their dependencies need (rpm.CopyPlan), to its destination: one new version
// per destination repository.
func (s *Server) runCopy(ctx context.Context, r *task.Run) error {
	var a CopyArgs
	if err := r.Args(&a); err != nil {
		return err
	}
	plan := make([]rpm.CopyEntry, len(a.Entries))
	for i, e := range a.Entries {
		src, err := meta.RepositoryByPulpID(ctx, s.db, e.Source)
		if err != nil {
			return err
		}
		dest, err := meta.RepositoryByPulpID(ctx, s.db, e.Dest)
		if err != nil {
			return err
		}
		plan[i] = rpm.CopyEntry{Source: src.ID, SourceVersion: e.SourceVersion, Dest: dest.ID, DestVersion: dest.LatestVersion, Content: e.Content}
		if e.DestBase != nil {
			plan[i].DestVersion = *e.DestBase
		}
	}
	prog := r.Progress("copy.content", "Copying content", int64(len(plan)))
	units, problems, err := rpm.CopyPlan(ctx, s.db, plan, a.DependencySolving)
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
		if err := s.newVersion(ctx, r, dest, *adds[dest]); err != nil {
			prog.Finish(err)
			return err
		}
	}
	prog.Add(int64(len(plan)))
	prog.Finish(nil)
	return nil
}

func renderRpmPub(p meta.Publication) rpmPublicationResponse {
	var a rpm.PubAttrs
	json.Unmarshal(p.Attrs, &a)
	layout := a.Layout
	return rpmPublicationResponse{
		PulpHref: pubHref(p.Type, p.PulpID), Prn: prn("rpm.rpmpublication", p.PulpID), PulpCreated: ts(p.Created), PulpLastUpdated: ts(p.Updated),
		RepositoryVersion: versionHref(rpmType, p.RepoPulpID, p.VersionNumber), Repository: repoHref(rpmType, p.RepoPulpID),
		ChecksumType: a.ChecksumType, MetadataChecksumType: a.ChecksumType, PackageChecksumType: a.ChecksumType,
		RepoConfig: json.RawMessage("{}"), CompressionType: a.CompressionType, Layout: &layout,
	}
}

// rpmPubCreate publishes a version, with the publication's options or else the
// repository's.
func (s *Server) rpmPubCreate(w http.ResponseWriter, r *http.Request) error {
	var in rpmPublicationIn
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	if in.Checkpoint {
		return badField("checkpoint", "Checkpoint publications are not supported by this server yet.")
	}
	if err := checkRpmOptions(in.ChecksumType, in.CompressionType, in.Layout, in.RepoConfig); err != nil {
		return err
	}
	repo, n, err := s.pubSource(r, rpmType, in.Repository, in.RepositoryVersion)
	if err != nil {
		return err
	}
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
	a := rpm.PublishArgs{Repository: repo.PulpID, Version: n, ChecksumType: pick(in.ChecksumType, ra.ChecksumType, "sha256"),
		Compression: pick(in.CompressionType, ra.CompressionType, "gz"), Layout: pick(in.Layout, ra.Layout, "nested_alphabetically")}
	if a.ChecksumType == "unknown" {
		a.ChecksumType = "sha256"
	}
	if ra.MetadataSigningService != nil {
		id, err := hrefOf("metadata_signing_service", *ra.MetadataSigningService, "signing-services/")
		if err != nil {
			return err
		}
		if _, err := meta.SigningServiceByPulpID(r.Context(), s.db, id); err != nil {
			return badField("repository", "The repository's metadata_signing_service %s does not exist.", *ra.MetadataSigningService)
		}
		a.SigningService = id
	}
	if a.Layout != "nested_alphabetically" && a.Layout != "flat" {
		return badField("layout", "The %s layout is not supported by this server yet (nested_alphabetically, flat).", a.Layout)
	}
	t, err := s.dispatch(r, task.Spec{Name: rpm.PublishTask, Args: a, Shared: []string{repoHref(repo.Type, repo.PulpID)}})
	if err != nil {
		return err
	}
	return accepted(w, t)
}

type pruneIn struct {
	RepoHrefs []string `json:"repo_hrefs" openapi:"required"`
	KeepDays  int64    `json:"keep_days" openapi:"minimum=0,default=14"`
	DryRun    bool     `json:"dry_run" openapi:"default=false"`
}

type taskGroupRef struct {
	TaskGroup string `json:"task_group" openapi:"format=uri"`
}

// rpmPrune dispatches one prune task per repository, as one task group.
func (s *Server) rpmPrune(w http.ResponseWriter, r *http.Request) error {
	in := pruneIn{KeepDays: 14}
	raw, err := readBody(r, &in, nil)
	if err != nil {
		return err
	}
	if err := requireFields(raw, "repo_hrefs"); err != nil {
		return err
	}
	if err := decode(raw, &in); err != nil {
		return err
	}
	if in.KeepDays < 0 {
		return badField("keep_days", "Ensure this value is greater than or equal to 0.")
	}
	if len(in.RepoHrefs) == 0 {
		return badField("repo_hrefs", "Name at least one repository, or [\"*\"] for all.")
	}
	ctx := r.Context()
	var repos []meta.Repository
	if len(in.RepoHrefs) == 1 && in.RepoHrefs[0] == "*" {
		all, _, err := meta.ListRepositories(ctx, s.db, meta.List{Where: []string{"r.type = ?"}, Args: []any{rpmType}})
		if err != nil {
			return err
		}
		repos = all
	} else {
		for _, h := range in.RepoHrefs {
			id, err := hrefOf("repo_hrefs", h, "repositories/rpm/rpm/")
			if err != nil {
				return err
			}
			repo, err := meta.RepositoryByPulpID(ctx, s.db, id)
			if err != nil {
				return badField("repo_hrefs", "%s: Invalid hyperlink - Object does not exist.", h)
			}
			repos = append(repos, repo)
		}
	}
	g, err := task.CreateGroup(ctx, s.db, "Prune old Packages.")
	if err != nil {
		return err
	}
	for _, repo := range repos {
		if _, err := s.dispatch(r, task.Spec{Name: rpm.PruneTask, Args: rpm.PruneArgs{Repository: repo.PulpID, KeepDays: in.KeepDays, DryRun: in.DryRun},
			Exclusive: []string{repoHref(repo.Type, repo.PulpID)}, GroupID: &g.ID}); err != nil {
			return err
		}
	}
	return writeOne(w, r, http.StatusAccepted, taskGroupRef{TaskGroup: groupHref(g.PulpID)})
}
