// Package auth names the user an HTTP request runs as, for the API and for the content
// app (whose RBAC content guards need it): HTTP Basic against the users in meta
// (PBKDF2-SHA256 in Django's format; the key derivation runs for every failed attempt,
// failures are throttled per user and per client address, and a password verified
// before is remembered only as a keyed digest), a login session (Django's cookies, with
// its CSRF check on unsafe methods), the user a trusted reverse proxy names in a header,
// and the user a verified TLS client certificate names. Wrong credentials are an *Error,
// never a fall back to anonymous; no credentials at all is the anonymous subject.
package auth
