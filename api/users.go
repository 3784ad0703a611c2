package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"pith/api/href"
	"pith/api/rest"
	"pith/auth"
	"pith/meta"
)

// Users: Pulp's /users/ (Django's auth users), for administrators only, as Pulp's
// default (no access policy of their own).

type userGroupResponse struct {
	Name     string `json:"name" openapi:"maxLength=150"`
	PulpHref string `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn      string `json:"prn" openapi:"readOnly"`
}

type hiddenField struct {
	Name  string `json:"name"`
	IsSet bool   `json:"is_set"`
}

type userResponse struct {
	PulpHref     string              `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn          string              `json:"prn" openapi:"readOnly"`
	ID           int64               `json:"id" openapi:"readOnly"`
	Username     string              `json:"username" openapi:"required,maxLength=150"`
	FirstName    string              `json:"first_name" openapi:"optional,maxLength=150"`
	LastName     string              `json:"last_name" openapi:"optional,maxLength=150"`
	Email        string              `json:"email" openapi:"optional,format=email"`
	IsStaff      bool                `json:"is_staff" openapi:"default=false"`
	IsActive     bool                `json:"is_active" openapi:"default=true"`
	DateJoined   string              `json:"date_joined" openapi:"format=date-time,readOnly"`
	Groups       []userGroupResponse `json:"groups" openapi:"readOnly"`
	HiddenFields []hiddenField       `json:"hidden_fields" openapi:"readOnly"`
}

type userIn struct {
	Username  string  `json:"username" openapi:"required,minLength=1,maxLength=150"`
	Password  *string `json:"password" openapi:"writeOnly,nullable,minLength=1"`
	FirstName *string `json:"first_name" openapi:"maxLength=150"`
	LastName  *string `json:"last_name" openapi:"maxLength=150"`
	Email     *string `json:"email" openapi:"format=email"`
	IsStaff   *bool   `json:"is_staff" openapi:"default=false"`
	IsActive  *bool   `json:"is_active" openapi:"default=true"`
}

func userHref(id int64) string  { return href.Root + "users/" + strconv.FormatInt(id, 10) + "/" }
func groupHref(id int64) string { return href.Root + "groups/" + strconv.FormatInt(id, 10) + "/" }
func userPRN(id int64) string   { return href.PRN("auth.user", strconv.FormatInt(id, 10)) }
func groupPRN(id int64) string  { return href.PRN("core.group", strconv.FormatInt(id, 10)) }

func renderUser(u meta.User, groups []meta.Group) userResponse {
	gs := make([]userGroupResponse, len(groups))
	for i, g := range groups {
		gs[i] = userGroupResponse{Name: g.Name, PulpHref: groupHref(g.ID), Prn: groupPRN(g.ID)}
	}
	return userResponse{PulpHref: userHref(u.ID), Prn: userPRN(u.ID), ID: u.ID, Username: u.Username, FirstName: u.FirstName,
		LastName: u.LastName, Email: u.Email, IsStaff: u.Staff, IsActive: u.Active, DateJoined: rest.Time(u.Created), Groups: gs,
		HiddenFields: []hiddenField{{Name: "password", IsSet: u.PasswordHash != ""}}}
}

func userListSpec() rest.ListSpec {
	text := []string{"exact", "contains", "icontains", "iexact", "in"}
	fs := []rest.Filter{
		{Name: "username", Col: "u.username", Lookups: text},
		{Name: "first_name", Col: "u.first_name", Lookups: text},
		{Name: "last_name", Col: "u.last_name", Lookups: text},
		{Name: "email", Col: "u.email", Lookups: text},
		{Name: "is_active", Col: "u.is_active", Type: rest.Bool, Lookups: []string{"exact"}},
		{Name: "is_staff", Col: "u.is_staff", Type: rest.Bool, Lookups: []string{"exact"}},
	}
	fs = append(fs, numberedIdentity("u.id", "users/", "auth.user")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("u", map[string]string{"id": "id", "username": "username",
		"first_name": "first_name", "last_name": "last_name", "email": "email", "is_active": "is_active", "is_staff": "is_staff",
		"date_joined": "created", "password": "password_hash", "is_superuser": "is_superuser", "last_login": "created"})}
}

// numberedIdentity are pulp_id__in, pulp_href__in and prn__in of a resource Pulp
// numbers (users, groups): their ids, /pulp/api/v3/<collection><id>/ or prn:<model>:<id>.
func numberedIdentity(col, collection, model string) []rest.Filter {
	ids := func(id func(string) string) func(l *meta.List, d meta.Dialect, v string) error {
		return func(l *meta.List, d meta.Dialect, v string) error {
			var args []any
			for _, p := range rest.SplitComma([]string{v}) {
				if n, err := strconv.ParseInt(id(p), 10, 64); err == nil {
					args = append(args, n)
				}
			}
			if len(args) == 0 {
				l.And("1 = 0")
				return nil
			}
			l.And(col+" IN "+rest.Placeholders(len(args)), args...)
			return nil
		}
	}
	return []rest.Filter{
		{Name: "pulp_id__in", Type: rest.Custom, Lookups: []string{"exact"}, Apply: ids(func(s string) string { return s })},
		{Name: "pulp_href__in", Type: rest.Custom, Lookups: []string{"exact"}, Apply: ids(func(s string) string {
			return strings.TrimSuffix(strings.TrimPrefix(s, href.Root+collection), "/")
		})},
		{Name: "prn__in", Type: rest.Custom, Lookups: []string{"exact"}, Apply: ids(func(s string) string {
			return strings.TrimPrefix(s, "prn:"+model+":")
		})},
	}
}

// renderUsers shows a page of users with their groups (one query for the page).
func (s *Server) renderUsers(r *http.Request, us []meta.User) ([]any, error) {
	ids := make([]int64, len(us))
	for i, u := range us {
		ids[i] = u.ID
	}
	groups, err := meta.UserGroups(r.Context(), s.db, ids)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(us))
	for i, u := range us {
		out[i] = renderUser(u, groups[u.ID])
	}
	return out, nil
}

func (s *Server) userList() rest.HandlerFunc {
	return lister(s, userListSpec(), nil, meta.ListUsers, s.renderUsers)
}

// userByPath is the user the request's {id} names.
func (s *Server) userByPath(r *http.Request) (meta.User, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return meta.User{}, rest.ErrNotFound
	}
	return meta.UserByID(r.Context(), s.db, id)
}

func (s *Server) writeUser(w http.ResponseWriter, r *http.Request, status int, u meta.User) error {
	out, err := s.renderUsers(r, []meta.User{u})
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, status, out[0])
}

func (s *Server) userRead(w http.ResponseWriter, r *http.Request) error {
	u, err := s.userByPath(r)
	if err != nil {
		return err
	}
	return s.writeUser(w, r, http.StatusOK, u)
}

func (s *Server) userCreate(w http.ResponseWriter, r *http.Request) error {
	var in userIn
	raw, err := rest.DecodeBody(r, &in)
	if err != nil {
		return err
	}
	if err := rest.Require(raw, "username"); err != nil {
		return err
	}
	u := meta.User{Active: true}
	if err := applyUser(&u, in, raw); err != nil {
		return err
	}
	u, err = meta.CreateUser(r.Context(), s.db, u)
	if errors.Is(err, meta.ErrConflict) {
		return rest.BadField("username", "A user with that username already exists.")
	}
	if err != nil {
		return err
	}
	return s.writeUser(w, r, http.StatusCreated, u)
}

func (s *Server) userUpdate(partial bool) rest.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		u, err := s.userByPath(r)
		if err != nil {
			return err
		}
		var in userIn
		raw, err := rest.DecodeBody(r, &in)
		if err != nil {
			return err
		}
		if !partial {
			if err := rest.Require(raw, "username"); err != nil {
				return err
			}
		}
		if !rest.Has(raw, "username") {
			in.Username = u.Username
		}
		if err := applyUser(&u, in, raw); err != nil {
			return err
		}
		if err := meta.UpdateUser(r.Context(), s.db, u); errors.Is(err, meta.ErrConflict) {
			return rest.BadField("username", "A user with that username already exists.")
		} else if err != nil {
			return err
		}
		return s.writeUser(w, r, http.StatusOK, u)
	}
}

func (s *Server) userDelete(w http.ResponseWriter, r *http.Request) error {
	u, err := s.userByPath(r)
	if err != nil {
		return err
	}
	if err := meta.DeleteUser(r.Context(), s.db, u.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// applyUser validates a user body and applies it: Django's username rules and password
// validators, an email address that parses.
func applyUser(u *meta.User, in userIn, raw map[string]json.RawMessage) error {
	fe := rest.FieldErrors{}
	if msg := auth.ValidUsername(in.Username); msg != "" {
		fe["username"] = []string{msg}
	}
	u.Username = in.Username
	for _, f := range []struct {
		name string
		v    *string
		dst  *string
	}{{"first_name", in.FirstName, &u.FirstName}, {"last_name", in.LastName, &u.LastName}, {"email", in.Email, &u.Email}} {
		if f.v == nil {
			continue
		}
		if utf8.RuneCountInString(*f.v) > 150 {
			fe[f.name] = []string{"Ensure this field has no more than 150 characters."}
		}
		*f.dst = *f.v
	}
	if in.Email != nil && *in.Email != "" {
		if a, err := mail.ParseAddress(*in.Email); err != nil || a.Address != *in.Email || !strings.Contains(a.Address[strings.LastIndexByte(a.Address, '@')+1:], ".") {
			fe["email"] = []string{"Enter a valid email address."}
		}
	}
	if in.IsStaff != nil {
		u.Staff = *in.IsStaff
	}
	if in.IsActive != nil {
		u.Active = *in.IsActive
	}
	if rest.Has(raw, "password") {
		if in.Password == nil {
			u.PasswordHash = "" // null: no password login
		} else if msgs := passwordProblems(*in.Password, *u); len(msgs) > 0 {
			fe["password"] = msgs
		} else {
			h, err := meta.HashPassword(*in.Password)
			if err != nil {
				return err
			}
			u.PasswordHash = h
		}
	}
	if len(fe) > 0 {
		return fe
	}
	return nil
}

// passwordProblems applies Pulp's password validators: Django's user attribute
// similarity, minimum length (8) and numeric validators; its list of 20,000 common
// passwords is not shipped (docs/compatibility.md).
func passwordProblems(pw string, u meta.User) []string {
	var out []string
	for _, attr := range []struct{ name, value string }{{"username", u.Username}, {"first name", u.FirstName},
		{"last name", u.LastName}, {"email address", u.Email}} {
		if tooSimilar(pw, attr.value) {
			out = append(out, "The password is too similar to the "+attr.name+".")
			break
		}
	}
	if utf8.RuneCountInString(pw) < 8 {
		out = append(out, "This password is too short. It must contain at least 8 characters.")
	}
	if pw != "" && strings.Trim(pw, "0123456789") == "" {
		out = append(out, "This password is entirely numeric.")
	}
	return out
}

var nonWord = regexp.MustCompile(`[^\pL\pN_]+`)

// tooSimilar is Django's UserAttributeSimilarityValidator for one attribute: the
// password matches the attribute, or one of its words, with a quick ratio of 0.7 or
// more (shared characters, counted with their multiplicity, over both lengths), unless
// the password is at least ten times as long as a short word.
func tooSimilar(pw, attr string) bool {
	if attr == "" {
		return false
	}
	pwl, attrl := strings.ToLower(pw), strings.ToLower(attr)
	for _, part := range append(nonWord.Split(attrl, -1), attrl) {
		n, m := utf8.RuneCountInString(pwl), utf8.RuneCountInString(part)
		if m == 0 || (n >= 10*m && float64(m) < 0.7/2*float64(n)) {
			continue
		}
		counts := map[rune]int{}
		for _, r := range part {
			counts[r]++
		}
		matches := 0
		for _, r := range pwl {
			if counts[r] > 0 {
				counts[r]--
				matches++
			}
		}
		if 2*float64(matches)/float64(n+m) >= 0.7 {
			return true
		}
	}
	return false
}
