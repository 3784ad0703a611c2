// Package download fetches files for remotes the way Pulp's downloaders do: one HTTP
// client per remote (TLS CA and client certificate, proxy with credentials, headers,
// basic auth, keep-alives), at most download_concurrency requests in flight (or fewer,
// when adaptive), an optional requests-per-second limit, and retries with exponential
// backoff and jitter on network errors, timeouts, 429 and 5xx (honouring Retry-After),
// truncated bodies and size or sha256 mismatches. Other 4xx fail at once.
//
// Invariants: size and sha256 are verified while the bytes stream, so a download that
// does not verify never reports success; a failed attempt's sink is aborted and the
// next attempt gets a fresh one; a concurrency slot is held for the whole of an attempt
// (until the body is closed for Get and Open) and released during backoff; bodies are
// never decompressed, so digests are of the bytes the server stores. Every failure is
// an *Error naming the URL (its credentials redacted), the HTTP status if any, and what
// was wrong. A remote's custom headers and basic auth go only to the host of its URL:
// a request to, or a redirect to, another host goes without them. A Galaxy token
// (pulp_ansible's) goes the same way, in place of basic auth: as "Token <token>", or as
// a bearer token obtained from an SSO server's refresh-token grant and obtained again
// when a request is answered 401 (the request is then sent once more, outside the retry
// policy).
//
// A 429 or 503 with Retry-After pauses every new request of the downloader until then,
// not only the one retrying (a retry whose own backoff already covered the pause goes
// ahead). With Config.Adaptive, download_concurrency (default 32) is only the bound: the
// limit starts at 2 and a controller measures the body bytes received per window of
// 500 ms, judging only windows in which a request had to wait for a slot and no pause
// overlapped. In slow start it doubles the limit while a window's throughput beats the
// previous one by more than 10%; when doubling stops paying it steps back to the last
// limit that paid and trims it by quarters while throughput stays within 10%, then holds
// the knee. After 10 windows held it probes a quarter higher and keeps any step that
// gains more than 10%. A 429 or 503 cuts the limit once per overload (answers to
// requests admitted before the last cut do not cut it again): to one fewer than were in
// flight when that is more than half the limit, else by half, never below 1; and for a
// minute no probe goes back to the limit that was refused.
package download
