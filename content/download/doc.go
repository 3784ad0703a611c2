// Package download fetches files for remotes the way Pulp's downloaders do: one HTTP
// client per remote (TLS CA and client certificate, proxy with credentials, headers,
// basic auth, keep-alives), at most download_concurrency requests in flight, an optional
// requests-per-second limit, and retries with exponential backoff and jitter on network
// errors, timeouts, 429 and 5xx (honouring Retry-After), truncated bodies and size or
// sha256 mismatches. Other 4xx fail at once.
//
// Invariants: size and sha256 are verified while the bytes stream, so a download that
// does not verify never reports success; a failed attempt's sink is aborted and the
// next attempt gets a fresh one; a concurrency slot is held for the whole of an attempt
// (until the body is closed for Get and Open) and released during backoff; bodies are
// never decompressed, so digests are of the bytes the server stores. Every failure is
// an *Error naming the URL, the HTTP status if any, and what was wrong.
package download
