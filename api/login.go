package api

import (
	"net/http"
	"time"

	"pith/api/rest"
	"pith/meta"
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
	sub := rest.SubjectOf(r.Context())
	key, csrf := randomToken(), randomToken()
	expires := time.Now().Add(sessionAge)
	if err := meta.CreateSession(r.Context(), s.db, hashKey(key), sub.ID, csrf, expires.UnixMicro()); err != nil {
		return err
	}
	// Expired sessions go as new ones come: the table holds only live ones and those
	// since the last login.
	if err := meta.DeleteExpiredSessions(r.Context(), s.db); err != nil {
		s.cfg.Logger.Warn("delete expired sessions", "err", err)
	}
	secure := r.TLS != nil
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: key, Path: "/", Expires: expires, HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: csrf, Path: "/", Expires: expires, Secure: secure, SameSite: http.SameSiteLaxMode})
	rest.WriteJSON(w, http.StatusCreated, loginOf(r))
	return nil
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(sessionCookie); err == nil {
		if err := meta.DeleteSession(r.Context(), s.db, hashKey(c.Value)); err != nil {
			return err
		}
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
	return nil
}
