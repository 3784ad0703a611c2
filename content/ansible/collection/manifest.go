package collection

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The names ansible-galaxy gives the two metadata files at the collection's root.
const (
	ManifestName  = "MANIFEST.json"
	FilesJSONName = "FILES.json"
)

// collectionInfo is MANIFEST.json's collection_info, checked.
type collectionInfo struct {
	Namespace, Name, Version string
	Authors                  []string
	Readme                   string
	Tags                     []string
	Description              string // "" when null, as pulp_ansible stores it
	License                  []string
	LicenseFile              string
	Dependencies             map[string]string // "namespace.name" → version range
	Repository               string
	Documentation            string
	Homepage                 string
	Issues                   string
}

// listedFile is one entry of FILES.json, or MANIFEST.json's file_manifest_file.
type listedFile struct {
	Name   string
	Ftype  string // "file" or "dir"; other values are listed but not checked
	SHA256 string // chksum_sha256; "" when null
}

// manifest is MANIFEST.json.
type manifest struct {
	info      collectionInfo
	filesFile listedFile
}

// The keys galaxy-importer's attrs classes take; any other key fails its import.
var (
	manifestKeys = map[string]bool{"collection_info": true, "file_manifest_file": true, "format": true}
	infoKeys     = map[string]bool{
		"namespace": true, "name": true, "version": true, "license": true, "description": true,
		"repository": true, "documentation": true, "homepage": true, "issues": true,
		"authors": true, "tags": true, "license_file": true, "readme": true, "dependencies": true,
	}
	artifactFileKeys = map[string]bool{"name": true, "ftype": true, "src_name": true, "chksum_type": true, "chksum_sha256": true, "format": true}
)

//go:embed spdx.txt
var spdxText string

// spdxIDs are the non-deprecated SPDX license identifiers.
var spdxIDs = func() map[string]bool {
	ids := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(spdxText))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			ids[l] = true
		}
	}
	return ids
}()

// metaError is an invalid collection_info value, in galaxy-importer's words.
func metaError(format string, args ...any) *Error {
	return errorf(ErrInvalid, ManifestName, "invalid collection metadata: "+format, args...)
}

// parseManifest reads and checks MANIFEST.json as galaxy-importer's
// CollectionArtifactManifest.parse and CollectionInfo's validators do, in their order.
func parseManifest(data []byte) (*manifest, error) {
	top, err := jsonObject(data, ManifestName)
	if err != nil {
		return nil, err
	}
	if err := knownKeys(top, manifestKeys, ManifestName, ""); err != nil {
		return nil, err
	}
	ci, ok := top.get("collection_info")
	if !ok || isNull(ci) {
		return nil, errorf(ErrFormat, ManifestName, "no collection_info")
	}
	info, err := jsonObject(ci, ManifestName)
	if err != nil {
		return nil, err
	}
	if err := knownKeys(info, infoKeys, ManifestName, "collection_info"); err != nil {
		return nil, err
	}
	m := &manifest{}
	if err := m.info.decode(info); err != nil {
		return nil, err
	}
	fmf, ok := top.get("file_manifest_file")
	if !ok {
		return nil, errorf(ErrFormat, ManifestName, "MANIFEST.json did not contain a 'file_manifest_file' item pointing to FILES.json")
	}
	obj, err := jsonObject(fmf, ManifestName)
	if err != nil {
		return nil, err
	}
	if err := knownKeys(obj, artifactFileKeys, ManifestName, "file_manifest_file"); err != nil {
		return nil, err
	}
	if m.filesFile, err = readFileEntry(obj, ManifestName); err != nil {
		return nil, err
	}
	return m, nil
}

func (in *collectionInfo) decode(o object) error {
	var err error
	str := func(key string, required bool) string {
		if err != nil {
			return ""
		}
		s, e := optString(o, key, required)
		if e != nil {
			err = metaError("'%s' %v", key, e)
		}
		return s
	}
	list := func(key string) []string {
		if err != nil {
			return nil
		}
		l, e := stringList(o, key)
		if e != nil {
			err = metaError("expecting '%s' to be a list of strings", key)
		}
		return l
	}
	check := func(key string, e error) {
		if err == nil && e != nil {
			err = metaError("'%s' %v", key, e)
		}
	}
	in.Namespace = str("namespace", true)
	check("namespace", ValidName(in.Namespace))
	in.Name = str("name", true)
	check("name", ValidName(in.Name))
	in.Version = str("version", true)
	if err == nil {
		if _, e := ParseVersion(in.Version); e != nil {
			err = metaError("expecting 'version' to be in semantic version format, instead found '%s' (%v)", in.Version, e)
		}
	}
	in.License = list("license")
	if err == nil {
		err = checkLicenses(in.License)
	}
	in.Description = str("description", false)
	in.Repository = str("repository", true)
	check("repository", urlLen(in.Repository))
	in.Documentation = str("documentation", false)
	check("documentation", urlLen(in.Documentation))
	in.Homepage = str("homepage", false)
	check("homepage", urlLen(in.Homepage))
	in.Issues = str("issues", false)
	check("issues", urlLen(in.Issues))
	in.Authors = list("authors")
	if err == nil && len(in.Authors) == 0 {
		err = metaError("'authors' is required")
	}
	for _, a := range in.Authors {
		if err == nil && len(a) > MaxAuthorLen {
			err = metaError("each author in 'authors' list must not be greater than %d characters", MaxAuthorLen)
		}
	}
	in.Tags = list("tags")
	if err == nil {
		if e := ValidTags(in.Tags); e != nil {
			err = metaError("%v", e)
		}
	}
	in.LicenseFile = str("license_file", false)
	in.Readme = str("readme", true)
	if err == nil {
		in.Dependencies, err = dependencies(o, in.Namespace, in.Name)
	}
	if err != nil {
		return err
	}
	switch {
	case len(in.License) > 0 && in.LicenseFile != "":
		return metaError("the 'license' and 'license_file' keys are mutually exclusive")
	case len(in.License) == 0 && in.LicenseFile == "":
		return metaError("valid values for 'license' or 'license_file' are required")
	}
	return nil
}

func urlLen(s string) error {
	if len(s) > MaxURLLen {
		return fmt.Errorf("must not be greater than %d characters", MaxURLLen)
	}
	return nil
}

func checkLicenses(ls []string) error {
	var bad []string
	for _, l := range ls {
		if len(l) > MaxLicenseLen {
			return metaError("each license in 'licenses' list must not be greater than %d characters", MaxLicenseLen)
		}
		if !spdxIDs[l] {
			bad = append(bad, l)
		}
	}
	if len(bad) > 0 {
		return metaError("expecting 'license' to be a list of valid SPDX license identifiers, instead found invalid license identifiers: '%s' in 'license' value %q; for more info, visit https://spdx.org", strings.Join(bad, ", "), ls)
	}
	return nil
}

func dependencies(o object, namespace, name string) (map[string]string, error) {
	raw, ok := o.get("dependencies")
	deps := map[string]string{}
	if !ok || isNull(raw) {
		return deps, nil
	}
	do, err := jsonObject(raw, ManifestName)
	if err != nil {
		return nil, metaError("'dependencies' must be a dictionary")
	}
	for _, key := range do.keys {
		var spec string
		if isNull(do.vals[key]) || json.Unmarshal(do.vals[key], &spec) != nil {
			return nil, metaError("expecting dependency version to be a string: %s", key)
		}
		ns, n, ok := strings.Cut(key, ".")
		if !ok || strings.Contains(n, ".") {
			return nil, metaError("invalid dependency format: '%s'", key)
		}
		for _, part := range []string{ns, n} {
			if ValidName(part) != nil {
				return nil, metaError("invalid dependency format: '%s' in '%s'", part, key)
			}
		}
		if ns == namespace && n == name {
			return nil, metaError("cannot have self dependency")
		}
		if _, err := ParseRange(spec); err != nil {
			return nil, metaError("dependency version spec range invalid: %s %s (%v)", key, spec, err)
		}
		deps[key] = spec
	}
	return deps, nil
}

// filesJSON is FILES.json's list of entries.
type filesJSON struct {
	Files []listedFile
}

// parseFilesJSON reads FILES.json as galaxy-importer's CollectionArtifactFileManifest
// does: a "files" list whose entries have at least a name and an ftype.
func parseFilesJSON(path string, data []byte) (*filesJSON, error) {
	top, err := jsonObject(data, path)
	if err != nil {
		return nil, err
	}
	raw, ok := top.get("files")
	if !ok {
		return nil, errorf(ErrFormat, path, "no 'files' list")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errorf(ErrFormat, path, "'files' is not a list")
	}
	f := &filesJSON{Files: make([]listedFile, 0, len(items))}
	for i, it := range items {
		o, err := jsonObject(it, path)
		if err != nil {
			return nil, errorf(ErrFormat, path, "entry %d is not an object", i)
		}
		e, err := readFileEntry(o, path)
		if err != nil {
			return nil, err
		}
		f.Files = append(f.Files, e)
	}
	return f, nil
}

func readFileEntry(o object, path string) (listedFile, error) {
	var e listedFile
	var err error
	if e.Name, err = optString(o, "name", true); err != nil {
		return e, errorf(ErrFormat, path, "an entry's 'name' %v", err)
	}
	if e.Ftype, err = optString(o, "ftype", true); err != nil {
		return e, errorf(ErrFormat, path, "entry %q: 'ftype' %v", e.Name, err)
	}
	if e.SHA256, err = optString(o, "chksum_sha256", false); err != nil {
		return e, errorf(ErrFormat, path, "entry %q: 'chksum_sha256' %v", e.Name, err)
	}
	return e, nil
}

// object is a JSON object with its keys in document order (the first error Galaxy
// reports depends on it); a repeated key keeps its last value, as Python's json does.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func (o object) get(k string) (json.RawMessage, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func jsonObject(data []byte, path string) (object, error) {
	o := object{vals: map[string]json.RawMessage{}}
	if !utf8.Valid(data) {
		return o, errorf(ErrFormat, path, "not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	fail := func(err error) (object, error) {
		return o, &Error{Kind: ErrFormat, Path: path, Msg: "invalid JSON: " + err.Error(), Err: err}
	}
	tok, err := dec.Token()
	if err != nil {
		return fail(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return o, errorf(ErrFormat, path, "not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fail(err)
		}
		if _, seen := o.vals[k]; !seen {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return fail(err)
	}
	if _, err := dec.Token(); err == nil {
		return o, errorf(ErrFormat, path, "invalid JSON: data after the object")
	}
	return o, nil
}

func knownKeys(o object, known map[string]bool, path, where string) error {
	for _, k := range o.keys {
		if !known[k] {
			if where != "" {
				return errorf(ErrFormat, path, "unexpected key %q in %s", k, where)
			}
			return errorf(ErrFormat, path, "unexpected key %q", k)
		}
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// optString reads a string or null ("" then); required makes "", null and absence an
// error. Any other JSON type is an error.
func optString(o object, key string, required bool) (string, error) {
	raw, ok := o.get(key)
	var s string
	if ok && !isNull(raw) {
		if json.Unmarshal(raw, &s) != nil {
			return "", errors.New("must be a string")
		}
	}
	if required && s == "" {
		return "", errors.New("is required")
	}
	return s, nil
}

// stringList reads a list of strings; absent is an empty list, anything else (null,
// a list holding a null or a number) an error.
func stringList(o object, key string) ([]string, error) {
	raw, ok := o.get(key)
	if !ok {
		return []string{}, nil
	}
	var items []json.RawMessage
	if isNull(raw) || json.Unmarshal(raw, &items) != nil {
		return nil, errors.New("not a list")
	}
	l := make([]string, len(items))
	for i, it := range items {
		if isNull(it) || json.Unmarshal(it, &l[i]) != nil {
			return nil, errors.New("not a string")
		}
	}
	return l, nil
}
