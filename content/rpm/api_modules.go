package rpm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"pith/api/href"
	"pith/api/rest"
	"pith/content/rpm/modulemd"
	"pith/meta"
	"pith/task"
)

// The create operations of modular units (content_rpm_modulemds_create,
// content_rpm_modulemd_defaults_create, content_rpm_modulemd_obsoletes_create). The
// unit is derived from the body's snippet, one document parsed as sync parses
// modules.yaml, so it is the unit sync would store (same natural key, same attrs) and
// publishing writes the snippet back. The body's other fields are Pulp's, required as
// Pulp requires them, and must agree with the snippet: pith never stores fields that
// say something else than the YAML it republishes. Everything is checked before the
// task is queued.

// charField is the input of a Django REST framework CharField: a string, or a number
// taken as its text (JSON clients send version 20180730223407 as a number).
type charField string

func (c *charField) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = charField(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("Not a valid string.")
	}
	*c = charField(n)
	return nil
}

// rpmModulemdIn is the body of content_rpm_modulemds_create (Modulemd).
type rpmModulemdIn struct {
	Repository    *string       `json:"repository" openapi:"format=uri,writeOnly"`
	PulpLabels    rest.LabelsIn `json:"pulp_labels"`
	Name          charField     `json:"name" openapi:"minLength=1"`
	Stream        charField     `json:"stream" openapi:"minLength=1"`
	Version       charField     `json:"version" openapi:"minLength=1"`
	StaticContext bool          `json:"static_context" openapi:"optional"`
	Context       charField     `json:"context" openapi:"minLength=1"`
	Arch          charField     `json:"arch" openapi:"minLength=1"`
	Artifacts     any           `json:"artifacts" openapi:"required,nullable"`
	Dependencies  any           `json:"dependencies" openapi:"required,nullable"`
	Packages      []string      `json:"packages"`
	Snippet       string        `json:"snippet" openapi:"writeOnly,minLength=1"`
	Profiles      any           `json:"profiles" openapi:"required,nullable"`
	Description   charField     `json:"description" openapi:"minLength=1"`
	Overwrite     *bool         `json:"overwrite" openapi:"newer"`
}

// rpmModulemdDefaultsIn is the body of content_rpm_modulemd_defaults_create
// (ModulemdDefaults).
type rpmModulemdDefaultsIn struct {
	Repository *string       `json:"repository" openapi:"format=uri,writeOnly"`
	PulpLabels rest.LabelsIn `json:"pulp_labels"`
	Module     charField     `json:"module" openapi:"minLength=1"`
	Stream     charField     `json:"stream" openapi:"minLength=1"`
	Profiles   any           `json:"profiles" openapi:"required"`
	Snippet    string        `json:"snippet" openapi:"writeOnly,minLength=1"`
	Overwrite  *bool         `json:"overwrite" openapi:"newer"`
}

// rpmModulemdObsoleteIn is the body of content_rpm_modulemd_obsoletes_create
// (ModulemdObsolete).
type rpmModulemdObsoleteIn struct {
	Repository              *string       `json:"repository" openapi:"format=uri,writeOnly"`
	PulpLabels              rest.LabelsIn `json:"pulp_labels"`
	Modified                charField     `json:"modified" openapi:"minLength=1"`
	ModuleName              charField     `json:"module_name" openapi:"minLength=1"`
	ModuleStream            charField     `json:"module_stream" openapi:"minLength=1"`
	Message                 charField     `json:"message" openapi:"minLength=1"`
	OverridePrevious        *charField    `json:"override_previous" openapi:"required,minLength=1"`
	ModuleContext           *charField    `json:"module_context" openapi:"required,minLength=1"`
	EOLDate                 *charField    `json:"eol_date" openapi:"required,minLength=1"`
	ObsoletedByModuleName   *charField    `json:"obsoleted_by_module_name" openapi:"required,minLength=1"`
	ObsoletedByModuleStream *charField    `json:"obsoleted_by_module_stream" openapi:"required,minLength=1"`
	Snippet                 string        `json:"snippet" openapi:"writeOnly,minLength=1"`
	Overwrite               *bool         `json:"overwrite" openapi:"newer"`
}

// rpmModuleKind describes one of the three create operations.
type rpmModuleKind struct {
	typ      string // the unit type
	kind     string // the general_create kind
	doc      string // the snippet's "document:"
	bodyName string
	body     func() any
}

var rpmModuleKinds = map[string]rpmModuleKind{
	ModulemdType: {ModulemdType, "rpm_modulemd", "modulemd", "rpm.Modulemd",
		func() any { return &rpmModulemdIn{} }},
	DefaultsType: {DefaultsType, "rpm_modulemd_defaults", "modulemd-defaults", "rpm.ModulemdDefaults",
		func() any { return &rpmModulemdDefaultsIn{} }},
	ObsoleteType: {ObsoleteType, "rpm_modulemd_obsolete", "modulemd-obsoletes", "rpm.ModulemdObsolete",
		func() any { return &rpmModulemdObsoleteIn{} }},
}

// moduleCreateHandler is the create operation of a modular kind.
func (p *Plugin) moduleCreateHandler(k rpmModuleKind) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		a, repo, err := p.readRpmModule(r, k)
		if err != nil {
			return err
		}
		return p.core.Env().DispatchCreate(w, r, k.kind, href.Root+"content/"+segmentOf(k.typ)+"/", a, repo)
	}
}

// RpmModuleArgs are the arguments of the task that creates a modulemd, defaults or
// obsolete unit; the snippet was checked when the request was read.
type RpmModuleArgs struct {
	Snippet     string      `json:"snippet"`
	Packages    []string    `json:"packages,omitempty"` // package hrefs (modulemds)
	Labels      meta.Labels `json:"labels"`
	Repository  string      `json:"repository,omitempty"`
	NoOverwrite bool        `json:"no_overwrite,omitempty"`
}

// modChecks collects the field errors of a modular create body, DRF style: every
// field's problem at once.
type modChecks struct {
	raw  map[string]json.RawMessage
	form bool // a form body: an empty value of a nullable field is null, as DRF reads it
	fe   rest.FieldErrors
}

func (c *modChecks) fail(field, format string, args ...any) {
	c.fe[field] = append(c.fe[field], fmt.Sprintf(format, args...))
}

// value returns a field's value; ok is false (and the error recorded) when the field is
// missing, or null and not nullable. A null (or, in a form, empty) nullable value comes
// back as nil with ok true.
func (c *modChecks) value(field string, nullable bool) (json.RawMessage, bool) {
	v, present := c.raw[field]
	if !present {
		c.fail(field, "This field is required.")
		return nil, false
	}
	if nullable && c.form && string(v) == `""` {
		return nil, true
	}
	if string(v) == "null" {
		if nullable {
			return nil, true
		}
		c.fail(field, "This field may not be null.")
		return nil, false
	}
	return v, true
}

// charText reads a CharField's value (decode has checked it is a string or a number).
func charText(v json.RawMessage) string {
	var s charField
	s.UnmarshalJSON(v)
	return string(s)
}

// str checks a required, non-nullable CharField against the snippet's value. An empty
// value is refused (DRF's "may not be blank") unless the snippet's is empty too.
func (c *modChecks) str(field, want string) {
	v, ok := c.value(field, false)
	if !ok {
		return
	}
	got := charText(v)
	switch {
	case got == "" && want != "":
		c.fail(field, "This field may not be blank.")
	case got != want:
		c.disagree(field, got, want)
	}
}

// nstr checks a required, nullable CharField against the snippet's value (nil: the
// snippet does not say).
func (c *modChecks) nstr(field string, want *string) {
	v, ok := c.value(field, true)
	if !ok {
		return
	}
	if v == nil {
		if want != nil {
			c.disagree(field, nil, *want)
		}
		return
	}
	got := charText(v)
	switch {
	case got == "":
		c.fail(field, "This field may not be blank.")
	case want == nil:
		c.disagree(field, got, nil)
	case got != *want:
		c.disagree(field, got, *want)
	}
}

// jsonField checks a JSONField against the snippet's value. Values are compared as JSON,
// with null, [] and {} (at any depth, as map members too) all meaning "nothing".
func (c *modChecks) jsonField(field string, nullable bool, want any) {
	v, ok := c.value(field, nullable)
	if !ok {
		return
	}
	var got any
	if v != nil {
		json.Unmarshal(v, &got)
	}
	b, _ := json.Marshal(want)
	var w any
	json.Unmarshal(b, &w)
	if !reflect.DeepEqual(emptyless(got), emptyless(w)) {
		c.disagree(field, got, w)
	}
}

// emptyless drops empty containers (and map members holding nothing) from a decoded
// JSON value; a value that holds nothing becomes nil.
func emptyless(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e = emptyless(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = emptyless(e)
		}
		return out
	}
	return v
}

func (c *modChecks) disagree(field string, got, want any) {
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	c.fail(field, "%s does not match the snippet, which has %s.", g, w)
}

// readRpmModule reads and checks a modular create body: the snippet must be one
// document of the operation's kind, every required field present and agreeing with
// it, the packages and the repository must exist.
func (p *Plugin) readRpmModule(r *http.Request, k rpmModuleKind) (RpmModuleArgs, *meta.Repository, error) {
	in := k.body()
	raw, err := rest.ReadBody(r, in, nil)
	if err == nil {
		err = rest.Decode(raw, in)
	}
	if err != nil {
		return RpmModuleArgs{}, nil, err
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	c := &modChecks{raw: raw, form: ct != "" && ct != "application/json", fe: rest.FieldErrors{}}
	var a RpmModuleArgs
	if v, ok := c.value("snippet", false); ok {
		a.Snippet = charText(v)
	}
	var doc modulemd.Document
	if a.Snippet != "" {
		doc, err = parseModuleSnippet(a.Snippet, k.doc)
		if err != nil {
			c.fail("snippet", "%v", err)
		}
	} else if c.fe["snippet"] == nil {
		c.fail("snippet", "This field may not be blank.")
	}
	check := doc.Type != "" // the fields are compared only with a good snippet
	var repository *string
	var labels rest.LabelsIn
	var overwrite *bool
	switch in := in.(type) {
	case *rpmModulemdIn:
		repository, labels, overwrite = in.Repository, in.PulpLabels, in.Overwrite
		if check {
			m := doc.Module
			c.str("name", m.Name)
			c.str("stream", m.Stream)
			c.str("version", strconv.FormatUint(m.Version, 10))
			c.str("context", m.Context)
			c.str("arch", m.Arch)
			c.str("description", m.Description)
			c.jsonField("artifacts", true, m.Artifacts)
			c.jsonField("dependencies", true, m.Dependencies)
			c.jsonField("profiles", true, m.Profiles)
			if v, ok := raw["static_context"]; ok {
				want := m.StaticContext != nil && *m.StaticContext
				if string(v) == "null" {
					c.fail("static_context", "This field may not be null.")
				} else if in.StaticContext != want {
					c.disagree("static_context", in.StaticContext, want)
				}
			}
		} else {
			c.present("name", "stream", "version", "context", "arch", "description", "artifacts", "dependencies", "profiles")
		}
		a.Packages = p.modulePackages(r.Context(), c, in.Packages)
	case *rpmModulemdDefaultsIn:
		repository, labels, overwrite = in.Repository, in.PulpLabels, in.Overwrite
		if check {
			d := doc.Defaults
			c.str("module", d.Module)
			c.str("stream", d.Stream)
			c.jsonField("profiles", false, d.Profiles)
		} else {
			c.present("module", "stream", "profiles")
		}
	case *rpmModulemdObsoleteIn:
		repository, labels, overwrite = in.Repository, in.PulpLabels, in.Overwrite
		if check {
			o := doc.Obsolete
			c.str("modified", o.Modified)
			c.str("module_name", o.ModuleName)
			c.str("module_stream", o.ModuleStream)
			c.str("message", o.Message)
			c.flag("override_previous", o.OverridePrevious)
			c.nstr("module_context", o.ModuleContext)
			c.nstr("eol_date", o.EOLDate)
			c.nstr("obsoleted_by_module_name", o.ObsoletedByModuleName)
			c.nstr("obsoleted_by_module_stream", o.ObsoletedByModuleStream)
		} else {
			c.present("modified", "module_name", "module_stream", "message", "override_previous", "module_context",
				"eol_date", "obsoleted_by_module_name", "obsoleted_by_module_stream")
		}
	}
	var repo *meta.Repository
	if repository != nil {
		var err error
		if repo, err = p.core.Env().Repository(r.Context(), "repository", *repository, RepoType); err != nil {
			c.fe["repository"] = err.(rest.FieldErrors)["repository"]
		}
	}
	if len(c.fe) > 0 {
		return a, nil, c.fe
	}
	if a.Labels, err = rest.SetLabels(labels); err != nil {
		return a, nil, err
	}
	if repo != nil {
		a.Repository = repo.PulpID
	}
	a.NoOverwrite = overwrite != nil && !*overwrite
	return a, repo, nil
}

// present records the required fields that are missing (when the snippet is bad and
// nothing can be compared).
func (c *modChecks) present(fields ...string) {
	for _, f := range fields {
		if _, ok := c.raw[f]; !ok {
			c.fail(f, "This field is required.")
		}
	}
}

// flag checks override_previous (a nullable CharField holding "True" or "False" as
// Pulp renders it) against the snippet's data.reset.
func (c *modChecks) flag(field string, want *modulemd.Flag) {
	v, ok := c.value(field, true)
	if !ok {
		return
	}
	var wantText *string
	if want != nil {
		s := "False"
		if *want {
			s = "True"
		}
		wantText = &s
	}
	if v == nil {
		if want != nil {
			c.disagree(field, nil, *wantText)
		}
		return
	}
	got := charText(v)
	switch {
	case got == "":
		c.fail(field, "This field may not be blank.")
	case want == nil:
		c.disagree(field, got, nil)
	case !strings.EqualFold(got, *wantText):
		c.disagree(field, got, *wantText)
	}
}

// modulePackages checks a modulemd's package hrefs (each must name a stored rpm
// package) and returns them in canonical form, without repeats; never nil.
func (p *Plugin) modulePackages(ctx context.Context, c *modChecks, hrefs []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, h := range hrefs {
		id, err := rest.HrefOf("packages", h, "content/rpm/packages/")
		if err != nil {
			c.fail("packages", "%s", err.(rest.FieldErrors)["packages"][0])
			continue
		}
		u, err := meta.ContentByPulpID(ctx, p.db, id)
		if err != nil || u.Type != PackageType {
			c.fail("packages", "Invalid hyperlink - Object does not exist: %q.", h)
			continue
		}
		if href := href.Content(segmentOf(PackageType), id); !seen[href] {
			seen[href] = true
			out = append(out, href)
		}
	}
	return out
}

// parseModuleSnippet parses a snippet sent to the API: exactly one document, of the
// wanted type.
func parseModuleSnippet(snippet, want string) (modulemd.Document, error) {
	doc, err := modulemd.ParseSnippet("snippet", snippet)
	if err != nil {
		return doc, err
	}
	if doc.Type != want {
		return modulemd.Document{}, fmt.Errorf("the snippet is a %q document; this operation creates %q documents", doc.Type, want)
	}
	return doc, nil
}

// moduleCreator is the general_create task of a modular kind.
func (p *Plugin) moduleCreator(k rpmModuleKind) rest.Creator {
	return func(ctx context.Context, r *task.Run, body json.RawMessage) error {
		var a RpmModuleArgs
		if err := json.Unmarshal(body, &a); err != nil {
			return err
		}
		return p.core.CreateUnit(ctx, r, "", nil, a.Repository, !a.NoOverwrite, func() (meta.Content, error) {
			doc, err := parseModuleSnippet(a.Snippet, k.doc)
			if err != nil {
				return meta.Content{}, err
			}
			if doc.Module != nil {
				for _, h := range a.Packages {
					hp, ok := href.Parse(h)
					if !ok {
						return meta.Content{}, fmt.Errorf("package %s: not a package href", h)
					}
					if _, err := meta.ContentByPulpID(ctx, p.db, hp.ID); err != nil {
						return meta.Content{}, fmt.Errorf("package %s: %w", h, err)
					}
				}
				doc.Module.Packages = a.Packages
				if doc.Module.Packages == nil {
					doc.Module.Packages = []string{}
				}
			}
			unit, err := DocumentUnit(doc)
			if err != nil {
				return meta.Content{}, err
			}
			return StoreUnit(ctx, p.db, unit, a.Labels)
		})
	}
}
