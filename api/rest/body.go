package rest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// MaxBody bounds JSON and urlencoded bodies, and all the fields of a multipart body
// together (Django's DATA_UPLOAD_MAX_MEMORY_SIZE, 2.5 MiB by default in Pulp); file
// parts stream and are not bounded here.
const MaxBody = 8 << 20

// MaxFields bounds the fields of a form body, and the parts of a multipart one (Django's
// DATA_UPLOAD_MAX_NUMBER_FIELDS).
const MaxFields = 1000

func tooLarge() error {
	return Status(http.StatusRequestEntityTooLarge, "The request body exceeds %d bytes (a multipart body's files aside).", MaxBody)
}

func tooManyFields() error {
	return Status(http.StatusBadRequest, "The request body has more than %d fields.", MaxFields)
}

// readAll reads a body of at most MaxBody bytes.
func readAll(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxBody+1))
	if err != nil {
		return nil, Status(http.StatusBadRequest, "read request body: %v", err)
	}
	if len(b) > MaxBody {
		return nil, tooLarge()
	}
	return b, nil
}

// FileFunc receives a file part of a multipart body as it streams.
type FileFunc func(field, filename string, body io.Reader) error

// ReadBody reads a JSON, urlencoded or multipart body into raw JSON values by field
// name. Form values are converted to JSON according to the kinds of target's fields
// (the pulp CLI sends nested values as JSON strings in forms). File parts go to onFile;
// a file part with onFile nil is an error naming the field.
//
// PRNs in the body become hrefs (Pulp accepts either wherever it takes an href). An
// access decision waiting for the body (WithGate) is taken before the body is returned.
func ReadBody(r *http.Request, target any, onFile FileFunc) (map[string]json.RawMessage, error) {
	raw, err := readBody(r, target, onFile)
	if err != nil {
		return raw, err
	}
	resolveRaw(r.Context(), raw)
	if gate := gateOf(r.Context()); gate != nil {
		if err := gate(raw); err != nil {
			return nil, err
		}
	}
	return raw, nil
}

func readBody(r *http.Request, target any, onFile FileFunc) (map[string]json.RawMessage, error) {
	raw := map[string]json.RawMessage{}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "", "application/json":
		b, err := readAll(r.Body)
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return raw, nil
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, Status(http.StatusBadRequest, "JSON parse error - %v", err)
		}
		return raw, nil
	case "application/x-www-form-urlencoded":
		b, err := readAll(r.Body)
		if err != nil {
			return nil, err
		}
		if bytes.Count(b, []byte("&")) >= MaxFields {
			return nil, tooManyFields()
		}
		vals, err := url.ParseQuery(string(b))
		if err != nil {
			return nil, Status(http.StatusBadRequest, "malformed form body: %v", err)
		}
		kinds := fieldKinds(target)
		for k, vs := range vals {
			v, err := formValue(k, vs, kinds)
			if err != nil {
				return nil, err
			}
			raw[k] = v
		}
		return raw, nil
	case "multipart/form-data":
		mr, err := r.MultipartReader()
		if err != nil {
			return nil, Status(http.StatusBadRequest, "malformed multipart body: %v", err)
		}
		kinds := fieldKinds(target)
		vals := map[string][]string{}
		budget := MaxBody // what the fields, their names and the files' names may hold
		for n := 0; ; n++ {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, Status(http.StatusBadRequest, "malformed multipart body: %v", err)
			}
			if n == MaxFields {
				return nil, tooManyFields()
			}
			name := p.FormName()
			if budget -= len(name) + len(p.FileName()); budget < 0 {
				return nil, tooLarge()
			}
			if p.FileName() != "" {
				if onFile == nil {
					return nil, BadField(name, "Files are not accepted here.")
				}
				body := &clientReader{r: p}
				var file io.Reader = body
				if strings.EqualFold(strings.TrimSpace(p.Header.Get("Content-Transfer-Encoding")), "base64") {
					// ansible-galaxy sends its artifact in base64, which Django's parser
					// decodes and mime/multipart does not (it decodes quoted-printable only);
					// the decoder skips the line breaks between 76-column lines.
					file = base64.NewDecoder(base64.StdEncoding, body)
				}
				if err := onFile(name, p.FileName(), file); err != nil {
					if body.err != nil {
						return nil, Status(http.StatusBadRequest, "read multipart file %q: %v", name, body.err)
					}
					return nil, err
				}
				raw[name], _ = json.Marshal(p.FileName())
				continue
			}
			b, err := io.ReadAll(io.LimitReader(p, int64(budget)+1))
			if err != nil {
				return nil, Status(http.StatusBadRequest, "read multipart field %q: %v", name, err)
			}
			if budget -= len(b); budget < 0 {
				return nil, tooLarge()
			}
			vals[name] = append(vals[name], string(b))
		}
		for k, vs := range vals {
			v, err := formValue(k, vs, kinds)
			if err != nil {
				return nil, err
			}
			raw[k] = v
		}
		return raw, nil
	default:
		return nil, Status(http.StatusUnsupportedMediaType, "Unsupported media type %q in request.", ct)
	}
}

// clientReader remembers the error reading the client's body gave, so that a failure
// it caused (a truncated body) is answered as the client's, not as the server's.
type clientReader struct {
	r   io.Reader
	err error
}

func (c *clientReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// Fields are the JSON field names of a body shape, sorted.
func Fields(target any) []string {
	var out []string
	for name := range fieldKinds(target) {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// fieldKinds maps the JSON field names of a struct to their kinds. A field tagged
// `openapi:"omit"` hides the one of that name an embedded shape declares (ansible's
// distributions have no publication or checkpoint): the body has no such field.
func fieldKinds(target any) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	if target == nil {
		return out
	}
	t := reflect.TypeOf(target)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return out
	}
	var omitted []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			// An embedded struct's fields are the body's own, as for encoding/json.
			for k, v := range fieldKinds(reflect.New(f.Type).Interface()) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		if f.Tag.Get("openapi") == "omit" {
			omitted = append(omitted, name)
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		out[name] = ft
	}
	for _, name := range omitted {
		delete(out, name)
	}
	return out
}

func formValue(name string, vs []string, kinds map[string]reflect.Type) (json.RawMessage, error) {
	t, ok := kinds[name]
	if !ok {
		// Unknown: keep as a string; strict decoding reports it by name.
		b, _ := json.Marshal(vs[len(vs)-1])
		return b, nil
	}
	v := vs[len(vs)-1]
	switch t.Kind() {
	case reflect.String:
		b, _ := json.Marshal(v)
		return b, nil
	case reflect.Bool:
		switch strings.ToLower(v) {
		case "true", "1", "on", "yes":
			return json.RawMessage("true"), nil
		case "false", "0", "off", "no", "":
			return json.RawMessage("false"), nil
		}
		return nil, BadField(name, "Must be a valid boolean.")
	case reflect.Int, reflect.Int64, reflect.Int32:
		if v == "" || v == "null" {
			return json.RawMessage("null"), nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, BadField(name, "A valid integer is required.")
		}
		// Spelled again: "007" and "+7" parse but are not JSON.
		return strconv.AppendInt(nil, n, 10), nil
	case reflect.Float64, reflect.Float32:
		if v == "" || v == "null" {
			return json.RawMessage("null"), nil
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, BadField(name, "A valid number is required.")
		}
		// Spelled again: "00", "0x1p-2" and "+1" parse but are not JSON; NaN and Inf
		// have no JSON spelling at all.
		b, err := json.Marshal(f)
		if err != nil {
			return nil, BadField(name, "A valid number is required.")
		}
		return b, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String && len(vs) > 1 {
			b, _ := json.Marshal(vs)
			return b, nil
		}
		fallthrough
	default:
		if !json.Valid([]byte(v)) {
			return nil, BadField(name, "Value must be valid JSON.")
		}
		return json.RawMessage(v), nil
	}
}

// Decode applies raw fields onto v strictly: unknown fields and mistyped values are a
// 400 naming the field. Fields absent from raw keep v's current values, which is what a
// partial update needs.
func Decode(raw map[string]json.RawMessage, v any) error {
	known := fieldKinds(v)
	var unknown []string
	for k := range raw {
		if _, ok := known[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		fe := FieldErrors{}
		for _, k := range unknown {
			fe[k] = []string{"Unexpected field."}
		}
		return fe
	}
	for k, val := range raw {
		b, _ := json.Marshal(map[string]json.RawMessage{k: val})
		if err := json.Unmarshal(b, v); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return BadField(k, "Incorrect type. Expected %s, got %s.", jsonKind(te.Type), te.Value)
			}
			return BadField(k, "Invalid value: %v", err)
		}
	}
	return nil
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "list"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}

// Has reports whether a field was sent.
func Has(raw map[string]json.RawMessage, name string) bool {
	_, ok := raw[name]
	return ok
}

// Require reports missing required fields.
func Require(raw map[string]json.RawMessage, names ...string) error {
	fe := FieldErrors{}
	for _, n := range names {
		v, ok := raw[n]
		if !ok || string(v) == "null" || string(v) == `""` {
			fe[n] = []string{"This field is required."}
		}
	}
	if len(fe) > 0 {
		return fe
	}
	return nil
}

// Raw is v's JSON as raw members, the form a task keeps a body in.
func Raw(v any) map[string]json.RawMessage {
	b, _ := json.Marshal(v)
	m := map[string]json.RawMessage{}
	json.Unmarshal(b, &m)
	return m
}

// DecodeBody reads a request body into v strictly (ReadBody, then Decode), with no file
// parts accepted; it returns the raw members so callers can tell what was sent.
func DecodeBody(r *http.Request, v any) (map[string]json.RawMessage, error) {
	raw, err := ReadBody(r, v, nil)
	if err != nil {
		return nil, err
	}
	return raw, Decode(raw, v)
}
