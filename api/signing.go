package api

import (
	"net/http"

	"pith/api/href"
	"pith/api/rest"
	"pith/meta"
)

type signingServiceResponse struct {
	PulpHref          string `json:"pulp_href" openapi:"format=uri,readOnly"`
	Prn               string `json:"prn" openapi:"readOnly"`
	PulpCreated       string `json:"pulp_created" openapi:"format=date-time,readOnly"`
	PulpLastUpdated   string `json:"pulp_last_updated" openapi:"format=date-time,readOnly"`
	Name              string `json:"name"`
	PublicKey         string `json:"public_key"`
	PubkeyFingerprint string `json:"pubkey_fingerprint"`
	Script            string `json:"script"`
}

func signingListSpec() rest.ListSpec {
	fs := []rest.Filter{{Name: "name", Col: "s.name", Lookups: []string{"exact"}}}
	fs = append(fs, rest.IdentityFilters("s.pulp_id")...)
	return rest.ListSpec{Filters: fs, Ordering: rest.Ordering("s", map[string]string{"pk": "id", "pulp_id": "pulp_id", "pulp_created": "created",
		"pulp_last_updated": "updated", "name": "name", "public_key": "public_key", "pubkey_fingerprint": "fingerprint", "script": "script"})}
}

func renderSigning(x meta.SigningService) signingServiceResponse {
	return signingServiceResponse{PulpHref: href.SigningService(x.PulpID), Prn: href.PRN("core.signingservice", x.PulpID), PulpCreated: rest.Time(x.Created),
		PulpLastUpdated: rest.Time(x.Updated), Name: x.Name, PublicKey: x.PublicKey, PubkeyFingerprint: x.Fingerprint, Script: x.Script}
}

func (s *Server) signingList() rest.HandlerFunc {
	return lister(s, signingListSpec(), nil, meta.ListSigningServices, each(func(x meta.SigningService) any { return renderSigning(x) }))
}

func (s *Server) signingRead(w http.ResponseWriter, r *http.Request) error {
	x, err := meta.SigningServiceByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return rest.WriteOne(w, r, http.StatusOK, renderSigning(x))
}
