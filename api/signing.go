package api

import (
	"net/http"

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

func signingHref(id string) string { return apiPath + "signing-services/" + id + "/" }

func signingListSpec() listSpec {
	fs := []filter{{name: "name", col: "s.name", lookups: []string{"exact"}}}
	fs = append(fs, identityFilters("s.pulp_id")...)
	return listSpec{filters: fs, ordering: ordering("s", map[string]string{"pk": "id", "pulp_id": "pulp_id", "pulp_created": "created",
		"pulp_last_updated": "updated", "name": "name", "public_key": "public_key", "pubkey_fingerprint": "fingerprint", "script": "script"})}
}

func renderSigning(x meta.SigningService) signingServiceResponse {
	return signingServiceResponse{PulpHref: signingHref(x.PulpID), Prn: prn("core.signingservice", x.PulpID), PulpCreated: ts(x.Created),
		PulpLastUpdated: ts(x.Updated), Name: x.Name, PublicKey: x.PublicKey, PubkeyFingerprint: x.Fingerprint, Script: x.Script}
}

func (s *Server) signingList(w http.ResponseWriter, r *http.Request) error {
	q, err := parseList(r, s.db.Dialect(), signingListSpec())
	if err != nil {
		return err
	}
	xs, total, err := meta.ListSigningServices(r.Context(), s.db, q.list)
	if err != nil {
		return err
	}
	items := make([]any, len(xs))
	for i, x := range xs {
		items[i] = renderSigning(x)
	}
	return writePage(w, r, q, total, items)
}

func (s *Server) signingRead(w http.ResponseWriter, r *http.Request) error {
	x, err := meta.SigningServiceByPulpID(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeOne(w, r, http.StatusOK, renderSigning(x))
}
