package api

import (
	"net/http"

	"pith/api/rest"
	"pith/auth"
)

// Login sessions (/login/): a caller that authenticated (with a password, say) gets a
// session cookie that authenticates its later requests, with Django's cookie names and
// CSRF check; DELETE ends the session.

type loginResponse struct {
	PulpHref string `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn      string `json:"prn" openapi:"readOnly"`
	Username string `json:"username" openapi:"readOnly"`
}

func loginOf(r *http.Request) loginResponse {
	sub := rest.SubjectOf(r.Context())
	return loginResponse{PulpHref: userHref(sub.ID), Prn: userPRN(sub.ID), Username: sub.Username}
}

func (s *Server) loginRead(w http.ResponseWriter, r *http.Request) error {
	return rest.WriteOne(w, r, http.StatusOK, loginOf(r))
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	sess, err := auth.StartSession(r.Context(), s.db, rest.SubjectOf(r.Context()).ID)
	if err != nil {
		return err
	}
	secure := r.TLS != nil
	http.SetCookie(w, &http.Cookie{Name: auth.SessionCookie, Value: sess.Key, Path: "/", Expires: sess.Expires, HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: auth.CSRFCookie, Value: sess.CSRF, Path: "/", Expires: sess.Expires, Secure: secure, SameSite: http.SameSiteLaxMode})
	rest.WriteJSON(w, http.StatusCreated, loginOf(r))
	return nil
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(auth.SessionCookie); err == nil {
		if err := auth.EndSession(r.Context(), s.db, c.Value); err != nil {
			return err
		}
	}
	http.SetCookie(w, &http.Cookie{Name: auth.SessionCookie, Value: "", Path: "/", MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
	return nil
}
