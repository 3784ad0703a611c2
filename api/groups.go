package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"unicode/utf8"

	"pith/api/rest"
	"pith/meta"
)

// Groups of users (/groups/) and their members (/groups/{id}/users/).

type groupResponse struct {
	Name     string `json:"name" openapi:"required,maxLength=150"`
	PulpHref string `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn      string `json:"prn" openapi:"readOnly"`
	ID       int64  `json:"id" openapi:"readOnly"`
}

type groupIn struct {
	Name string `json:"name" openapi:"required,minLength=1,maxLength=150"`
}

type groupUserResponse struct {
	Username string `json:"username" openapi:"required,maxLength=150"`
	PulpHref string `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn      string `json:"prn" openapi:"readOnly"`
}

type groupUserIn struct {
	Username string `json:"username" openapi:"required,minLength=1,maxLength=150"`
}

func renderUserGroup(g meta.Group) groupResponse {
	return groupResponse{Name: g.Name, PulpHref: groupHref(g.ID), Prn: groupPRN(g.ID), ID: g.ID}
}

func groupListSpec() rest.ListSpec {
	fs := []rest.Filter{
		{Name: "id", Col: "g.id", Type: rest.Int, Lookups: []string{"exact", "in"}},
		{Name: "name", Col: "g.name", Lookups: []string{"exact", "contains", "icontains", "iexact", "in"}},
	}
	fs = append(fs, numberedIdentity("g.id", "groups/", "core.group")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("g", map[string]string{"id": "id", "name": "name"})}
}

func (s *Server) groupsList() rest.HandlerFunc {
	return lister(s, groupListSpec(), s.scope(scoping{viewset: "groups", id: "CAST(g.id AS TEXT)"}, nil), meta.ListGroups,
		each(func(g meta.Group) any { return renderUserGroup(g) }))
}

func (s *Server) groupByPath(r *http.Request) (meta.Group, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return meta.Group{}, rest.ErrNotFound
	}
	return meta.GroupByID(r.Context(), s.db, id)
}

func (s *Server) groupsRead(w http.ResponseWriter, r *http.Request) error {
	g, err := s.groupByPath(r)
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderUserGroup(g))
}

func readGroupName(r *http.Request) (string, error) {
	var in groupIn
	raw, err := rest.DecodeBody(r, &in)
	if err != nil {
		return "", err
	}
	if err := rest.Require(raw, "name"); err != nil {
		return "", err
	}
	if utf8.RuneCountInString(in.Name) > 150 {
		return "", rest.BadField("name", "Ensure this field has no more than 150 characters.")
	}
	return in.Name, nil
}

func (s *Server) groupsCreate(w http.ResponseWriter, r *http.Request) error {
	name, err := readGroupName(r)
	if err != nil {
		return err
	}
	g, err := meta.CreateGroup(r.Context(), s.db, name)
	if errors.Is(err, meta.ErrConflict) {
		return rest.BadField("name", "This field must be unique.")
	}
	if err != nil {
		return err
	}
	if err := s.created(r.Context(), "groups", meta.Object{Type: "core.group", ID: strconv.FormatInt(g.ID, 10)}); err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusCreated, renderUserGroup(g))
}

func (s *Server) groupsUpdate(w http.ResponseWriter, r *http.Request) error {
	g, err := s.groupByPath(r)
	if err != nil {
		return err
	}
	name, err := readGroupName(r)
	if err != nil {
		return err
	}
	if err := meta.RenameGroup(r.Context(), s.db, g.ID, name); errors.Is(err, meta.ErrConflict) {
		return rest.BadField("name", "This field must be unique.")
	} else if err != nil {
		return err
	}
	g.Name = name
	return rest.WriteOne(w, r, http.StatusOK, renderUserGroup(g))
}

func (s *Server) groupsPatch(w http.ResponseWriter, r *http.Request) error {
	g, err := s.groupByPath(r)
	if err != nil {
		return err
	}
	in := groupIn{Name: g.Name}
	if _, err := rest.DecodeBody(r, &in); err != nil {
		return err
	}
	if in.Name != g.Name {
		if err := meta.RenameGroup(r.Context(), s.db, g.ID, in.Name); errors.Is(err, meta.ErrConflict) {
			return rest.BadField("name", "This field must be unique.")
		} else if err != nil {
			return err
		}
	}
	g.Name = in.Name
	return rest.WriteOne(w, r, http.StatusOK, renderUserGroup(g))
}

func (s *Server) groupsDelete(w http.ResponseWriter, r *http.Request) error {
	g, err := s.groupByPath(r)
	if err != nil {
		return err
	}
	if err := meta.DeleteGroup(r.Context(), s.db, g.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func renderGroupUser(u meta.User) groupUserResponse {
	return groupUserResponse{Username: u.Username, PulpHref: userHref(u.ID), Prn: userPRN(u.ID)}
}

func (s *Server) groupUsersList(w http.ResponseWriter, r *http.Request) error {
	g, err := s.groupByPath(r)
	if err != nil {
		return err
	}
	return lister(s, rest.ListSpec{}, nil, func(ctx context.Context, q meta.Querier, l meta.List) ([]meta.User, int64, error) {
		return meta.ListGroupUsers(ctx, q, g.ID, l)
	}, each(func(u meta.User) any { return renderGroupUser(u) }))(w, r)
}

func (s *Server) groupUsersCreate(w http.ResponseWriter, r *http.Request) error {
	g, err := s.groupByPath(r)
	if err != nil {
		return err
	}
	var in groupUserIn
	raw, err := rest.DecodeBody(r, &in)
	if err != nil {
		return err
	}
	if err := rest.Require(raw, "username"); err != nil {
		return err
	}
	u, err := meta.UserByName(r.Context(), s.db, in.Username)
	if err != nil {
		return rest.BadField("username", "User with username %s does not exist.", in.Username)
	}
	if err := meta.AddGroupUser(r.Context(), s.db, g.ID, u.ID); err != nil && !errors.Is(err, meta.ErrConflict) {
		return err
	}
	return rest.WriteOne(w, r, http.StatusCreated, renderGroupUser(u))
}

func (s *Server) groupUsersDelete(w http.ResponseWriter, r *http.Request) error {
	g, err := s.groupByPath(r)
	if err != nil {
		return err
	}
	uid, err := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	if err != nil {
		return rest.ErrNotFound
	}
	if err := meta.RemoveGroupUser(r.Context(), s.db, g.ID, uid); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
