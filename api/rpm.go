package api

import (
	"net/http"
	"slices"

	"pith/api/openapi"
	"pith/content/rpm"
	"pith/task"
)

// rpmTable adds the rpm plugin's operations.
func (s *Server) rpmTable(reg *openapi.Registry, add func(opDef)) {
	s.typeTable(reg, add, typeRoutes{typ: rpmType, plugin: "rpm", name: "rpm", title: "Rpm", schema: "rpm.Rpm",
		repo: rpmRepositoryIn{}, repoView: rpmRepositoryResponse{}, remote: rpmRemoteIn{}, remoteView: rpmRemoteResponse{},
		dist: rpmDistributionIn{}, distView: rpmDistributionResponse{}, sync: s.rpmRepoSync, syncBody: rpmSyncIn{}, syncBodyName: "RpmRepositorySyncURL"})
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
	if policy == rpm.MirrorComplete {
		return badField("sync_policy", "mirror_complete (republishing the upstream metadata as is) is not supported by this server yet; use mirror_content_only.")
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
