package api

import "encoding/json"

// The request and response shapes. Each is both what the handlers decode or render and
// what the OpenAPI document describes (by reflection), so the two cannot disagree.
// Struct tags `openapi:"..."` carry what JSON tags can't (format, nullable, readOnly).

type taskResponse struct {
	PulpHref                string           `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn                     string           `json:"prn" openapi:"readOnly"`
	PulpCreated             string           `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated         string           `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	State                   string           `json:"state" openapi:"readOnly"`
	Name                    string           `json:"name"`
	LoggingCID              string           `json:"logging_cid"`
	CreatedBy               *string          `json:"created_by" openapi:"format=uri,readOnly"`
	UnblockedAt             any              `json:"unblocked_at" openapi:"format=date-time,readOnly,type=string,nullable"`
	StartedAt               any              `json:"started_at" openapi:"format=date-time,readOnly,type=string,nullable"`
	FinishedAt              any              `json:"finished_at" openapi:"format=date-time,readOnly,type=string,nullable"`
	Error                   json.RawMessage  `json:"error" openapi:"readOnly,type=object,nullable"`
	Worker                  *string          `json:"worker" openapi:"format=uri,readOnly"`
	ParentTask              *string          `json:"parent_task" openapi:"format=uri,readOnly"`
	ChildTasks              []string         `json:"child_tasks" openapi:"readOnly"`
	TaskGroup               *string          `json:"task_group" openapi:"format=uri,readOnly"`
	ProgressReports         []progressReport `json:"progress_reports" openapi:"readOnly"`
	CreatedResources        []string         `json:"created_resources" openapi:"readOnly"`
	ReservedResourcesRecord []string         `json:"reserved_resources_record" openapi:"readOnly"`
	Result                  json.RawMessage  `json:"result" openapi:"readOnly,nullable"`
}

type progressReport struct {
	Message string  `json:"message" openapi:"readOnly"`
	Code    string  `json:"code" openapi:"readOnly"`
	State   string  `json:"state" openapi:"readOnly"`
	Total   *int64  `json:"total" openapi:"readOnly"`
	Done    int64   `json:"done" openapi:"readOnly"`
	Suffix  *string `json:"suffix" openapi:"readOnly"`
}

type taskCancel struct {
	State string `json:"state" openapi:"enum=canceled,optional"`
}

type purgeIn struct {
	FinishedBefore string   `json:"finished_before" openapi:"format=date-time,optional"`
	States         []string `json:"states"`
}

type taskGroupResponse struct {
	PulpHref           string           `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn                string           `json:"prn" openapi:"readOnly"`
	Description        string           `json:"description"`
	AllTasksDispatched bool             `json:"all_tasks_dispatched"`
	Waiting            int64            `json:"waiting" openapi:"readOnly"`
	Skipped            int64            `json:"skipped" openapi:"readOnly"`
	Running            int64            `json:"running" openapi:"readOnly"`
	Completed          int64            `json:"completed" openapi:"readOnly"`
	Canceled           int64            `json:"canceled" openapi:"readOnly"`
	Failed             int64            `json:"failed" openapi:"readOnly"`
	Canceling          int64            `json:"canceling" openapi:"readOnly"`
	GroupProgress      []progressReport `json:"group_progress_reports" openapi:"readOnly"`
	Tasks              []minimalTask    `json:"tasks" openapi:"readOnly"`
}

type minimalTask struct {
	PulpHref    string  `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn         string  `json:"prn" openapi:"readOnly"`
	PulpCreated string  `json:"pulp_created" openapi:"format=date-time,readOnly"`
	Name        string  `json:"name"`
	State       string  `json:"state" openapi:"readOnly"`
	StartedAt   any     `json:"started_at" openapi:"format=date-time,readOnly,type=string,nullable"`
	FinishedAt  any     `json:"finished_at" openapi:"format=date-time,readOnly,type=string,nullable"`
	Worker      *string `json:"worker" openapi:"format=uri,readOnly"`
}

type workerResponse struct {
	PulpHref        string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string            `json:"prn" openapi:"readOnly"`
	PulpCreated     string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Name            string            `json:"name" openapi:"readOnly"`
	LastHeartbeat   string            `json:"last_heartbeat" openapi:"format=date-time,readOnly"`
	Versions        map[string]string `json:"versions" openapi:"readOnly"`
	CurrentTask     *string           `json:"current_task" openapi:"format=uri,readOnly"`
}

type taskScheduleResponse struct {
	PulpHref         string  `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn              string  `json:"prn" openapi:"readOnly"`
	PulpCreated      string  `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated  string  `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Name             string  `json:"name"`
	TaskName         string  `json:"task_name"`
	DispatchInterval *string `json:"dispatch_interval"`
	NextDispatch     *string `json:"next_dispatch" openapi:"format=date-time,readOnly"`
	LastTask         *string `json:"last_task,omitempty" openapi:"format=uri,readOnly"`
}

type artifactResponse struct {
	PulpHref        string  `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string  `json:"prn" openapi:"readOnly"`
	PulpCreated     string  `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string  `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	File            string  `json:"file"`
	Size            int64   `json:"size"`
	MD5             *string `json:"md5" openapi:"nullable"`
	SHA1            *string `json:"sha1" openapi:"nullable"`
	SHA224          *string `json:"sha224" openapi:"nullable"`
	SHA256          *string `json:"sha256" openapi:"nullable"`
	SHA384          *string `json:"sha384" openapi:"nullable"`
	SHA512          *string `json:"sha512" openapi:"nullable"`
}

type artifactIn struct {
	File   string  `json:"file" openapi:"format=binary"`
	Size   *int64  `json:"size"`
	MD5    *string `json:"md5" openapi:"nullable,minLength=1"`
	SHA1   *string `json:"sha1" openapi:"nullable,minLength=1"`
	SHA224 *string `json:"sha224" openapi:"nullable,minLength=1"`
	SHA256 *string `json:"sha256" openapi:"nullable,minLength=1"`
	SHA384 *string `json:"sha384" openapi:"nullable,minLength=1"`
	SHA512 *string `json:"sha512" openapi:"nullable,minLength=1"`
}

type uploadIn struct {
	Size int64 `json:"size"`
}

type uploadResponse struct {
	PulpHref        string `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string `json:"prn" openapi:"readOnly"`
	PulpCreated     string `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Size            int64  `json:"size"`
	Completed       any    `json:"completed" openapi:"format=date-time,readOnly,type=string,nullable"`
}

// uploadDetailResponse is an upload with the chunks it received.
type uploadDetailResponse struct {
	uploadResponse
	Chunks []uploadChunkResponse `json:"chunks" openapi:"readOnly"`
}

type uploadChunkResponse struct {
	Offset int64 `json:"offset" openapi:"readOnly"`
	Size   int64 `json:"size" openapi:"readOnly"`
}

type uploadChunkIn struct {
	File   string  `json:"file" openapi:"format=binary"`
	SHA256 *string `json:"sha256" openapi:"minLength=1"`
}

type uploadCommitIn struct {
	SHA256 string `json:"sha256" openapi:"minLength=1"`
}

type orphansCleanupIn struct {
	ContentHrefs         []string `json:"content_hrefs"`
	OrphanProtectionTime *int64   `json:"orphan_protection_time" openapi:"nullable"`
}

type contentSummaryEntry struct {
	Count int64  `json:"count"`
	Href  string `json:"href"`
}

type versionResponse struct {
	PulpHref        string                                    `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string                                    `json:"prn" openapi:"readOnly"`
	PulpCreated     string                                    `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string                                    `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Number          int64                                     `json:"number" openapi:"readOnly"`
	Repository      string                                    `json:"repository" openapi:"format=uri,readOnly"`
	BaseVersion     *string                                   `json:"base_version" openapi:"format=uri"`
	ContentSummary  map[string]map[string]contentSummaryEntry `json:"content_summary" openapi:"readOnly"`
	VulnReport      *string                                   `json:"vuln_report" openapi:"readOnly"`
}

type reclaimIn struct {
	RepoHrefs            []any    `json:"repo_hrefs" openapi:"required"`
	RepoVersionsKeeplist []string `json:"repo_versions_keeplist" openapi:"format=uri"`
}

type repairIn struct {
	VerifyChecksums bool `json:"verify_checksums" openapi:"default=true"`
}

type modifyIn struct {
	AddContentUnits    []string `json:"add_content_units"`
	RemoveContentUnits []string `json:"remove_content_units"`
	BaseVersion        *string  `json:"base_version" openapi:"format=uri"`
	// Overwrite false fails the task when an added unit would replace one with the same
	// repo key (Pulp 3.106+; true by default, as there).
	Overwrite *bool `json:"overwrite" openapi:"newer"`
}

type setLabelIn struct {
	Key   string  `json:"key" openapi:"minLength=1"`
	Value *string `json:"value" openapi:"nullable,required"`
}

type setLabelResponse struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

type unsetLabelIn struct {
	Key string `json:"key" openapi:"minLength=1"`
}

type unsetLabelResponse struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}
