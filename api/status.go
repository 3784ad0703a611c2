package api

import (
	"net/http"
	"time"

	"pith/api/href"
	"pith/api/rest"
	"pith/meta"
	"pith/task"
)

type statusVersion struct {
	Component        string `json:"component"`
	Version          string `json:"version"`
	Package          string `json:"package"`
	Module           string `json:"module"`
	DomainCompatible bool   `json:"domain_compatible"`
}

type statusApp struct {
	PulpHref      string            `json:"pulp_href,omitempty"`
	Name          string            `json:"name"`
	LastHeartbeat string            `json:"last_heartbeat"`
	Versions      map[string]string `json:"versions"`
	CurrentTask   *string           `json:"current_task,omitempty"`
}

type statusResponse struct {
	Versions           []statusVersion   `json:"versions"`
	OnlineWorkers      []statusApp       `json:"online_workers"`
	OnlineAPIApps      []statusApp       `json:"online_api_apps"`
	OnlineContentApps  []statusApp       `json:"online_content_apps"`
	DatabaseConnection map[string]bool   `json:"database_connection"`
	RedisConnection    map[string]bool   `json:"redis_connection"`
	Storage            map[string]any    `json:"storage"`
	ContentSettings    map[string]string `json:"content_settings"`
	DomainEnabled      bool              `json:"domain_enabled"`
}

// appTTL is how recently a process must have reported to count as online.
const appTTL = 45 * time.Second

func (s *Server) versionMap() map[string]string {
	m := map[string]string{}
	for _, v := range s.versions {
		m[v.Component] = v.Version
	}
	return m
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) error {
	out := statusResponse{
		DatabaseConnection: map[string]bool{"connected": s.db.Ping(r.Context()) == nil},
		RedisConnection:    map[string]bool{"connected": s.cache != nil && s.cache(r.Context())},
		ContentSettings:    map[string]string{"content_origin": s.cfg.ContentOrigin, "content_path_prefix": "/pulp/content/"},
		OnlineWorkers:      []statusApp{},
		OnlineAPIApps:      []statusApp{},
		OnlineContentApps:  []statusApp{},
	}
	for _, v := range s.versions {
		out.Versions = append(out.Versions, statusVersion{v.Component, v.Version, v.Package, v.Module, true})
	}
	if out.DatabaseConnection["connected"] {
		since := time.Now().Add(-appTTL).UnixMicro()
		for _, kind := range []struct {
			t   string
			dst *[]statusApp
		}{{"worker", &out.OnlineWorkers}, {"api", &out.OnlineAPIApps}, {"content", &out.OnlineContentApps}} {
			apps, _, err := task.Apps(r.Context(), s.db, kind.t, since, meta.List{})
			if err != nil {
				return err
			}
			for _, a := range apps {
				sa := statusApp{Name: a.Name, LastHeartbeat: rest.Time(a.LastHeartbeat), Versions: s.versionMap()}
				if kind.t == "worker" {
					sa.PulpHref = href.Worker(a.PulpID)
					if a.CurrentTask != nil {
						h := href.Task(*a.CurrentTask)
						sa.CurrentTask = &h
					}
				}
				*kind.dst = append(*kind.dst, sa)
			}
		}
	}
	if st, ok := s.core.Store.Driver().(interface {
		Usage() (total, used, free int64, err error)
	}); ok {
		if t, u, f, err := st.Usage(); err == nil {
			out.Storage = map[string]any{"total": t, "used": u, "free": f}
		}
	}
	rest.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) docs(w http.ResponseWriter, r *http.Request) error {
	w.Header()["Content-Type"] = []string{"application/json"}
	w.Write(s.doc)
	return nil
}
