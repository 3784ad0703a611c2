// Package serve is the content app: GET and HEAD under /pulp/content/<base_path>/<path>.
//
// Invariants:
//   - No avoidable work per request: base paths resolve from an in-memory table of
//     distributions, rebuilt after Invalidate (and at least every few seconds, for
//     changes made by other processes); a path resolves with one indexed query, and the
//     answer (misses included) is kept in a bounded LRU until the next Invalidate.
//   - Files go out with sendfile, Range, ETag (the sha256), Last-Modified and
//     conditional GET.
//   - An on-demand file is fetched from its remote once, however many clients ask at
//     once: the first request streams it to its client while storing it; the others wait
//     and are served the stored blob. A file that fails verification is never stored.
//   - A superseded publication stays servable for a grace period.
//   - Nothing served can act in a browser: every answer carries nosniff and a sandboxing
//     Content-Security-Policy, and listings link names only as relative paths.
//   - A request costs no more for a longer path: paths beyond any servable one (maxPath,
//     maxSegments) are refused with 414 before any work, and base paths match with at
//     most as many lookups as the deepest base path has segments.
package serve
