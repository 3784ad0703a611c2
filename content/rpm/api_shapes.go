package rpm

import (
	"encoding/json"
	"net/url"

	"pith/api/rest"
)

// Shapes of the rpm plugin's resources: what they add to the common ones.

// rpmRepoAttrs are what an rpm repository adds (its attrs).
type rpmRepoAttrs struct {
	Autopublish               bool            `json:"autopublish" openapi:"default=false"`
	MetadataSigningService    *string         `json:"metadata_signing_service" openapi:"format=uri,nullable"`
	PackageSigningService     *string         `json:"package_signing_service" openapi:"format=uri,nullable"`
	PackageSigningFingerprint *string         `json:"package_signing_fingerprint" openapi:"nullable,minLength=1,maxLength=40"`
	RetainPackageVersions     int64           `json:"retain_package_versions" openapi:"minimum=0,optional"`
	ChecksumType              *string         `json:"checksum_type" openapi:"enum=unknown|md5|sha1|sha224|sha256|sha384|sha512,nullable"`
	RepoConfig                json.RawMessage `json:"repo_config,omitempty"`
	CompressionType           *string         `json:"compression_type" openapi:"enum=zstd|gz|none,nullable"`
	Layout                    *string         `json:"layout" openapi:"enum=nested_alphabetically|flat|nested_by_digest|nested_by_both,nullable"`
}

type rpmRepositoryIn struct {
	rest.RepoIn
	rpmRepoAttrs
	// OsvConfig (newer Pulp releases) is accepted unset: pith makes no vulnerability
	// reports.
	OsvConfig json.RawMessage `json:"osv_config,omitempty" openapi:"newer"`
}

var (
	checksumTypes    = map[string]bool{"unknown": true, "md5": true, "sha1": true, "sha224": true, "sha256": true, "sha384": true, "sha512": true}
	compressionTypes = map[string]bool{"zstd": true, "gz": true, "none": true}
	layouts          = map[string]bool{"nested_alphabetically": true, "flat": true, "nested_by_digest": true, "nested_by_both": true}
)

func (r *rpmRepositoryIn) Validate() error {
	if len(r.OsvConfig) > 0 && string(r.OsvConfig) != "null" {
		return rest.BadField("osv_config", "Vulnerability reports are not supported by this server yet.")
	}
	if r.PackageSigningService != nil {
		return rest.BadField("package_signing_service", "Package signing is not supported by this server yet.")
	}
	if r.MetadataSigningService != nil {
		if _, err := rest.HrefOf("metadata_signing_service", *r.MetadataSigningService, "signing-services/"); err != nil {
			return err
		}
	}
	if r.RetainPackageVersions < 0 {
		return rest.BadField("retain_package_versions", "Ensure this value is greater than or equal to 0.")
	}
	return checkRpmOptions(r.ChecksumType, r.CompressionType, r.Layout, r.RepoConfig)
}

// checkRpmOptions validates the publishing options repositories and publications share.
func checkRpmOptions(checksum, compression, layout *string, repoConfig json.RawMessage) error {
	for _, c := range []struct {
		field string
		v     *string
		ok    map[string]bool
	}{{"checksum_type", checksum, checksumTypes}, {"compression_type", compression, compressionTypes}, {"layout", layout, layouts}} {
		if c.v != nil && !c.ok[*c.v] {
			return rest.BadField(c.field, "%q is not a valid choice.", *c.v)
		}
	}
	if len(repoConfig) > 0 && string(repoConfig) != "null" {
		var m map[string]any
		if json.Unmarshal(repoConfig, &m) != nil {
			return rest.BadField("repo_config", "Must be a JSON object of config.repo settings.")
		}
	}
	return nil
}

type rpmRepositoryResponse struct {
	rest.RepoResponse
	rpmRepoAttrs
	MetadataChecksumType *string `json:"metadata_checksum_type" openapi:"nullable,readOnly"`
	PackageChecksumType  *string `json:"package_checksum_type" openapi:"nullable,readOnly"`
	Gpgcheck             int64   `json:"gpgcheck" openapi:"readOnly"`
	RepoGpgcheck         int64   `json:"repo_gpgcheck" openapi:"readOnly"`
	SqliteMetadata       bool    `json:"sqlite_metadata" openapi:"readOnly"`
}

// Default shows an unset repo_config as {}, Pulp's default.
func (r *rpmRepositoryResponse) Default() { r.RepoConfig = configOrEmpty(r.RepoConfig) }

type rpmRemoteAttrs struct {
	SlesAuthToken *string `json:"sles_auth_token" openapi:"nullable,minLength=1"`
}

type rpmRemoteIn struct {
	rest.RemoteIn
	rpmRemoteAttrs
}

type rpmRemoteResponse struct {
	rest.RemoteResponse
	rpmRemoteAttrs
}

// ulnRemoteAttrs are what a ULN remote adds: the server its url's channel is on.
type ulnRemoteAttrs struct {
	ULNServerBaseURL *string `json:"uln_server_base_url" openapi:"nullable,minLength=1"`
}

// ulnRemoteIn is a ULN remote's body (pulp_rpm's UlnRemoteSerializer): its url is
// uln://<channel label>, and its credentials, which log in to the ULN server, are
// required.
type ulnRemoteIn struct {
	rest.RemoteIn
	ulnRemoteAttrs
	Username string `json:"username" openapi:"minLength=1,writeOnly"`
	Password string `json:"password" openapi:"minLength=1,writeOnly"`
}

func (r *ulnRemoteIn) Validate() error {
	for name, v := range map[string]string{"username": r.Username, "password": r.Password} {
		if v == "" {
			return rest.BadField(name, "This field is required.")
		}
	}
	if b := r.ULNServerBaseURL; b != nil {
		if u, err := url.Parse(*b); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return rest.BadField("uln_server_base_url", "Enter a valid http or https URL without credentials.")
		}
	}
	return nil
}

type ulnRemoteResponse struct {
	rest.RemoteResponse
	ULNServerBaseURL *string `json:"uln_server_base_url" openapi:"nullable"`
}

type rpmDistAttrs struct {
	GenerateRepoConfig bool `json:"generate_repo_config" openapi:"default=false"`
}

type rpmDistributionIn struct {
	rest.DistIn
	rpmDistAttrs
}

type rpmDistributionResponse struct {
	rest.DistResponse
	rpmDistAttrs
}

type rpmPublicationIn struct {
	rest.PublicationIn
	ChecksumType    *string         `json:"checksum_type" openapi:"enum=unknown|md5|sha1|sha224|sha256|sha384|sha512,optional"`
	RepoConfig      json.RawMessage `json:"repo_config"`
	CompressionType *string         `json:"compression_type" openapi:"enum=zstd|gz|none,optional"`
	Layout          *string         `json:"layout" openapi:"enum=nested_alphabetically|flat|nested_by_digest|nested_by_both,nullable"`
}

type rpmPublicationResponse struct {
	rest.PublicationResponse
	Checkpoint           bool            `json:"checkpoint"`
	ChecksumType         string          `json:"checksum_type"`
	MetadataChecksumType string          `json:"metadata_checksum_type" openapi:"readOnly"`
	PackageChecksumType  string          `json:"package_checksum_type" openapi:"readOnly"`
	Gpgcheck             int64           `json:"gpgcheck" openapi:"readOnly"`
	RepoGpgcheck         int64           `json:"repo_gpgcheck" openapi:"readOnly"`
	SqliteMetadata       bool            `json:"sqlite_metadata" openapi:"readOnly"`
	RepoConfig           json.RawMessage `json:"repo_config"`
	CompressionType      string          `json:"compression_type"`
	Layout               *string         `json:"layout" openapi:"nullable"`
}
