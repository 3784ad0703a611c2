package api

// Shapes of the resources: the parts every type shares, and the file plugin's own.

// repoIn is the body every repository type takes; a type embeds it and adds its own
// fields, which the attrs column holds (under Pulp's names).
type repoIn struct {
	PulpLabels         labelsIn `json:"pulp_labels"`
	Name               string   `json:"name" openapi:"minLength=1"`
	Description        *string  `json:"description" openapi:"nullable,minLength=1"`
	RetainRepoVersions *int64   `json:"retain_repo_versions" openapi:"nullable,minimum=1"`
	Remote             *string  `json:"remote" openapi:"format=uri,nullable"`
}

// repoResponse is what every repository type shows.
type repoResponse struct {
	PulpHref           string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn                string            `json:"prn" openapi:"readOnly"`
	PulpCreated        string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated    string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	VersionsHref       string            `json:"versions_href" openapi:"format=uri,readOnly"`
	PulpLabels         map[string]string `json:"pulp_labels"`
	LatestVersionHref  string            `json:"latest_version_href" openapi:"format=uri,readOnly"`
	Name               string            `json:"name"`
	Description        *string           `json:"description" openapi:"nullable"`
	RetainRepoVersions *int64            `json:"retain_repo_versions" openapi:"nullable"`
	Remote             *string           `json:"remote" openapi:"format=uri,nullable"`
}

// fileRepoAttrs are what a file repository adds (its attrs).
type fileRepoAttrs struct {
	Autopublish bool    `json:"autopublish" openapi:"default=false"`
	Manifest    *string `json:"manifest" openapi:"nullable,minLength=1,default=PULP_MANIFEST"`
}

type fileRepositoryIn struct {
	repoIn
	fileRepoAttrs
}

func (f *fileRepositoryIn) validate() error {
	if f.Manifest != nil && *f.Manifest == "" {
		return badField("manifest", "This field may not be blank.")
	}
	return nil
}

type fileRepositoryResponse struct {
	repoResponse
	Autopublish bool    `json:"autopublish"`
	Manifest    *string `json:"manifest" openapi:"nullable"`
}

// remoteIn is the body every remote type takes; a type with fields of its own embeds it.
// The attrs column holds the body's JSON without name, url, policy and labels (those are
// columns), under Pulp's field names, which content.DownloadConfig reads.
type remoteIn struct {
	Name                string              `json:"name" openapi:"minLength=1"`
	URL                 string              `json:"url" openapi:"minLength=1"`
	PulpLabels          labelsIn            `json:"pulp_labels"`
	Policy              string              `json:"policy" openapi:"enum=immediate|on_demand|streamed,default=immediate"`
	CACert              *string             `json:"ca_cert" openapi:"nullable,minLength=1"`
	ClientCert          *string             `json:"client_cert" openapi:"nullable,minLength=1"`
	ClientKey           *string             `json:"client_key" openapi:"nullable,minLength=1,writeOnly"`
	TLSValidation       bool                `json:"tls_validation" openapi:"optional"`
	ProxyURL            *string             `json:"proxy_url" openapi:"nullable,minLength=1"`
	ProxyUsername       *string             `json:"proxy_username" openapi:"nullable,minLength=1,writeOnly"`
	ProxyPassword       *string             `json:"proxy_password" openapi:"nullable,minLength=1,writeOnly"`
	Username            *string             `json:"username" openapi:"nullable,minLength=1,writeOnly"`
	Password            *string             `json:"password" openapi:"nullable,minLength=1,writeOnly"`
	MaxRetries          *int64              `json:"max_retries" openapi:"nullable"`
	TotalTimeout        *float64            `json:"total_timeout" openapi:"nullable,minimum=0"`
	ConnectTimeout      *float64            `json:"connect_timeout" openapi:"nullable,minimum=0"`
	SockConnectTimeout  *float64            `json:"sock_connect_timeout" openapi:"nullable,minimum=0"`
	SockReadTimeout     *float64            `json:"sock_read_timeout" openapi:"nullable,minimum=0"`
	Headers             []map[string]string `json:"headers"`
	DownloadConcurrency *int64              `json:"download_concurrency" openapi:"nullable,minimum=1"`
	RateLimit           *int64              `json:"rate_limit" openapi:"nullable"`
}

type hiddenField struct {
	Name  string `json:"name"`
	IsSet bool   `json:"is_set"`
}

// remoteResponse is what every remote type shows; a type with fields of its own embeds it.
type remoteResponse struct {
	PulpHref            string              `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn                 string              `json:"prn" openapi:"readOnly"`
	PulpCreated         string              `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated     string              `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Name                string              `json:"name"`
	URL                 string              `json:"url"`
	PulpLabels          map[string]string   `json:"pulp_labels"`
	Policy              string              `json:"policy"`
	CACert              *string             `json:"ca_cert" openapi:"nullable"`
	ClientCert          *string             `json:"client_cert" openapi:"nullable"`
	TLSValidation       bool                `json:"tls_validation"`
	ProxyURL            *string             `json:"proxy_url" openapi:"nullable"`
	MaxRetries          *int64              `json:"max_retries" openapi:"nullable"`
	TotalTimeout        *float64            `json:"total_timeout" openapi:"nullable"`
	ConnectTimeout      *float64            `json:"connect_timeout" openapi:"nullable"`
	SockConnectTimeout  *float64            `json:"sock_connect_timeout" openapi:"nullable"`
	SockReadTimeout     *float64            `json:"sock_read_timeout" openapi:"nullable"`
	Headers             []map[string]string `json:"headers"`
	DownloadConcurrency *int64              `json:"download_concurrency" openapi:"nullable"`
	RateLimit           *int64              `json:"rate_limit" openapi:"nullable"`
	HiddenFields        []hiddenField       `json:"hidden_fields" openapi:"readOnly"`
}

type filePublicationIn struct {
	RepositoryVersion *string `json:"repository_version" openapi:"format=uri"`
	Repository        *string `json:"repository" openapi:"format=uri,desc=A URI of the repository to be published."`
	Manifest          *string `json:"manifest" openapi:"nullable,minLength=1,default=PULP_MANIFEST"`
	Checkpoint        bool    `json:"checkpoint" openapi:"optional"`
}

type filePublicationResponse struct {
	PulpHref          string   `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn               string   `json:"prn" openapi:"readOnly"`
	PulpCreated       string   `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated   string   `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	RepositoryVersion string   `json:"repository_version" openapi:"format=uri"`
	Repository        string   `json:"repository" openapi:"format=uri"`
	Distributions     []string `json:"distributions" openapi:"readOnly"`
	Manifest          *string  `json:"manifest" openapi:"nullable"`
	Checkpoint        bool     `json:"checkpoint"`
}

type filePubAttrs struct {
	Manifest *string `json:"manifest"`
}

// distIn is the body every distribution type takes; a type embeds it and adds its own
// fields, which the attrs column holds.
type distIn struct {
	BasePath     string   `json:"base_path" openapi:"minLength=1"`
	ContentGuard *string  `json:"content_guard" openapi:"format=uri,nullable"`
	Hidden       bool     `json:"hidden" openapi:"default=false"`
	PulpLabels   labelsIn `json:"pulp_labels"`
	Name         string   `json:"name" openapi:"minLength=1"`
	Repository   *string  `json:"repository" openapi:"format=uri,nullable"`
	Publication  *string  `json:"publication" openapi:"format=uri,nullable"`
	Checkpoint   bool     `json:"checkpoint" openapi:"optional"`
}

// distResponse is what every distribution type shows.
type distResponse struct {
	PulpHref             string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn                  string            `json:"prn" openapi:"readOnly"`
	PulpCreated          string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated      string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	BasePath             string            `json:"base_path"`
	BaseURL              string            `json:"base_url" openapi:"readOnly"`
	ContentGuard         *string           `json:"content_guard" openapi:"format=uri,nullable"`
	NoContentChangeSince *string           `json:"no_content_change_since" openapi:"readOnly"`
	Hidden               bool              `json:"hidden"`
	PulpLabels           map[string]string `json:"pulp_labels"`
	Name                 string            `json:"name"`
	Repository           *string           `json:"repository" openapi:"format=uri,nullable"`
	Publication          *string           `json:"publication" openapi:"format=uri,nullable"`
	Checkpoint           bool              `json:"checkpoint"`
}

// contentIn is what every content create body takes: where the file comes from (exactly
// one of file, artifact, upload and file_url), labels, and the repository to add to.
type contentIn struct {
	Repository *string  `json:"repository" openapi:"format=uri,writeOnly"`
	PulpLabels labelsIn `json:"pulp_labels"`
	Artifact   *string  `json:"artifact" openapi:"format=uri,writeOnly"`
	File       *string  `json:"file" openapi:"format=binary,writeOnly"`
	Upload     *string  `json:"upload" openapi:"format=uri,writeOnly"`
	FileURL    *string  `json:"file_url" openapi:"format=uri,writeOnly,minLength=1"`
	Downloader any      `json:"downloader_config" openapi:"writeOnly,nullable"`
}

func (c *contentIn) common() *contentIn { return c }

type fileContentIn struct {
	contentIn
	RelativePath string `json:"relative_path" openapi:"minLength=1"`
}

type fileContentResponse struct {
	PulpHref        string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string            `json:"prn" openapi:"readOnly"`
	PulpCreated     string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	PulpLabels      map[string]string `json:"pulp_labels"`
	VulnReport      *string           `json:"vuln_report" openapi:"format=uri,readOnly"`
	Artifact        *string           `json:"artifact" openapi:"format=uri"`
	RelativePath    string            `json:"relative_path"`
	MD5             *string           `json:"md5" openapi:"readOnly"`
	SHA1            *string           `json:"sha1" openapi:"readOnly"`
	SHA224          *string           `json:"sha224" openapi:"readOnly"`
	SHA256          *string           `json:"sha256" openapi:"readOnly"`
	SHA384          *string           `json:"sha384" openapi:"readOnly"`
	SHA512          *string           `json:"sha512" openapi:"readOnly"`
}

type fileSyncIn struct {
	Remote *string `json:"remote" openapi:"format=uri"`
	Mirror bool    `json:"mirror" openapi:"default=false"`
}

// contentResponse is the generic content list's item.
type contentResponse struct {
	PulpHref        string            `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn             string            `json:"prn" openapi:"readOnly"`
	PulpCreated     string            `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated string            `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	PulpLabels      map[string]string `json:"pulp_labels"`
	VulnReport      *string           `json:"vuln_report" openapi:"format=uri,readOnly"`
}
