// Package download fetches files for remotes the way Pulp's downloaders do: one HTTP
// client per remote (TLS CA and client certificate, proxy, headers, credentials), at most
// download_concurrency requests at a time, a rate limit, retries with exponential backoff
// on network errors, 429 and 5xx (honouring Retry-After), and size and sha256 verified
// while the bytes stream. Errors name the URL and what was wrong.
package download
