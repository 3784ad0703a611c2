package edge

import (
	"net/http"
	"unicode"
	"unicode/utf8"
)

// What of a verified client certificate names its user (--tls-client-cert-user).
const (
	CertUserCN    = "cn"    // the subject's common name
	CertUserEmail = "email" // the first email address among the subject alternative names
	CertUserNone  = "none"  // client certificates name no user
)

// maxUserName bounds a name taken from a certificate: Pulp's (Django's) user names have
// at most 150 characters.
const maxUserName = 150

// CertUser returns the function that names the user of a request's verified client
// certificate, by field (CertUserCN, CertUserEmail or CertUserNone). It answers ok false
// for a request without a certificate that verified against the client CAs (plain HTTP,
// no certificate sent, no --tls-client-ca), with field CertUserNone or an unknown field,
// and when the field is missing from the certificate, empty, longer than 150 bytes, or
// holds control characters or invalid UTF-8.
func CertUser(field string) func(*http.Request) (string, bool) {
	return func(r *http.Request) (string, bool) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
			return "", false
		}
		leaf := r.TLS.VerifiedChains[0][0]
		var name string
		switch field {
		case CertUserCN:
			name = leaf.Subject.CommonName
		case CertUserEmail:
			if len(leaf.EmailAddresses) > 0 {
				name = leaf.EmailAddresses[0]
			}
		}
		if name == "" || len(name) > maxUserName || !utf8.ValidString(name) {
			return "", false
		}
		for _, c := range name {
			if unicode.IsControl(c) {
				return "", false
			}
		}
		return name, true
	}
}
